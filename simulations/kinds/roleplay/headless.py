"""A practice conversation on the command line (`manage.py play`): its options and its student bots (bots.py)
for the platform's headless loop."""

from __future__ import annotations

from typing import Any

from simulations.kinds import Bot, NextStep, Seat
from simulations.models import Game
from simulations.services.play.headless import Progress, play_to_end

from . import bots, turns
from .games import scenario_of, state_of


def cli_options(*, role: str | None, human: str | None, options: dict[str, str]) -> dict[str, Any]:
    if role not in (None, "student"):
        raise ValueError("A practice conversation has one seat to play: --role student (the default).")
    if human not in (None, "offline", *bots.BOTS):
        raise ValueError(f"--human takes one of: {', '.join(bots.BOTS)} (the student bot).")
    unknown = set(options) - {"username"}
    if unknown:
        raise ValueError(f"Unknown option(s) {', '.join(sorted(unknown))}: use username.")
    return {"username": options.get("username", "Sam")}


def bot(game: Game, seat: Seat) -> Bot:
    return student(bots.BOTS.get(seat.human or "", bots.seeker))


def student(writer: bots.Bot) -> Bot:
    """The student, whose every message `writer` writes."""

    def say(game: Game, step: NextStep, failure: BaseException | None) -> Game:
        return turns.say(game, writer(scenario_of(game), state_of(game)))

    return say


def play_headless(game: Game, *, bot: bots.Bot = bots.seeker, on_progress: Progress | None = None) -> Game:
    """To the end: the driver plays the judge and the character, `bot` the student."""
    return play_to_end(game, bot=student(bot), on_progress=on_progress)
