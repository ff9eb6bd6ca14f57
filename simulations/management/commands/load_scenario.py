from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulations.kinds.negotiation.scenario import ScenarioError
from simulations.services.scenarios import load_scenario


class Command(BaseCommand):
    help = "Validate a scenario folder and store it as a version (idempotent: same content, same version)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("folder", help="e.g. scenarios/mercury")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            version, created = load_scenario(folder=options["folder"])
        except ScenarioError as exc:
            raise CommandError(str(exc)) from exc
        verb = "Loaded new version" if created else "Unchanged, already stored as"
        self.stdout.write(f"{verb} {version.slug} v{version.version} ({version.content_hash[:12]})")
