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
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from simulations.ai import gateway
from simulations.ai.model_spec import ModelSpec
from simulations.engine.errors import MachineError
from simulations.kinds import ChunkSink, Restart, kind_of
from simulations.models import Game
from simulations.services.content.model_choice import game_specs
from simulations.services.ledger.turns import ModelCallRecord, StaleTurn, commit_event
from simulations.services.play.budget import BudgetExhausted, check_budget
from simulations.services.play.model_step import CallFailed, ModelRequest, ask_and_read, record_failure

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
    """An output of a stage could not be written: `record` is its call's record (None: the stage stopped first)."""

    def __init__(
        self, failure: gateway.ModelFailure, request: prompts.Request, record: ModelCallRecord | None
    ) -> None:
        self.failure, self.request, self.record = failure, request, record


Relays = Callable[
    [prompts.Request], tuple[Callable[[str], None] | None, Callable[[], None] | None, Callable[[], None]]
]


def play_ai_step(
    game: Game, step: Step, *, on_chunk: ChunkSink | None = None, on_restart: Restart | None = None
) -> Game:
    """Precondition: `step` is the game's next step, an AI one. Commits each output the step owes, in order. One
    call streams into the driver's own box; a parallel stage's calls each into a box of their own, side by side
    (headless, with nobody watching, none streams)."""
    if not step.parallel:
        return play_outputs(game, step, relays=lambda req: (on_chunk, on_restart, lambda: None))
    return play_outputs(game, step, relays=None if on_chunk is None else _side_by_side(game))


def play_outputs(game: Game, step: Step, *, relays: Relays | None = None) -> Game:
    """`play_ai_step`, each output's stream given by `relays`."""
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
                    if exc.record is not None:
                        record_failure(game, exc.record)
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
    req: prompts.Request, spec: ModelSpec, relays: Relays | None, stop: threading.Event, *, context: int
) -> Answer:
    """One output, in a worker thread: the model call (no database here), its reply read back as the payload."""
    if stop.is_set():
        raise StageFailed(gateway.ModelFailure(gateway.ModelFailure.ERROR, "stage stopped"), req, None)
    on_chunk, on_restart, close = relays(req) if relays else (None, None, lambda: None)
    request = ModelRequest(
        messages=prompts.with_facts(req) if spec.offline else req.messages, role=req.unit.persona[:ROLE_CHARS],
        purpose=req.purpose, context=list(range(1, context + 1)), prompt_version=prompts.PROMPT_VERSION,
    )  # fmt: skip
    try:
        payload, asked = ask_and_read(
            request, spec, lambda reply: prompts.payload_from_reply(req, reply), attempts=REPLY_ATTEMPTS,
            on_chunk=on_chunk, on_restart=on_restart,
        )  # fmt: skip
    except CallFailed as exc:
        raise StageFailed(exc.failure, req, exc.record) from exc
    finally:
        close()
    return Answer(payload.model_dump(mode="json"), asked.record)


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


def _side_by_side(game: Game) -> Relays:
    """A parallel stage's streams: one relay per persona, each filling its own box on the page."""
    from simulations.services.play.drive import StreamRelay

    scenario, kind = scenario_of(game), kind_of(game)

    def relays(req: prompts.Request) -> tuple[ChunkSink, Callable[[], None], Callable[[], None]]:
        relay = StreamRelay(
            game_id=game.pk, speaker=scenario.persona(req.unit.persona).name, kind=kind, slot=req.unit.persona
        )
        return relay.chunk, relay.restart, relay.close

    return relays
