from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulations.models import Game
from simulations.services.files.export import export_game, export_markdown


class Command(BaseCommand):
    help = "Write a game's export to stdout (JSON format simulation-export/3, or Markdown)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("game_id", type=int)
        parser.add_argument("--format", choices=["json", "markdown"], default="json")

    def handle(self, *args: Any, **options: Any) -> None:
        game = Game.objects.select_related("scenario").filter(pk=options["game_id"]).first()
        if game is None:
            raise CommandError(f"No game {options['game_id']}.")
        if options["format"] == "markdown":
            self.stdout.write(export_markdown(game=game))
        else:
            self.stdout.write(json.dumps(export_game(game=game), indent=2, ensure_ascii=False))
