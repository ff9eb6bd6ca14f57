from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulations.ai.gateway import ModelFailure
from simulations.engine.errors import MachineError
from simulations.kinds.negotiation.bots import (
    Policy,
    describe_policy,
    make_policy,
    policy_from_record,
    policy_record,
)
from simulations.kinds.negotiation.play import play_game
from simulations.models import Game
from simulations.services.model_choice import UnknownModelChoice, find
from simulations.services.model_choice import options as options_offered
from simulations.services.scenarios import latest_version
from simulations.services.turns import create_game


class Command(BaseCommand):
    help = "Play a whole game headless to REVIEW; prints one JSON line last: {game_id, status}."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scenario", default="mercury")
        parser.add_argument("--role", help="the student's seat, e.g. BRA (not needed with --resume)")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--human",
            help="passive | advocate | script:FILE (default: passive; with --resume, the game's own student)",
        )
        parser.add_argument("--resume", type=int, metavar="GAME_ID", help="continue an interrupted game")
        parser.add_argument("--quiet", action="store_true", help="no progress lines")
        parser.add_argument(
            "--model", metavar="LABEL_OR_MODEL",
            help="a model from the admin's list, by label or model string (default: the settings' model); "
            "a resumed game keeps the model it started with",
        )  # fmt: skip

    def handle(self, *args: Any, **options: Any) -> None:
        policy: Policy | None = None
        if options["resume"]:
            game = Game.objects.filter(pk=options["resume"]).first()
            if game is None:
                raise CommandError(f"No game {options['resume']}.")
            role = game.human_role or options["role"]
            policy = self._resumed_policy(game, role, options["human"])
        else:
            version = latest_version(slug=options["scenario"])
            if version is None:
                raise CommandError(
                    f"Scenario {options['scenario']!r} is not loaded: run "
                    f"`python manage.py load_scenario scenarios/{options['scenario']}` first."
                )
            role = options["role"]
            if not role:
                raise CommandError("--role is required for a new game.")
            policy = self._policy(options["human"] or "passive", role)
            try:
                key = find(options["model"]) if options["model"] else None
            except UnknownModelChoice as exc:
                offered = ", ".join(f"{o.label!r} ({o.model})" for o in options_offered())
                raise CommandError(f"{exc} Offered: {offered}.") from exc
            game = create_game(scenario_version=version, seed=options["seed"], model=key)
        assert policy is not None

        def progress(g: Game, what: str) -> None:
            if not options["quiet"]:
                line = f"[game {g.pk}] turn {g.version:>4}: {what:<10} now {g.phase}"
                self.stderr.write(f"\r{line:<78}", ending="")
                self.stderr.flush()

        try:
            game = play_game(game_id=game.pk, policy=policy, on_progress=progress)
        except (ModelFailure, MachineError, ValueError) as exc:
            game.refresh_from_db()
            if not options["quiet"]:
                self.stderr.write("")
            self.stdout.write(json.dumps({"game_id": game.pk, "status": game.phase, "error": str(exc)}))
            # The teacher at the terminal also gets the cause and the provider's own words.
            said = f" [{exc.cause}: {exc.detail}]" if isinstance(exc, ModelFailure) and exc.detail else ""
            raise CommandError(
                f"Game {game.pk} stopped: {exc}{said} Resume with --resume {game.pk}."
            ) from exc
        if not options["quiet"]:
            self.stderr.write("")
        self.stdout.write(json.dumps({"game_id": game.pk, "status": game.phase}))

    def _policy(self, spec: str, role: str) -> Policy:
        try:
            return make_policy(spec, role)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc

    def _resumed_policy(self, game: Game, role: str, spec: str | None) -> Policy:
        """The student the game was started with, unless --human overrides it (and then it says so)."""
        stored = game.human_policy or {}
        if spec:
            policy = self._policy(spec, role)
            if stored and policy_record(policy) != stored:
                self.stderr.write(
                    f"Game {game.pk} was played with --human {describe_policy(stored)}; "
                    f"continuing with --human {spec} as asked."
                )
            return policy
        if not stored:
            self.stderr.write(f"Game {game.pk} has no stored student; continuing with --human passive.")
            return self._policy("passive", role)
        try:
            return policy_from_record(stored, role)
        except ValueError as exc:
            raise CommandError(f"Game {game.pk}: {exc}.") from exc
