from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulations.engine.errors import ScenarioError
from simulations.services.content.scenarios import load_scenarios


class Command(BaseCommand):
    help = (
        "Validate the scenarios at a path (a negotiation's folder, a deliberation's YAML file or a folder of them) "
        "and store each as a version (idempotent: same content, same version)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("folder", help="e.g. scenarios/mercury or scenarios/deliberation")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            loaded = load_scenarios(path=options["folder"])
        except ScenarioError as exc:
            raise CommandError(str(exc)) from exc
        for version, created in loaded:
            verb = "Loaded new version" if created else "Unchanged, already stored as"
            self.stdout.write(
                f"{verb} {version.slug} v{version.version} ({version.kind}, {version.content_hash[:12]})"
            )
