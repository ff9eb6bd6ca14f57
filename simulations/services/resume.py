"""Resume: restore a game from its latest checkpoint and check it agrees with the game's ledger."""

from __future__ import annotations

from typing import TypeVar

from django.db import models, transaction

from simulations.engine.errors import ResumeError
from simulations.kinds.negotiation import machine
from simulations.kinds.negotiation.state import GameState
from simulations.models import Checkpoint, Event, Game, ModelCall, TranscriptEntry, Vote

from .scenarios import scenario_of
from .turns import games_with_scenario

M = TypeVar("M", bound=models.Model)


def resume_game(*, game_id: int) -> tuple[Game, GameState]:
    """Precondition: the game exists. Validates schema and ledger, returns the game and its state."""
    game = games_with_scenario().get(pk=game_id)
    checkpoint = Checkpoint.objects.filter(game=game).order_by("-seq").first()
    if checkpoint is None:
        raise ResumeError("The game has no checkpoint to resume from.")
    state = machine.resume(scenario_of(game.scenario), checkpoint.state)
    last_entry = (
        TranscriptEntry.objects.filter(game=game).order_by("-seq").values_list("seq", flat=True).first()
    )
    last_event = Event.objects.filter(game=game).order_by("-seq").values_list("seq", flat=True).first()
    if (last_entry or 0) != checkpoint.transcript_seq or (last_event or 0) != checkpoint.after_event:
        raise ResumeError("The transcript or event log does not match the latest checkpoint.")
    if checkpoint.state != game.state:
        raise ResumeError("The game's state document does not match its latest checkpoint.")
    return game, state


def fork_at_checkpoint(*, checkpoint: Checkpoint) -> Game:
    """A new game holding exactly what its source had at `checkpoint`, as a crash right after it would leave.

    Used to check resume parity, and to let an instructor replay a game from any turn.
    """
    source = checkpoint.game
    with transaction.atomic():
        fork = Game.objects.create(
            owner=source.owner, scenario=source.scenario, seed=source.seed, phase=checkpoint.state["status"],
            human_role=checkpoint.state.get("human_role") or "", state=checkpoint.state, version=checkpoint.seq,
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
        voted = {i["issue_id"] for i in checkpoint.state["round3"]["issues"] if i["adopted"] is not None}
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
