"""A social-feed run on the command line (`manage.py play`): its options; nobody sits in a seat, so the bot for
the platform's headless loop only resumes a paused run."""

from __future__ import annotations

from typing import Any

from simulations.kinds import Bot, NextStep, Seat
from simulations.models import Game
from simulations.services.ledger.turns import commit_event
from simulations.services.play.headless import Progress, play_to_end

from .machine import Event, Step
from .ranking import RANKINGS
from .twins import MIXES

OPTIONS = ("agents", "max_rounds", "checkpoint_frequency", "reasoner_enabled", "ranking", "compare")


def cli_options(*, role: str | None, human: str | None, options: dict[str, str]) -> dict[str, Any]:
    if role or human not in (None, "offline"):
        raise ValueError("A social-feed run has no seat to play: the agents are all simulated.")
    unknown = set(options) - set(OPTIONS)
    if unknown:
        raise ValueError(f"Unknown option(s) {', '.join(sorted(unknown))}: use {', '.join(OPTIONS)}.")
    start: dict[str, Any] = {
        k: int(v) for k, v in options.items() if k not in ("reasoner_enabled", "ranking", "compare")
    }
    if "compare" in options:  # a second town: another ranking's name, or a population mix's
        other = options["compare"]
        if other in RANKINGS:
            start["compare"] = {"setting": "ranking", "ranking": other}
        elif other in MIXES:
            start["compare"] = {"setting": "population", "mix": other}
        elif other == "correction":
            start["compare"] = {"setting": "correction"}
        else:
            raise ValueError(
                f"Unknown comparison {other!r}: use one of {', '.join((*RANKINGS, *MIXES, 'correction'))}."
            )
    if "ranking" in options:
        if options["ranking"] not in RANKINGS:
            raise ValueError(f"Unknown ranking {options['ranking']!r}: use {', '.join(RANKINGS)}.")
        start["ranking"] = options["ranking"]
    if "reasoner_enabled" in options:
        start["reasoner_enabled"] = options["reasoner_enabled"].lower() in ("1", "true", "yes", "on")
    return start


def bot(game: Game, seat: Seat) -> Bot:
    return resume


def resume(game: Game, step: NextStep, failure: BaseException | None) -> Game:
    assert isinstance(step.detail, Step) and step.detail.event is Event.RUN_RESUMED, step.detail
    return commit_event(game_id=game.pk, expected_version=game.version, event=Event.RUN_RESUMED.value)


def play_headless(game: Game, *, on_progress: Progress | None = None) -> Game:
    """To the run's last round, resuming it if it was paused."""
    return play_to_end(game, bot=resume, on_progress=on_progress)
