from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulations.ai.gateway import ModelFailure
from simulations.engine.errors import MachineError
from simulations.kinds import Seat, get_kind, kind_of
from simulations.models import Game
from simulations.services.content.model_choice import UnknownModelChoice, find
from simulations.services.content.model_choice import options as options_offered
from simulations.services.content.scenarios import latest_version
from simulations.services.ledger.turns import create_game
from simulations.services.play.headless import play_to_end


class Command(BaseCommand):
    help = (
        "Play a whole simulation headless, of any kind, a bot in the user's seat; prints one JSON line last: "
        "{game_id, status}. E.g. `play --scenario mercury --role EU --human advocate`, "
        "`play --scenario code-review --option sample=secret --role proposer`."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scenario", default="mercury")
        parser.add_argument("--role", help="the user's seat, e.g. BRA or proposer (not needed with --resume)")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--human",
            help="the bot in the user's seat; a negotiation: passive | advocate | script:FILE (default: passive; "
            "with --resume, the game's own student); a practice conversation: seeker | quitter | script:FILE "
            "(its `messages`; when they run out the game stops there and the JSON line says `stopped`)",
        )
        parser.add_argument(
            "--option", action="append", default=[], metavar="KEY=VALUE",
            help="a start option of the scenario's kind, e.g. sample=secret, file=PATH or diff=PATH for a "
            "deliberation",
        )  # fmt: skip
        parser.add_argument("--resume", type=int, metavar="GAME_ID", help="continue an interrupted game")
        parser.add_argument("--quiet", action="store_true", help="no progress lines")
        parser.add_argument(
            "--model", metavar="LABEL_OR_MODEL",
            help="a model from the admin's list, by label or model string (default: the settings' model); "
            "a resumed game keeps the model it started with",
        )  # fmt: skip

    def handle(self, *args: Any, **options: Any) -> None:
        if options["resume"]:
            game = Game.objects.select_related("scenario").filter(pk=options["resume"]).first()
            if game is None:
                raise CommandError(f"No game {options['resume']}.")
            role = game.human_role or options["role"]
        else:
            game, role = self._new_game(options)

        def progress(g: Game, what: str) -> None:
            if not options["quiet"]:
                line = f"[game {g.pk}] turn {g.version:>4}: {what:<10} now {g.phase}"
                self.stderr.write(f"\r{line:<78}", ending="")
                self.stderr.flush()

        try:
            seat = Seat(
                role=role, human=options["human"], resumed=bool(options["resume"]), say=self.stderr.write
            )
            game = play_to_end(game, bot=kind_of(game).headless.bot(game, seat), on_progress=progress)
        except EOFError as exc:  # a scripted student ran out of moves: the game waits where it is, no failure
            game.refresh_from_db()
            if not options["quiet"]:
                self.stderr.write("")
            self.stdout.write(json.dumps({"game_id": game.pk, "status": game.phase, "stopped": str(exc)}))
            return
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

    def _new_game(self, options: dict[str, Any]) -> tuple[Game, str | None]:
        version = latest_version(slug=options["scenario"])
        if version is None:
            raise CommandError(
                f"Scenario {options['scenario']!r} is not loaded: run "
                f"`python manage.py load_scenario scenarios/{options['scenario']}` first."
            )
        kind = get_kind(version.kind)
        pairs = [o.split("=", 1) for o in options["option"]]
        if any(len(p) != 2 for p in pairs):
            raise CommandError("--option takes KEY=VALUE.")
        try:
            start = kind.headless.cli_options(
                role=options["role"], human=options["human"], options=dict(pairs)
            )
            key = find(options["model"]) if options["model"] else None
            game = create_game(scenario_version=version, seed=options["seed"], model=key, options=start)
        except UnknownModelChoice as exc:
            offered = ", ".join(f"{o.label!r} ({o.model})" for o in options_offered())
            raise CommandError(f"{exc} Offered: {offered}.") from exc
        except (ValueError, MachineError) as exc:  # the kind's refusal of its options (a CheckError is one)
            raise CommandError(str(exc)) from exc
        return game, options["role"]
