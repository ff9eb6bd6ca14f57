from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulations.ai.gateway import ModelFailure
from simulations.engine.errors import MachineError
from simulations.kinds import Seat, get_kind
from simulations.services.content.scenarios import latest_version, parsed_scenario
from simulations.services.ledger.turns import create_game
from simulations.services.people import class_sessions
from simulations.services.play.headless import play_to_end


class Command(BaseCommand):
    help = (
        "Play a whole class session headless (a dry run of a class): open a session on a scenario, bot students "
        "join with its code, it starts, and each plays their own game to the end with the kind's bot. Prints one "
        'JSON line last: {"session": ID, "code": ..., "games": [{"game_id", "student", "seat", "status"}, ...]}. '
        "E.g. `play_class --scenario mercury --students 3 --roles CAN,EU,TZA --human advocate`."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scenario", default="mercury")
        parser.add_argument("--students", type=int, default=3)
        parser.add_argument(
            "--seed", type=int, default=1, help="the first student's seed; the next get seed+1, …"
        )
        parser.add_argument(
            "--roles", default="", help="seats handed out in turn, e.g. CAN,EU (default: the kind's)"
        )
        parser.add_argument("--human", help="the students' bot (default: the kind's own)")
        parser.add_argument(
            "--teacher", default="class-teacher", help="the teacher's user name (made if missing)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        version = latest_version(slug=options["scenario"])
        if version is None:
            raise CommandError(f"Scenario {options['scenario']!r} is not loaded: run load_scenario first.")
        if not 1 <= options["students"] <= 200:
            raise CommandError("--students takes 1 to 200.")
        kind = get_kind(version.kind)
        default_role, start_options = kind.admin.rehearsal(parsed_scenario(version))
        roles = [r.strip() for r in options["roles"].split(",") if r.strip()] or [default_role]
        teacher, _ = User.objects.get_or_create(username=options["teacher"])
        session = class_sessions.open_session(
            teacher=teacher,
            version=version,
            title=f"Class of {options['students']} bots",
            max_students=options["students"],
        )
        for n in range(1, options["students"] + 1):
            bot = User.objects.create_user(f"{session.code.lower()}-{n}")
            class_sessions.join(user=bot, code=session.code)
        class_sessions.start(session)
        played = []
        for n, member in enumerate(session.members.select_related("student").order_by("joined_at")):
            role = roles[n % len(roles)]
            game = create_game(scenario_version=version, seed=options["seed"] + n, owner=member.student,
                               model=session.model or None, options=start_options)  # fmt: skip
            try:
                game = play_to_end(game, bot=kind.headless.bot(game, Seat(role=role, human=options["human"])))
            except (ModelFailure, MachineError, ValueError) as exc:
                raise CommandError(f"{member.student.username}'s game {game.pk} stopped: {exc}") from exc
            played.append({"game_id": game.pk, "student": member.student.username, "seat": game.human_role,
                           "status": game.phase})  # fmt: skip
        self.stdout.write(json.dumps({"session": session.pk, "code": session.code, "games": played}))
