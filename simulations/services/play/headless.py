"""The one headless loop (`manage.py play`, rehearsals, benchmarks, tests): the driver plays every AI step and a
kind's bot makes each move the student (or the student's page) would make, until the game ends.

A kind supplies only its bot: given the game resting on a human or system step, the bot commits one move and
returns the game as committed. Safe to call again after any interruption: every step is committed on its own."""

from __future__ import annotations

import time
from collections.abc import Callable

from simulations.kinds import Actor, Bot, NextStep, kind_of
from simulations.models import Game
from simulations.services.ledger.turns import games_with_scenario
from simulations.services.play.drive import Outcome, drive_game
from simulations.services.play.lease import new_holder

HELD_POLL_SECONDS = 5.0  # another driver holds the game: look again at most this late (its lease may lapse)

Progress = Callable[[Game, str], None]


class GamePaused(RuntimeError):
    """The game's class's teacher paused it: nothing more is played until they resume it."""


def who(game: Game, step: NextStep) -> str:
    """The default progress label: who played the step (the phase, if nobody is named)."""
    return (step.speaker or game.phase)[:24]


def play_to_end(
    game: Game,
    *,
    bot: Bot,
    on_progress: Progress | None = None,
    label: Callable[[Game, NextStep], str] = who,
    max_steps: int = 5000,
    stream: bool = False,
) -> Game:
    """Precondition: the game exists. Plays it to its end: the driver plays the AI steps (streaming to open pages
    when `stream`), `bot` makes every other move. Raises the model's failure when a drive stops on one and the
    game still waits for the model, and RuntimeError after `max_steps` steps."""
    holder, steps = new_holder(), 0

    def counted(played: Game, step: NextStep) -> None:
        nonlocal steps
        steps += 1
        if on_progress:
            on_progress(played, label(played, step))

    while steps < max_steps:
        drive = drive_game(
            game_id=game.pk, holder=holder, max_steps=max_steps - steps, stream=stream, on_step=counted
        )
        if drive.outcome is Outcome.HELD:
            time.sleep(min(drive.retry_in + 0.1, HELD_POLL_SECONDS))
            continue
        game = games_with_scenario().get(pk=game.pk)
        step = kind_of(game).next_step(game)
        if step.actor is Actor.DONE:
            return game
        if step.actor is Actor.AI:
            if drive.outcome is Outcome.STOPPED:
                raise GamePaused(f"game {game.pk} is paused by its class's teacher: resume it to play on")
            if drive.outcome is Outcome.FAILED:
                assert drive.failure is not None
                raise drive.failure
            continue  # paused at the step limit: the loop's condition ends it
        game = bot(game, step, drive.failure)
        steps += 1
        if on_progress:
            on_progress(game, label(game, step))
    raise RuntimeError(f"game {game.pk} did not finish within {max_steps} steps")
