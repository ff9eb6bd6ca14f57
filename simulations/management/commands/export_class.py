from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulations.models import ClassSession
from simulations.services.people import class_results, class_sessions


class Command(BaseCommand):
    help = (
        "A class session's results: CSV (a row per student per vote, as the teacher's download) or JSON (each "
        "student, their game, where it stands)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("session_id", type=int)
        parser.add_argument("--format", choices=("csv", "json"), default="csv")

    def handle(self, *args: Any, **options: Any) -> None:
        session = ClassSession.objects.select_related("scenario").filter(pk=options["session_id"]).first()
        if session is None:
            raise CommandError(f"No class session {options['session_id']}.")
        if options["format"] == "csv":
            self.stdout.write(class_results.results_csv(session), ending="")
            return
        rows = [
            {"student": row.name, "joined_at": row.joined_at, "game_id": row.game.pk if row.game else None,
             "seat": row.game.human_role if row.game else "", "phase": row.phase, "waiting_on": row.waiting_on,
             "updated_at": row.updated_at}
            for row in class_sessions.roster(session)
        ]  # fmt: skip
        self.stdout.write(json.dumps({"session": session.pk, "title": session.title, "status": session.status,
                                      "students": rows}))  # fmt: skip
