"""A deliberation on the command line (`manage.py play`, `manage.py deliberate`): its options, and the offline
persona in the person's seat, for the platform's headless loop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simulations.kinds import Bot, NextStep, Seat
from simulations.models import Game
from simulations.services.play.headless import Progress, play_to_end

from . import machine, offline
from .amendments import proposer_amendment
from .games import scenario_of, state_of
from .turns import Decide, submit_human_move


def cli_options(*, role: str | None, human: str | None, options: dict[str, str]) -> dict[str, Any]:
    if human not in (None, "offline"):
        raise ValueError("In a deliberation the bot in your seat is the offline persona: --human offline.")
    unknown = set(options) - {"sample", "file", "diff"}
    if unknown or len(options) != 1:
        raise ValueError("A deliberation starts from one --option: sample=ID, file=PATH or diff=PATH.")
    ((key, value),) = options.items()
    start: dict[str, Any] = {"seat": role}
    if key == "sample":
        start["sample"] = value
    else:
        try:
            data = Path(value).read_bytes()
        except OSError as exc:
            raise ValueError(f"Cannot read {value}: {exc.strerror}.") from exc
        start |= {"code": data, "filename": Path(value).name, "source": key}
    return start


def bot(game: Game, seat: Seat) -> Bot:
    return member()


def member(decide: Decide | None = None) -> Bot:
    """The person's seat: `decide` chooses the move (default: the offline persona, as the seat's own bot would, the
    AI proposer's amendment included)."""

    def move(game: Game, step: NextStep, failure: BaseException | None) -> Game:
        scenario, state = scenario_of(game), state_of(game)
        assert isinstance(step.detail, machine.Step)
        if decide is None:
            chosen = offline.decide(scenario, state, step.detail, amended=proposer_amendment(scenario, state))
        else:
            chosen = decide(scenario, state, step.detail)
        return submit_human_move(game=game, move=chosen)

    return move


def play_headless(game: Game, *, decide: Decide | None = None, on_progress: Progress | None = None) -> Game:
    """To the verdict: the driver plays the personas, `member(decide)` the person's seat."""
    return play_to_end(game, bot=member(decide), on_progress=on_progress)
