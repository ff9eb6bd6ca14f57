"""Message Lab's AI steps: a stage's model calls, run concurrently where the stage is parallel, committed in the
panel's fixed order.

Every call of a parallel stage is built from the state as the stage found it (a critic never reads another
critique of the same round), so the order in which answers arrive changes nothing: output i commits once outputs
1..i-1 have. A kill half-way keeps what committed; the next driver asks only for what the stage still owes. A call
that fails after the gateway's retries, a reply that is still unusable after a second try, or a spent budget moves
the simulation to FAILED with the reason (committed like any event); the player resumes it from the page.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from simulations import faults
from simulations.ai import costs, gateway, tokens
from simulations.engine.errors import MachineError
from simulations.kinds import kind_of
from simulations.models import Game
from simulations.services.budget import BudgetExhausted, check_budget
from simulations.services.model_choice import game_specs
from simulations.services.turns import ModelCallRecord, StaleTurn, commit_event, record_failed_call

from . import prompts
from .games import scenario_of, state_of
from .machine import Event, Step

REPLY_ATTEMPTS = 2  # a reply that is not the JSON asked for is asked again once before the stage fails
ROLE_CHARS = 16  # ModelCall.role's width


@dataclass(frozen=True)
class Answer:
    payload: dict[str, object]
    record: ModelCallRecord


class StageFailed(Exception):
    def __init__(self, failure: gateway.ModelFailure, request: prompts.Request) -> None:
        self.failure, self.request = failure, request


Relays = Callable[
    [prompts.Request], tuple[Callable[[str], None] | None, Callable[[], None] | None, Callable[[], None]]
]


def play_ai_step(game: Game, step: Step, *, relays: Relays | None = None) -> Game:
    """Precondition: `step` is the game's next step, an AI one. Commits each output the step owes, in order."""
    scenario, state = scenario_of(game), state_of(game)
    requests = prompts.requests_for(scenario, state, step)
    try:
        check_budget(game)
    except BudgetExhausted as exc:
        return _fail(game, exc, requests[0])
    playing, _ = game_specs(game)
    width = max(1, min(state.config.parallel if step.parallel else 1, len(requests)))
    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="message-lab") as pool:
        stop = threading.Event()
        futures: list[Future[Answer]] = [
            pool.submit(_ask, req, playing, relays, stop, context=len(state.transcript)) for req in requests
        ]
        try:
            for req, future in zip(requests, futures, strict=True):
                try:
                    answer = future.result()
                except StageFailed as exc:
                    stop.set()
                    _record(game, exc)
                    return _fail(game, exc.failure, req)
                game = commit_event(
                    game_id=game.pk, expected_version=game.version, event=req.event.value,
                    payload=answer.payload, model_calls=(answer.record,),
                )  # fmt: skip
        finally:
            stop.set()
            for future in futures:
                future.cancel()
    return game


def _ask(
    req: prompts.Request, spec: object, relays: Relays | None, stop: threading.Event, *, context: int
) -> Answer:
    """One output, in a worker thread: the model call (no database here), its reply read back as the payload."""
    from simulations.ai.model_spec import ModelSpec

    assert isinstance(spec, ModelSpec)
    if stop.is_set():
        raise StageFailed(gateway.ModelFailure(gateway.ModelFailure.ERROR, "stage stopped"), req)
    on_chunk, on_restart, close = relays(req) if relays else (None, None, lambda: None)
    messages = prompts.with_facts(req) if spec.offline else req.messages
    started = timezone.now()
    faults.point("before_model_call")
    try:
        for attempt in range(REPLY_ATTEMPTS):
            if attempt and on_restart:
                on_restart()
            try:
                result = gateway.complete(messages, spec=spec, on_chunk=on_chunk, on_restart=on_restart)
            except gateway.ModelFailure as exc:
                raise StageFailed(exc, req) from exc
            try:
                payload = prompts.payload_from_reply(req, result.text)
            except prompts.ReplyError as exc:
                if attempt + 1 < REPLY_ATTEMPTS:
                    continue
                raise StageFailed(
                    gateway.ModelFailure(gateway.ModelFailure.MALFORMED, str(exc)), req
                ) from exc
            return Answer(payload.model_dump(mode="json"), _record_of(req, result, started, context))
        raise AssertionError("unreachable")
    finally:
        close()


def _record_of(
    req: prompts.Request, result: gateway.Completion, started: datetime, context: int
) -> ModelCallRecord:
    return ModelCallRecord(
        role=req.unit.persona[:ROLE_CHARS], purpose=req.purpose, context=list(range(1, context + 1)),
        prompt_version=prompts.PROMPT_VERSION, prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens, token_count_method=result.token_count_method,
        model=result.model, latency_ms=result.latency_ms,
        cost_usd=costs.call_cost(result.model, result.prompt_tokens, result.completion_tokens), started_at=started,
    )  # fmt: skip


def _record(game: Game, exc: StageFailed) -> None:
    req = exc.request
    playing, _ = game_specs(game)
    record_failed_call(
        game=game, role=req.unit.persona[:ROLE_CHARS], purpose=req.purpose, model=playing.model,
        error=exc.failure.record, context=[], prompt_tokens=costs.estimated_prompt_tokens(req.messages),
        token_count_method=tokens.METHOD,
    )  # fmt: skip


def _fail(game: Game, failure: gateway.ModelFailure, req: prompts.Request) -> Game:
    """Commit FAILED with the reason, then raise the failure (the driver tells the pages)."""
    who = scenario_of(game).persona(req.unit.persona).name
    reason = f"{who}'s {req.purpose} could not be written: {failure.reason}"
    with contextlib.suppress(StaleTurn, MachineError):  # another driver moved the game on: its outcome stands
        commit_event(
            game_id=game.pk, expected_version=Game.objects.get(pk=game.pk).version,
            event=Event.SIMULATION_FAILED.value, payload={"reason": reason[:600], "cause": failure.cause},
        )  # fmt: skip
    raise failure


# --- headless play: the driver plays the personas; a bot stands in for the player at gates -------------------

MAX_DRIVES = 400


GateBot = Callable[[Game], dict[str, object]]


def approve(game: Game) -> dict[str, object]:
    """The default player at a gate: keeps the panel's survivors and adds no direction."""
    return {}


def play_headless(
    game: Game,
    *,
    at_gate: GateBot = approve,
    resume_failed: bool = False,
    on_progress: Callable[[Game, str], None] | None = None,
) -> Game:
    """To OUTPUT_READY; safe to call again after any interruption. A FAILED simulation is resumed only when
    `resume_failed` (else its failure is raised again)."""
    from simulations.services.drive import Outcome, drive_game

    def progress(g: Game, _: object) -> None:
        if on_progress:
            on_progress(g, g.phase)

    for _ in range(MAX_DRIVES):
        drive = drive_game(game_id=game.pk, stream=False, on_step=progress)
        if drive.outcome is Outcome.HELD:
            time.sleep(min(drive.retry_in + 0.1, 5.0))
            continue
        game = Game.objects.select_related("scenario").get(pk=game.pk)
        step = kind_of(game).next_step(game)
        detail = step.detail
        assert isinstance(detail, Step)
        if detail.done:
            return game
        if detail.event is Event.GATE_DECIDED:
            game = commit_event(
                game_id=game.pk,
                expected_version=game.version,
                event=detail.event.value,
                payload=at_gate(game),
            )
        elif detail.event is Event.SIMULATION_RESUMED:
            if not resume_failed:
                failure = state_of(game).failure
                raise drive.failure or RuntimeError(failure.reason if failure else "the simulation failed")
            game = commit_event(game_id=game.pk, expected_version=game.version, event=detail.event.value)
        if on_progress:
            on_progress(game, game.phase)
    raise RuntimeError(f"Message Lab game {game.pk} did not finish within {MAX_DRIVES} drives")
