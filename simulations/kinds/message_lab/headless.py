"""Message Lab on the command line (`manage.py play`): the set-up from `--option`s, and a bot at each gate,
for the platform's headless loop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simulations.kinds import Bot, NextStep, Seat
from simulations.models import Game
from simulations.services.ledger.turns import commit_event
from simulations.services.play.headless import Progress, play_to_end

from .games import state_of
from .machine import Event, Step

GateBot = Callable[[Game], dict[str, object]]


def approve(game: Game) -> dict[str, object]:
    """The default player at a gate: keeps the panel's survivors and adds no direction."""
    return {}


def cli_options(*, role: str | None, human: str | None, options: dict[str, str]) -> dict[str, Any]:
    if role or human not in (None, "offline"):
        raise ValueError(
            "Message Lab has no seat to play: the panel is all personas; a bot approves each gate."
        )
    known = ("brief", "rounds", "gates", "participants", "moderator", "evaluator", "parallel")
    unknown = set(options) - set(known)
    if unknown:
        raise ValueError(f"Unknown option(s) {', '.join(sorted(unknown))}: use {', '.join(known)}.")
    start: dict[str, Any] = {}
    try:
        for key in ("brief", "moderator", "evaluator"):
            if key in options:
                start[key] = options[key]
        for key in ("rounds", "parallel"):
            if key in options:
                start[key] = int(options[key])
        if "gates" in options:
            start["gates"] = [int(g) for g in options["gates"].split(",") if g.strip()]
        if "participants" in options:
            start["participants"] = [p.strip() for p in options["participants"].split(",") if p.strip()]
    except ValueError:
        raise ValueError(
            "rounds, parallel and gates take whole numbers (gates: a comma-separated list)."
        ) from None
    return start


def bot(game: Game, seat: Seat) -> Bot:
    return player()


def player(at_gate: GateBot = approve, *, resume_failed: bool = False) -> Bot:
    """At each gate `at_gate` decides; a FAILED simulation is resumed only when `resume_failed` (else its failure is
    raised again)."""

    def move(game: Game, step: NextStep, failure: BaseException | None) -> Game:
        detail = step.detail
        assert isinstance(detail, Step) and detail.event is not None
        if detail.event is Event.SIMULATION_RESUMED and not resume_failed:
            stopped = state_of(game).failure
            raise failure or RuntimeError(stopped.reason if stopped else "the simulation failed")
        payload = at_gate(game) if detail.event is Event.GATE_DECIDED else {}
        return commit_event(
            game_id=game.pk, expected_version=game.version, event=detail.event.value, payload=payload
        )

    return move


def play_headless(
    game: Game,
    *,
    at_gate: GateBot = approve,
    resume_failed: bool = False,
    on_progress: Progress | None = None,
) -> Game:
    """To OUTPUT_READY (see `player`)."""
    return play_to_end(game, bot=player(at_gate, resume_failed=resume_failed), on_progress=on_progress)
