"""Committing turns. One committed turn = one transaction: the event, the automatic system events that follow it
up to the next human or AI decision, their transcript entries, stance changes, vote record and one checkpoint.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from simulations import faults
from simulations.engine import mercury
from simulations.engine.mercury import Outcome, Step
from simulations.engine.scenario import Scenario
from simulations.engine.state import GameState
from simulations.models import (
    Checkpoint,
    Event,
    Game,
    ModelCall,
    ScenarioVersion,
    Submission,
    TranscriptEntry,
    Vote,
)

from .broadcast import notify_game_advanced
from .model_choice import pinned_fields
from .scenarios import scenario_of

log = logging.getLogger(__name__)


class StaleTurn(Exception):
    """Somebody else committed this turn first."""

    MESSAGE = "This turn was already played; the game has moved on."

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


class GameFinished(Exception):
    MESSAGE = "This game is finished."

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


@dataclass(frozen=True)
class ModelCallRecord:
    role: str
    purpose: str
    context: list[int]
    prompt_version: str
    prompt_tokens: int
    completion_tokens: int
    token_count_method: str
    model: str
    latency_ms: int
    status: str = "ok"  # "error": the call gave nothing usable (a judge call's turn goes on by the rules)
    error: str = ""
    outcome: str = ""  # judge calls: used | fallback | failed
    outcome_reason: str = ""
    cost_usd: float | None = None


def games_with_scenario() -> QuerySet[Game]:
    """Games with their scenario version, minus the large document column (scenarios are parsed once, cached)."""
    return Game.objects.select_related("scenario").defer("scenario__document")


def state_of(game: Game) -> GameState:
    return GameState.model_validate(game.state)


def step_of(game: Game) -> Step:
    return mercury.next_step(scenario_of(game.scenario), state_of(game))


def create_game(
    *, scenario_version: ScenarioVersion, seed: int, owner: User | None = None, model: str | None = None
) -> Game:
    """Create a game in ROLE_SELECTION (BOOT -> NEW_GAME_CREATED), with its first checkpoint, pinned to the model
    option `model` (see services.model_choice; None: the settings' model). Raises UnknownModelChoice."""
    scenario = scenario_of(scenario_version)
    outcomes = _run(scenario, mercury.new_game(seed), "NEW_GAME_CREATED", {})
    pinned = pinned_fields(model)
    with transaction.atomic():
        game = Game.objects.create(
            owner=owner, scenario=scenario_version, seed=seed, phase="BOOT", state={}, version=0, **pinned
        )
        _write(game, outcomes, ())
    return game


def commit_event(
    *,
    game_id: int,
    expected_version: int,
    event: str,
    payload: dict[str, Any] | None = None,
    model_calls: tuple[ModelCallRecord, ...] = (),
    idempotency_key: str | None = None,
) -> Game:
    """Apply `event` to the game at `expected_version` and commit it with its automatic follow-ups.

    With an idempotency key, the same key commits at most once (a double click, a re-sent form)."""
    try:
        game = _commit(game_id, expected_version, event, payload, model_calls, idempotency_key)
    except IntegrityError as exc:  # two processes raced with the same key: the loser played nothing
        raise StaleTurn() from exc
    faults.point("after_commit")
    return game


def _commit(
    game_id: int,
    expected_version: int,
    event: str,
    payload: dict[str, Any] | None,
    model_calls: tuple[ModelCallRecord, ...],
    idempotency_key: str | None,
) -> Game:
    with transaction.atomic():
        # BEGIN IMMEDIATE (SQLite) / row lock (PostgreSQL): one writer per game at a time.
        game = games_with_scenario().select_for_update().get(pk=game_id)
        if game.version != expected_version:
            raise StaleTurn()
        if idempotency_key and Submission.objects.filter(game=game, key=idempotency_key).exists():
            raise StaleTurn()
        if game.status == Game.Status.FINISHED and event != "AI_SUMMARY_READY":
            raise GameFinished()
        scenario = scenario_of(game.scenario)
        outcomes = _run(scenario, state_of(game), event, payload or {})
        _write(game, outcomes, model_calls)
        if idempotency_key:
            Submission.objects.create(game=game, key=idempotency_key[:64], event_seq=outcomes[0].seq)
        faults.point("inside_commit")
        if settings.MERCURY_BROADCAST:
            transaction.on_commit(partial(notify_game_advanced, game.pk))
    return game


def _run(scenario: Scenario, state: GameState, event: str, payload: dict[str, Any]) -> list[Outcome]:
    """The event, then every system event the machine takes on its own until someone must decide."""
    outcomes = [mercury.apply(scenario, state, event, payload)]
    while True:
        step = mercury.next_step(scenario, outcomes[-1].state)
        if step.kind != "system":
            return outcomes
        outcomes.append(mercury.apply(scenario, outcomes[-1].state, step.events[0]))


def write_ledger(game: Game, outcomes: list[Outcome]) -> None:
    """The append-only rows a run of outcomes produced: transcript entries, events, votes."""
    TranscriptEntry.objects.bulk_create(
        TranscriptEntry(
            game=game, seq=e.seq, round=e.round, phase=e.phase, issue=e.issue or "", speaker=e.speaker,
            kind=e.kind, visibility=e.visibility, audience=e.audience, text=e.text,
        )
        for o in outcomes
        for e in o.entries
    )  # fmt: skip
    Event.objects.bulk_create(
        Event(
            game=game, seq=o.seq, name=o.event, from_state=o.source, to_state=o.target, actor=o.actor,
            payload=o.payload, stance_changes=[c.as_dict() for c in o.stance_changes],
        )
        for o in outcomes
    )  # fmt: skip
    Vote.objects.bulk_create(Vote(game=game, **o.vote) for o in outcomes if o.vote)


def _write(game: Game, outcomes: list[Outcome], model_calls: tuple[ModelCallRecord, ...]) -> None:
    final = outcomes[-1].state
    for outcome in outcomes:
        for seq, judgement in outcome.judgements:
            if judgement.source == "fallback":  # also in the export's judge_readings, with this note
                log.warning("game %s entry %s: judged by the rules: %s", game.pk, seq, judgement.note)
    write_ledger(game, outcomes)
    if model_calls:
        first_seq = game.model_calls.count() + 1
        ModelCall.objects.bulk_create(
            ModelCall(game=game, seq=first_seq + n, event_seq=outcomes[0].seq, phase=outcomes[0].source,
                      **vars(call))
            for n, call in enumerate(model_calls)
        )  # fmt: skip
    snapshot = final.model_dump(mode="json")
    Checkpoint.objects.create(
        game=game,
        seq=game.version + 1,
        after_event=final.event_seq,
        transcript_seq=final.transcript_seq,
        schema_version=final.schema_version,
        state=snapshot,
    )
    game.state = snapshot
    game.phase = final.status
    game.human_role = final.human_role or ""
    game.version += 1
    if final.status == "REVIEW" and game.status != Game.Status.FINISHED:
        game.status = Game.Status.FINISHED
        game.finished_at = timezone.now()
    game.save(
        update_fields=["state", "phase", "human_role", "version", "status", "finished_at", "updated_at"]
    )


def record_uncommitted_calls(*, game: Game, calls: tuple[ModelCallRecord, ...], why: str) -> None:
    """Log model calls that were made for a move that then did not commit (the turn moved on, the game ended):
    they were paid for, so they are on record and count against the budget. Serialised on the game's row so
    concurrent writers number them without collisions."""
    if not calls:
        return
    with transaction.atomic():
        locked = Game.objects.select_for_update().get(pk=game.pk)
        first_seq = locked.model_calls.count() + 1
        ModelCall.objects.bulk_create(
            ModelCall(game=locked, seq=first_seq + n, event_seq=None, phase=locked.phase,
                      **(vars(call) | {"status": "error", "error": f"not committed: {why}"[:300]}))
            for n, call in enumerate(calls)
        )  # fmt: skip


def record_failed_call(
    *,
    game: Game,
    step: Step,
    model: str,
    error: str,
    context: list[int],
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
    token_count_method: str = "",
    cost_usd: float | None = None,
) -> None:
    """Log a model call that produced no turn (the game itself is untouched). Its prompt was sent, so its tokens
    (estimated: the provider reported none) count against the budget."""
    ModelCall.objects.create(
        game=game, seq=game.model_calls.count() + 1, role=step.role or "debrief", purpose=step.purpose or "",
        phase=game.phase, context=context, model=model, status="error", error=error[:300],
        prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, token_count_method=token_count_method,
        cost_usd=cost_usd,
    )  # fmt: skip
