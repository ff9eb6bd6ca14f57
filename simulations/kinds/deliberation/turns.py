"""A deliberation's AI steps: a persona's model call (members, the business driver), or the AI proposer's answer
to a veto. Models and tools run outside any transaction; the result commits through the shared ledger writer, and
only as an event the machine accepts."""

from __future__ import annotations

import time
from collections.abc import Callable

from simulations.ai import costs, gateway, tokens
from simulations.engine.errors import MachineError
from simulations.models import Game
from simulations.services.budget import check_budget
from simulations.services.model_choice import game_specs
from simulations.services.turns import ModelCallRecord, commit_event, record_failed_call

from . import amendments, machine, offline, prompts
from .amendments import proposer_amendment
from .games import scenario_of, state_of
from .machine import Actor, Event, Step
from .offline_facts import facts_message
from .scenario import DeliberationScenario
from .state import DeliberationState, State

PROMPT_VERSION = "deliberation-v1"
MAX_STEPS = 200  # far above a 5-round deliberation's need; a loop past it is a bug, not a long debate


def play_ai_step(
    *,
    game: Game,
    step: Step,
    on_chunk: Callable[[str], None] | None = None,
    on_restart: Callable[[], None] | None = None,
) -> Game:
    """Precondition: `step` is the game's next step and an AI one. Commits exactly one step."""
    scenario, state = scenario_of(game), state_of(game)
    if step.actor == Actor.PROPOSER:
        return _proposer(game, step)
    assert step.seat is not None
    check_budget(game)
    playing, _ = game_specs(game)
    messages = prompts.build_messages(scenario, state, step.seat)
    if playing.offline:  # only the offline model reads the facts
        messages.append(facts_message(scenario, state, step.seat))
    context = list(range(1, len(state.log) + 1))
    purpose = (
        "compromise" if step.actor == Actor.BUSINESS_DRIVER and state.status == State.VETO else "opinion"
    )
    try:
        result = gateway.complete(messages, spec=playing, on_chunk=on_chunk, on_restart=on_restart)
    except gateway.ModelFailure as exc:
        record_failed_call(
            game=game, role=step.seat, purpose=purpose, model=playing.model, error=exc.record, context=context,
            prompt_tokens=costs.estimated_prompt_tokens(messages), token_count_method=tokens.METHOD,
        )  # fmt: skip
        raise
    record = ModelCallRecord(
        role=step.seat, purpose=purpose, context=context, prompt_version=PROMPT_VERSION,
        prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
        token_count_method=result.token_count_method, model=result.model, latency_ms=result.latency_ms,
        cost_usd=costs.call_cost(result.model, result.prompt_tokens, result.completion_tokens),
    )  # fmt: skip
    try:
        if purpose == "compromise":
            event, payload = prompts.compromise_from_reply(result.text)
        else:
            event, payload = Event.OPINION_GIVEN, prompts.opinion_from_reply(result.text, seat=step.seat)
        return commit_event(
            game_id=game.pk, expected_version=game.version, event=event.value,
            payload=payload.model_dump(mode="json"), model_calls=(record,),
        )  # fmt: skip
    except (prompts.ReplyError, MachineError) as exc:
        # The reply is not a move the committee can take: nothing is stored, the call is on record.
        failure = gateway.ModelFailure(gateway.ModelFailure.MALFORMED, str(exc))
        record_failed_call(
            game=game, role=step.seat, purpose=purpose, model=result.model, error=failure.record, context=context,
            prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
            token_count_method=result.token_count_method, cost_usd=record.cost_usd,
        )  # fmt: skip
        raise failure from exc


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


def play_headless(
    game: Game, *, decide: Decide | None = None, on_progress: Callable[[Game, str], None] | None = None
) -> Game:
    """To the verdict: the driver plays the personas; in the person's seat `decide` chooses the move (default: the
    offline persona, as the seat's own bot would, the AI proposer's amendment included). Safe to call again after
    any interruption."""
    from simulations.services.drive import Outcome, drive_game

    def progress(g: Game, step: object) -> None:
        if on_progress:
            on_progress(g, g.phase)

    for _ in range(MAX_STEPS):
        drive = drive_game(game_id=game.pk, stream=False, on_step=progress)
        if drive.outcome is Outcome.FAILED:
            assert drive.failure is not None
            raise drive.failure
        if drive.outcome is Outcome.HELD:  # another driver is on it: look again when its lease lapses
            time.sleep(min(drive.retry_in + 0.1, 5.0))
            continue
        game = Game.objects.select_related("scenario").get(pk=game.pk)
        scenario, state = scenario_of(game), state_of(game)
        step = machine.next_step(scenario, state)
        if step.done:
            return game
        if not step.human:
            continue
        if decide is None:
            move = offline.decide(scenario, state, step, amended=proposer_amendment(scenario, state))
        else:
            move = decide(scenario, state, step)
        game = submit_human_move(game=game, move=move)
        if on_progress:
            on_progress(game, game.phase)
    raise RuntimeError(f"deliberation {game.pk} did not conclude within {MAX_STEPS} steps")
