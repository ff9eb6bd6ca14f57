"""A deliberation's AI steps: a persona's model call (members, the business driver), or the AI proposer's answer
to a veto. Models and tools run outside any transaction; the result commits through the shared ledger writer, and
only as an event the machine accepts."""

from __future__ import annotations

from collections.abc import Callable

from simulations.ai.model_spec import ModelSpec
from simulations.kinds import ChunkSink, Restart
from simulations.models import Game
from simulations.services.ledger.turns import commit_event
from simulations.services.play.model_step import ModelRequest, Move, play_model_step

from . import amendments, offline, prompts
from .amendments import proposer_amendment
from .games import scenario_of, state_of
from .machine import Actor, Event, Step
from .offline_facts import facts_message
from .scenario import DeliberationScenario
from .state import DeliberationState, State

PROMPT_VERSION = "deliberation-v2"  # v2: the code with secrets masked, quoted findings, the code reading


def play_ai_step(
    game: Game, step: Step, *, on_chunk: ChunkSink | None = None, on_restart: Restart | None = None
) -> Game:
    """Precondition: `step` is the game's next step and an AI one. Commits exactly one step: a persona's opinion, or
    the business driver's answer to a veto, read from its JSON reply; the AI proposer's needs no model."""
    scenario, state = scenario_of(game), state_of(game)
    if step.human:
        return _stand_in(game, step)
    if step.actor == Actor.PROPOSER:
        return _proposer(game, step)
    seat = step.seat
    assert seat is not None
    compromise = step.actor == Actor.BUSINESS_DRIVER and state.status == State.VETO

    def build(spec: ModelSpec) -> ModelRequest:
        messages = prompts.build_messages(scenario, state, seat)
        if spec.offline:  # only the offline model reads the facts
            messages.append(facts_message(scenario, state, seat))
        return ModelRequest(
            messages=messages, role=seat, purpose="compromise" if compromise else "opinion",
            context=list(range(1, len(state.log) + 1)), prompt_version=PROMPT_VERSION,
        )  # fmt: skip

    def read(reply: str) -> Move:
        if compromise:
            event, payload = prompts.compromise_from_reply(reply)
        else:
            event, payload = Event.OPINION_GIVEN, prompts.opinion_from_reply(reply, seat=seat)
        return Move(event.value, payload.model_dump(mode="json"))

    return play_model_step(game, build, read, on_chunk=on_chunk, on_restart=on_restart)


def _proposer(game: Game, step: Step) -> Game:
    """The AI proposer after a veto: its amended code (checked by the tools, outside the transaction) or a decline."""
    scenario, state = scenario_of(game), state_of(game)
    move = offline.decide(scenario, state, step, amended=proposer_amendment(scenario, state))
    payload = amendments.payload_for(scenario, move)
    assert payload is not None
    return commit_event(
        game_id=game.pk, expected_version=game.version, event=move.event.value,
        payload=payload.model_dump(mode="json"),
    )  # fmt: skip


def _stand_in(game: Game, step: Step) -> Game:
    """A class group's student's turn played by the seat's AI stand-in (the offline persona of that seat, as the
    seat's bot plays it: no model call), marked as the stand-in's in the ledger and the log. Raises StaleTurn if
    the student moved first."""
    scenario, state = scenario_of(game), state_of(game)
    move = offline.decide(scenario, state, step, amended=proposer_amendment(scenario, state))
    payload = amendments.payload_for(scenario, move)
    return commit_event(
        game_id=game.pk, expected_version=game.version, event=move.event.value,
        payload=(payload.model_copy(update={"stand_in": True}).model_dump(mode="json") if payload is not None
                 else {"stand_in": True}),
    )  # fmt: skip


def submit_human_move(
    *,
    game: Game,
    move: offline.Move,
    expected_version: int | None = None,
    idempotency_key: str | None = None,
) -> Game:
    """Precondition: the person holds the floor. Amended code is checked by the tools first (outside the
    transaction); the move then commits only if the machine accepts it (else a MachineError, nothing stored).
    `expected_version`: the game version the person's page showed (default: the game's); a move from an older
    page, or a second use of `idempotency_key`, raises StaleTurn. Raises `checks.CheckError` for code that
    cannot be reviewed."""
    scenario = scenario_of(game)
    payload = amendments.payload_for(scenario, move)
    return commit_event(
        game_id=game.pk, expected_version=game.version if expected_version is None else expected_version,
        event=move.event.value, payload=payload.model_dump(mode="json") if payload is not None else {},
        idempotency_key=idempotency_key,
    )  # fmt: skip


Decide = Callable[[DeliberationScenario, DeliberationState, Step], offline.Move]
