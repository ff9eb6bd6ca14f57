"""Headless play: a scripted student takes the human seat; `drive_game` plays every AI step in between."""

from __future__ import annotations

import time
from collections.abc import Callable

from simulations.kinds import NextStep
from simulations.kinds.negotiation.bots import Policy, policy_record
from simulations.kinds.negotiation.games import scenario_of_version, state_of, step_of
from simulations.kinds.negotiation.human_turns import submit_human_event
from simulations.kinds.negotiation.machine import Step
from simulations.models import Game
from simulations.services.drive import Outcome, drive_game
from simulations.services.lease import new_holder
from simulations.services.resume import resume_game
from simulations.services.turns import games_with_scenario

Progress = Callable[[Game, str], None]
HELD_POLL_SECONDS = 5.0  # another driver holds the game: look again at most this late (its lease may lapse)


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
    scenario = scenario_of_version(game.scenario)
    holder = new_holder()
    turns = 0

    def counted(g: Game, done: NextStep) -> None:
        nonlocal turns
        turns += 1
        if on_progress:
            step: Step = done.detail
            on_progress(g, step.purpose or step.kind)

    while turns < max_turns:
        drive = drive_game(
            game_id=game_id, holder=holder, max_steps=max_turns - turns, stream=stream, on_step=counted
        )
        if drive.outcome is Outcome.FAILED:
            assert drive.failure is not None
            raise drive.failure
        if drive.outcome is Outcome.HELD:
            time.sleep(min(drive.retry_in + 0.1, HELD_POLL_SECONDS))
            continue
        game = games_with_scenario().get(pk=game_id)
        step = step_of(game)
        if step.kind == "done":
            return game
        if step.kind == "ai":
            continue  # PAUSED at the turn limit: the loop condition ends it
        event, payload = policy.decide(scenario, state_of(game), step)
        game = submit_human_event(game=game, event=event, payload=payload)
        turns += 1
        if on_progress:
            on_progress(game, step.purpose or step.kind)
    raise RuntimeError(f"game {game_id} did not finish within {max_turns} turns")
