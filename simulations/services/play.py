"""Headless play: drive a game to REVIEW with a scripted human and the configured model."""

from __future__ import annotations

from collections.abc import Callable

from simulations.bots import Policy, policy_record
from simulations.models import Game

from .ai_turns import play_ai_step
from .human_turns import submit_human_event
from .resume import resume_game
from .scenarios import scenario_of
from .turns import state_of, step_of

Progress = Callable[[Game, str], None]


def _discard(text: str) -> None:
    """Streams the model's answer without showing it (exercises the streaming path headless)."""


def play_game(
    *,
    game_id: int,
    policy: Policy,
    on_progress: Progress | None = None,
    max_turns: int = 5000,
    stream: bool = False,
) -> Game:
    """Precondition: the game exists. Plays every remaining turn; safe to call again after any interruption.

    The policy is stored with the game, so `play --resume` continues with the same student."""
    game, _ = resume_game(game_id=game_id)
    record = policy_record(policy)
    if game.human_policy != record:
        Game.objects.filter(pk=game.pk).update(human_policy=record)
        game.human_policy = record
    scenario = scenario_of(game.scenario)
    for _ in range(max_turns):
        step = step_of(game)
        if step.kind == "done":
            return game
        if step.kind == "ai":
            game = play_ai_step(game=game, step=step, on_chunk=_discard if stream else None)
        else:
            event, payload = policy.decide(scenario, state_of(game), step)
            game = submit_human_event(game=game, event=event, payload=payload)
        if on_progress:
            on_progress(game, step.purpose or step.kind)
    raise RuntimeError(f"game {game_id} did not finish within {max_turns} turns")
