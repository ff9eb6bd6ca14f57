"""The one door for an AI step's model call and its commit: the game's token budget, its playing model, the call
through the gateway (streamed to whoever watches), the record of the call, and the commit of the move the reply
became. A kind supplies only the request (built knowing whether the offline model will read it) and how a reply
becomes its move; model output reaches the game only as an event its machine accepts.

Every call is on record: one that answered, as a `ModelCall` row committed with the step; one that failed, or whose
reply is no move, or whose move came too late (another driver played the turn), as a row of its own (it was paid
for, so it counts against the budget). Kinds whose step makes several calls at once (Message Lab's parallel stages,
the social feed's reasoner) use `ask` per call, outside the database, and the rest of this door around them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from django.utils import timezone

from simulations import faults
from simulations.ai import costs, gateway, tokens
from simulations.ai.model_spec import ModelSpec
from simulations.engine.errors import MachineError
from simulations.engine.model_replies import ReplyError
from simulations.models import Game
from simulations.services.content.model_choice import game_specs
from simulations.services.ledger.turns import (
    GameFinished,
    ModelCallRecord,
    StaleTurn,
    commit_event,
    record_failed_call,
    record_uncommitted_calls,
)
from simulations.services.play.budget import check_budget

ChunkSink = Callable[[str], None]
T = TypeVar("T")


@dataclass(frozen=True)
class ModelRequest:
    """What is sent, and what its record says of it."""

    messages: list[dict[str, Any]]
    role: str  # the seat or persona asked (ModelCall.role)
    purpose: str
    context: list[int]  # the transcript seqs the prompt was built from
    prompt_version: str


@dataclass(frozen=True)
class Asked:
    """A call that answered: the reply and its record."""

    reply: gateway.Completion
    record: ModelCallRecord


@dataclass(frozen=True)
class Move:
    """A model's reply or a student's form read as the kind's move: the event, its payload, the model calls its
    reading made (e.g. a judge's, recorded with the move whatever their outcome), and what to do once the move is
    committed or refused (`after`: e.g. release a claim on the turn)."""

    event: str
    payload: dict[str, Any]
    more_calls: tuple[ModelCallRecord, ...] = ()
    after: Callable[[], object] | None = None


def ask(
    request: ModelRequest,
    spec: ModelSpec,
    *,
    on_chunk: ChunkSink | None = None,
    on_restart: Callable[[], None] | None = None,
) -> Asked:
    """One call, touching no database (a worker thread may make it). Raises the gateway's ModelFailure."""
    started = timezone.now()
    faults.point("before_model_call")
    reply = gateway.complete(request.messages, spec=spec, on_chunk=on_chunk, on_restart=on_restart)
    return Asked(reply, record_of(request, reply, started=started))


def record_of(
    request: ModelRequest, reply: gateway.Completion, *, started: datetime | None = None
) -> ModelCallRecord:
    """The record of a call that answered (also one made elsewhere, e.g. a judge's with its own response format)."""
    return ModelCallRecord(
        role=request.role, purpose=request.purpose, context=request.context,
        prompt_version=request.prompt_version, prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens, token_count_method=reply.token_count_method, model=reply.model,
        latency_ms=reply.latency_ms, cost_usd=costs.call_cost(reply.model, reply.prompt_tokens, reply.completion_tokens),
        started_at=started,
    )  # fmt: skip


def failed(
    request: ModelRequest, spec: ModelSpec, failure: gateway.ModelFailure, asked: Asked | None = None
) -> ModelCallRecord:
    """The record of a call that gave nothing usable: no answer (its prompt's tokens estimated), or an answer that is
    no move (`asked`: its tokens and cost). A kind that goes on without it commits it with its step."""
    if asked is None:
        return ModelCallRecord(
            role=request.role, purpose=request.purpose, context=request.context,
            prompt_version=request.prompt_version, prompt_tokens=costs.estimated_prompt_tokens(request.messages),
            completion_tokens=0, token_count_method=tokens.METHOD, model=spec.model, latency_ms=0, status="error",
            error=failure.record[:300],
        )  # fmt: skip
    return ModelCallRecord(
        role=request.role, purpose=request.purpose, context=request.context, prompt_version=request.prompt_version,
        prompt_tokens=asked.reply.prompt_tokens, completion_tokens=asked.reply.completion_tokens,
        token_count_method=asked.reply.token_count_method, model=asked.reply.model,
        latency_ms=asked.reply.latency_ms, status="error", error=failure.record[:300], cost_usd=asked.record.cost_usd,
        started_at=asked.record.started_at,
    )  # fmt: skip


def record_failure(game: Game, record: ModelCallRecord) -> None:
    """A failed call's record (`failed`) stored on its own: the step it was for does not commit."""
    record_failed_call(
        game=game, role=record.role, purpose=record.purpose, model=record.model, error=record.error,
        context=record.context, prompt_tokens=record.prompt_tokens, completion_tokens=record.completion_tokens,
        token_count_method=record.token_count_method, cost_usd=record.cost_usd,
    )  # fmt: skip


class CallFailed(Exception):
    """A call that gave nothing usable: `failure` is what the game's pages are told, `record` the call's record."""

    def __init__(self, failure: gateway.ModelFailure, record: ModelCallRecord) -> None:
        super().__init__(str(failure))
        self.failure, self.record = failure, record


def ask_and_read(
    request: ModelRequest,
    spec: ModelSpec,
    read: Callable[[str], T],
    *,
    attempts: int = 1,
    on_chunk: ChunkSink | None = None,
    on_restart: Callable[[], None] | None = None,
) -> tuple[T, Asked]:
    """Asks and reads the reply (`read` raises ReplyError, MachineError or ModelFailure for a reply that is no
    move); a reply that cannot be read (`ReplyError`) is asked for again, up to `attempts` calls in all. Touches no
    database. Raises CallFailed."""
    for attempt in range(attempts):
        if attempt and on_restart:
            on_restart()  # the words relayed so far are void
        try:
            asked = ask(request, spec, on_chunk=on_chunk, on_restart=on_restart)
        except gateway.ModelFailure as exc:
            raise CallFailed(exc, failed(request, spec, exc)) from exc
        try:
            return read(asked.reply.text), asked
        except ReplyError as exc:
            if attempt + 1 < attempts:
                continue
            raise _no_move(request, spec, asked, exc) from exc
        except (MachineError, gateway.ModelFailure) as exc:
            raise _no_move(request, spec, asked, exc) from exc
    raise AssertionError("unreachable: the last attempt returns or raises")


def play_model_step(
    game: Game,
    build: Callable[[ModelSpec], ModelRequest],
    read: Callable[[str], Move],
    *,
    on_chunk: ChunkSink | None = None,
    on_restart: Callable[[], None] | None = None,
    attempts: int = 1,
    on_latest: bool = False,
) -> Game:
    """Precondition: the game's next step is this AI step. Checks the budget, builds the request for the game's
    playing model, asks it (streaming to `on_chunk`), reads the reply into a move (`ask_and_read`) and commits it
    with the calls' records; returns the game as committed. Raises ModelFailure (a failed call, or a reply that is
    no move: recorded, nothing else stored) and StaleTurn / GameFinished (another driver played the turn first:
    the calls are recorded). `on_latest`: a step in a lane (`NextStep.lane`), committed on the game as it is
    then if another lane committed while the model answered (`commit_event`)."""
    check_budget(game)
    spec, _ = game_specs(game)
    request = build(spec)
    try:
        move, asked = ask_and_read(
            request, spec, read, attempts=attempts, on_chunk=on_chunk, on_restart=on_restart
        )
    except CallFailed as exc:
        record_failure(game, exc.record)
        raise exc.failure from exc.__cause__
    calls = (asked.record, *move.more_calls)
    try:
        return commit_event(
            game_id=game.pk, expected_version=game.version, event=move.event, payload=move.payload,
            model_calls=calls, known=game, on_latest=on_latest,
        )  # fmt: skip
    except (StaleTurn, GameFinished) as exc:
        record_uncommitted_calls(game=game, calls=calls, why=str(exc))
        raise
    except MachineError as exc:  # the machine refused the reply's move: nothing is stored but the call
        refused = _no_move(request, spec, asked, exc)
        record_failure(game, refused.record)
        raise refused.failure from exc


def _no_move(request: ModelRequest, spec: ModelSpec, asked: Asked, exc: Exception) -> CallFailed:
    failure = (
        exc
        if isinstance(exc, gateway.ModelFailure)
        else gateway.ModelFailure(gateway.ModelFailure.MALFORMED, str(exc))
    )
    return CallFailed(failure, failed(request, spec, failure, asked))
