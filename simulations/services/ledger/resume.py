"""Resume: restore a game (of any kind) from its latest checkpoint and check it agrees with the game's ledger."""

from __future__ import annotations

from typing import Any

from simulations.engine.errors import ResumeError
from simulations.kinds import kind_of
from simulations.models import Checkpoint, Event, Game, TranscriptEntry
from simulations.services.content.scenarios import parsed_scenario
from simulations.services.ledger.checkpoints import state_at
from simulations.services.ledger.turns import games_with_scenario


def resume_game(*, game_id: int) -> tuple[Game, Any]:
    """Precondition: the game exists. Validates schema and ledger, returns the game and its kind's state."""
    game = games_with_scenario().get(pk=game_id)
    checkpoint = Checkpoint.objects.filter(game=game).order_by("-seq").first()
    if checkpoint is None:
        raise ResumeError("The game has no checkpoint to resume from.")
    stored = state_at(checkpoint)  # its keyframe and at most KEYFRAME_EVERY - 1 changes: flat in game length
    state = kind_of(game).restore(parsed_scenario(game.scenario), stored)
    last_entry = (
        TranscriptEntry.objects.filter(game=game).order_by("-seq").values_list("seq", flat=True).first()
    )
    last_event = Event.objects.filter(game=game).order_by("-seq").values_list("seq", flat=True).first()
    if (last_entry or 0) != checkpoint.transcript_seq or (last_event or 0) != checkpoint.after_event:
        raise ResumeError("The transcript or event log does not match the latest checkpoint.")
    if stored != game.state:
        raise ResumeError("The game's state document does not match its latest checkpoint.")
    return game, state
