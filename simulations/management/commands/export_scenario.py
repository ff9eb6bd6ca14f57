from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulations.models import ScenarioDraft, ScenarioVersion
from simulations.services.files.scenario_drafts import FORMATS, dump_scenarios


class Command(BaseCommand):
    help = (
        "Write a scenario as a file `import_scenario` reads back (YAML or JSON): a stored version (the latest by "
        "default) or an admin draft. Importing the file stores nothing new when that version exists."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("slug", nargs="?", help="the scenario's slug, e.g. mercury or code-review")
        what.add_argument("--draft", type=int, metavar="ID", help="an admin draft instead of a version")
        parser.add_argument(
            "--scenario-version", type=int, metavar="N", help="the version number (default: the latest)"
        )
        parser.add_argument("--format", choices=FORMATS, default="yaml")
        parser.add_argument("--out", type=Path, help="write to this file (default: standard output)")

    def handle(self, *args: Any, **options: Any) -> None:
        item: ScenarioVersion | ScenarioDraft | None
        if options["draft"] is not None:
            item = ScenarioDraft.objects.filter(pk=options["draft"]).first()
            missing = f"No draft {options['draft']}."
        else:
            versions = ScenarioVersion.objects.filter(slug=options["slug"])
            if options["scenario_version"] is not None:
                versions = versions.filter(version=options["scenario_version"])
            item = versions.order_by("-version").first()
            missing = f"No scenario {options['slug']!r}" + (
                f" version {options['version']}." if options["scenario_version"] is not None else "."
            )
        if item is None:
            raise CommandError(missing)
        text = dump_scenarios([item], fmt=options["format"])
        if options["out"]:
            options["out"].write_text(text, encoding="utf-8")
        else:
            self.stdout.write(text, ending="")
