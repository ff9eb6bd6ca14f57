from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulations.ai.gateway import ModelFailure
from simulations.engine.errors import MachineError
from simulations.kinds import Kind, Seat, get_kind
from simulations.models import ClassSession, Game, GameSeat
from simulations.services.content.scenarios import latest_version, parsed_scenario
from simulations.services.ledger.turns import create_game
from simulations.services.people import class_sessions
from simulations.services.play.headless import play_to_end


class Command(BaseCommand):
    help = (
        "Play a whole class session headless (a dry run of a class): open a session on a scenario, bot students "
        "join with its code, it starts, and each plays their own game to the end with the kind's bot. Prints one "
        'JSON line last: {"session": ID, "code": ..., "games": [{"game_id", "student", "seat", "human_seats", '
        '"status"}, ...]}. E.g. `play_class --scenario mercury --students 3 --roles CAN,EU,TZA --human advocate`, '
        "or groups sharing a game: `play_class --scenario mercury --groups 2 --students-per-group 3`."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scenario", default="mercury")
        parser.add_argument("--students", type=int, default=3)
        parser.add_argument(
            "--groups", type=int, help="groups sharing a game each (students: groups × per group)"
        )
        parser.add_argument("--students-per-group", type=int, default=1, help="students who share one game")
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
        per_group = options["students_per_group"]
        if options["groups"] is not None:
            options["students"] = options["groups"] * per_group
        if not 1 <= options["students"] <= 200:
            raise CommandError("--students takes 1 to 200.")
        if not 1 <= per_group <= options["students"]:
            raise CommandError("--students-per-group takes 1 to the class's students.")
        kind = get_kind(version.kind)
        default_role, start_options = kind.admin.rehearsal(parsed_scenario(version))
        roles = [r.strip() for r in options["roles"].split(",") if r.strip()] or [default_role]
        teacher, _ = User.objects.get_or_create(username=options["teacher"])
        try:
            session = class_sessions.open_session(
                teacher=teacher,
                version=version,
                title=f"Class of {options['students']} bots",
                max_students=options["students"],
                students_per_group=per_group,
            )
        except class_sessions.GroupsRefused as exc:
            raise CommandError(str(exc)) from exc
        for n in range(1, options["students"] + 1):
            bot = User.objects.create_user(f"{session.code.lower()}-{n}")
            class_sessions.join(user=bot, code=session.code)
        group_games = class_sessions.start(session, seed=options["seed"])
        if group_games:
            self._play_groups(group_games, kind, options["human"], session)
            return
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
                           "human_seats": [game.human_role], "status": game.phase})  # fmt: skip
        self.stdout.write(json.dumps({"session": session.pk, "code": session.code, "games": played}))

    def _play_groups(self, games: list[Game], kind: Kind, human: str | None, session: ClassSession) -> None:
        """Every group's game to its end, the kind's bot in each student's seat."""
        played = []
        for game in games:
            try:
                game = play_to_end(game, bot=kind.headless.bot(game, Seat(role=None, human=human)))
            except (ModelFailure, MachineError, ValueError) as exc:
                raise CommandError(f"group game {game.pk} stopped: {exc}") from exc
            seats = list(GameSeat.objects.filter(game=game).select_related("student"))
            played.append({
                "game_id": game.pk, "student": game.owner.username if game.owner else "", "seat": game.human_role,
                "human_seats": [s.role for s in seats] or [game.human_role],
                "students": {s.role: s.student.username for s in seats}, "status": game.phase,
            })  # fmt: skip
        self.stdout.write(json.dumps({"session": session.pk, "code": session.code, "games": played}))
