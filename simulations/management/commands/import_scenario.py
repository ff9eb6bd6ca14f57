from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from simulations.kinds import get_kind
from simulations.models import ScenarioDraft
from simulations.services.content.scenarios import store_scenario
from simulations.services.files.scenario_drafts import DraftInvalid, parse_scenario_file


class Command(BaseCommand):
    help = (
        "Read a scenario file written by `export_scenario` (YAML, or JSON by its .json suffix), validate every "
        "scenario in it, and store each as a version (same content, same version) or, with --draft, as an admin "
        "draft to edit and publish."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--draft", action="store_true", help="store as drafts, not as published versions")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"Cannot read {path}: {exc}") from exc
        try:
            found = parse_scenario_file(text, fmt="json" if path.suffix == ".json" else "yaml")
        except DraftInvalid as exc:
            raise CommandError(f"{path}: {exc}") from exc
        with transaction.atomic():  # all or nothing
            for kind, source in found:
                if options["draft"]:
                    draft = ScenarioDraft.objects.create(
                        kind=kind, slug=source.slug, title=source.title, document=source.document
                    )
                    self.stdout.write(f"Draft {draft.pk}: {source.slug} ({kind})")
                    continue
                version, created = store_scenario(kind=get_kind(kind), source=source, origin=str(path))
                verb = "Imported new version" if created else "Unchanged, already stored as"
                self.stdout.write(f"{verb} {version.slug} v{version.version} ({kind})")
