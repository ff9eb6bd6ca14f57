from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulations.services.files.import_game import ExportImportError, import_game


class Command(BaseCommand):
    help = (
        "Import a game export (JSON, format simulation-export/3) as a new game; its scenario version must be loaded. "
        'Prints one JSON line: {"game_id": N}.'
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the export (as written by export_game); - reads stdin")
        parser.add_argument("--owner", metavar="USERNAME", help="the user who will own the game")

    def handle(self, *args: Any, **options: Any) -> None:
        owner = None
        if options["owner"]:
            owner = User.objects.filter(username=options["owner"]).first()
            if owner is None:
                raise CommandError(f"No user {options['owner']!r}.")
        name = options["file"]
        try:
            text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"{name}: cannot read ({exc.strerror or exc}).") from exc
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise CommandError(f"{name}: not JSON ({exc}).") from exc
        try:
            game = import_game(data=data, owner=owner)
        except ExportImportError as exc:
            raise CommandError(f"{name}: {exc}") from exc
        self.stdout.write(json.dumps({"game_id": game.pk}))
