"""A negotiation forked at one of its checkpoints: what a crash right after it would leave."""

from __future__ import annotations

from typing import TypeVar

from django.db import models, transaction

from simulations.models import Checkpoint, Event, Game, ModelCall, TranscriptEntry, Vote
from simulations.services.ledger.checkpoints import state_at

M = TypeVar("M", bound=models.Model)


def fork_at_checkpoint(*, checkpoint: Checkpoint) -> Game:
    """A new game holding exactly what its source had at `checkpoint`, as a crash right after it would leave.

    Used to check resume parity, and to let an instructor replay a game from any turn.
    """
    source = checkpoint.game
    state = state_at(checkpoint)
    with transaction.atomic():
        fork = Game.objects.create(
            owner=source.owner, scenario=source.scenario, seed=source.seed, phase=state["status"],
            human_role=state.get("human_role") or "", state=state, version=checkpoint.seq,
            model_choice_id=source.model_choice_id, model=source.model, judge_model=source.judge_model,
            model_access=source.model_access,
        )  # fmt: skip
        TranscriptEntry.objects.bulk_create(
            _clone(e, fork) for e in source.entries.filter(seq__lte=checkpoint.transcript_seq)
        )
        Event.objects.bulk_create(
            _clone(e, fork) for e in source.events.filter(seq__lte=checkpoint.after_event)
        )
        Checkpoint.objects.bulk_create(
            _clone(c, fork) for c in source.checkpoints.filter(seq__lte=checkpoint.seq)
        )
        voted = {i["issue_id"] for i in state["round3"]["issues"] if i["adopted"] is not None}
        Vote.objects.bulk_create(_clone(v, fork) for v in source.votes.filter(issue__in=voted))
        ModelCall.objects.bulk_create(
            _clone(m, fork) for m in source.model_calls.filter(event_seq__lte=checkpoint.after_event)
        )
    return fork


def _clone(row: M, game: Game) -> M:
    row.pk = None
    row.id = None  # type: ignore[attr-defined]
    row.game = game  # type: ignore[attr-defined]
    row._state.adding = True
    return row
