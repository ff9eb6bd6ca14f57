"""A practice conversation on the command line (`manage.py play`): its options and its students (bots.py: the
seeker and quitter bots, or a student's scripted messages, `--human script:FILE`) for the platform's headless
loop."""

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
    bots.student_bot(human)  # refuses an unknown bot or an unreadable script before the game exists
    unknown = set(options) - {"username"}
    if unknown:
        raise ValueError(f"Unknown option(s) {', '.join(sorted(unknown))}: use username.")
    return {"username": options.get("username", "Sam")}


def bot(game: Game, seat: Seat) -> Bot:
    """The student `--human` names (seeker by default); a script raises `bots.ScriptEnded` when it runs out."""
    return student(bots.student_bot(seat.human))


def student(writer: bots.Bot) -> Bot:
    """The student, whose every message `writer` writes."""

    def say(game: Game, step: NextStep, failure: BaseException | None) -> Game:
        return turns.say(game, writer(scenario_of(game), state_of(game)))

    return say


def play_headless(game: Game, *, bot: bots.Bot = bots.seeker, on_progress: Progress | None = None) -> Game:
    """To the end: the driver plays the judge and the character, `bot` the student."""
    return play_to_end(game, bot=student(bot), on_progress=on_progress)
