"""A negotiation on the command line (`manage.py play`), in benchmarks and tests: a scripted student (bots.py)
takes the human seat and the platform's headless loop plays every AI step in between."""

from __future__ import annotations

from typing import Any

from simulations.kinds import Bot, NextStep, Seat
from simulations.models import Game
from simulations.services.ledger.resume import resume_game
from simulations.services.ledger.seats import viewed_as
from simulations.services.ledger.turns import games_with_scenario
from simulations.services.play.headless import Progress, play_to_end

from . import machine
from .bots import BySeat, Policy, describe_policy, make_policy, policy_from_record, policy_record
from .games import scenario_of_version, state_of
from .human_turns import submit_human_event
from .machine import Step


def cli_options(*, role: str | None, human: str | None, options: dict[str, str]) -> dict[str, Any]:
    if options:
        raise ValueError(f"A negotiation takes no --option (got {', '.join(sorted(options))}).")
    if not role:
        raise ValueError("--role is required for a new game.")
    make_policy(human or "passive", role)  # refuses an unknown bot or script before the game exists
    return {}


def bot(game: Game, seat: Seat) -> Bot:
    """The student bot `seat.human` in `seat.role` (on resume, by default the one the game was played with); in a
    class group's game, that bot in every student's seat."""
    students = state_of(game).humans
    if len(students) > 1:
        return student(game, BySeat([make_policy(seat.human or "passive", role) for role in students]))
    role, human, stored = seat.role, seat.human, game.human_policy or {}
    if not role:
        raise ValueError("--role is required for a new game.")
    if not seat.resumed:
        policy = make_policy(human or "passive", role)
    elif human:
        policy = make_policy(human, role)
        if stored and policy_record(policy) != stored:
            seat.say(
                f"Game {game.pk} was played with --human {describe_policy(stored)}; "
                f"continuing with --human {human} as asked."
            )
    elif stored:
        try:
            policy = policy_from_record(stored, role)
        except ValueError as exc:
            raise ValueError(f"Game {game.pk}: {exc}.") from exc
    else:
        seat.say(f"Game {game.pk} has no stored student; continuing with --human passive.")
        policy = make_policy("passive", role)
    return student(game, policy)


def student(game: Game, policy: Policy) -> Bot:
    """The student `policy` plays, checked and stored with the game first: `play --resume` continues with it."""
    game, _ = resume_game(game_id=game.pk)
    record = policy_record(policy)
    if game.human_policy != record:
        Game.objects.filter(pk=game.pk).update(human_policy=record)
    scenario = scenario_of_version(game.scenario)

    def move(game: Game, step: NextStep, failure: BaseException | None) -> Game:
        detail = step.detail
        assert isinstance(detail, Step)
        if detail.lane:  # Round 2's lanes: the move of the seat that acts, on the state focused on its lane
            event, payload = policy.decide(scenario, machine.focused(state_of(game), detail.lane), detail)
            return submit_human_event(game=viewed_as(game, detail.role), event=event, payload=payload)
        event, payload = policy.decide(scenario, state_of(game), detail)
        return submit_human_event(game=game, event=event, payload=payload)

    return move


def play_game(
    *,
    game_id: int,
    policy: Policy,
    on_progress: Progress | None = None,
    max_turns: int = 5000,
    stream: bool = False,
) -> Game:
    """Precondition: the game exists. Plays every remaining turn, `policy` the student (see `student`); safe to
    call again after any interruption."""
    game = games_with_scenario().get(pk=game_id)
    return play_to_end(
        game,
        bot=student(game, policy),
        on_progress=on_progress,
        label=_purpose,
        max_steps=max_turns,
        stream=stream,
    )


def _purpose(game: Game, step: NextStep) -> str:
    detail: Step = step.detail
    return detail.purpose or detail.kind
