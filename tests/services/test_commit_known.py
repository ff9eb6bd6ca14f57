"""A commit given the game its caller read (`known`) locks the row without reading it again: it commits the same
turn as a commit that reads it, refuses a version that moved on, and leaves the caller's game as it was."""

from __future__ import annotations

from typing import Any

import pytest

from simulations import faults
from simulations.kinds.negotiation.games import step_of
from simulations.models import Checkpoint, Game, TranscriptEntry
from simulations.services.ledger.turns import StaleTurn, commit_event
from tests.helpers import game_at_first_ai_turn

pytestmark = pytest.mark.django_db

TEXT = "Canada supports a binding instrument with firm dates for products."


def _commit(game: Game, *, known: bool) -> Game:
    step = step_of(game)
    return commit_event(
        game_id=game.pk, expected_version=game.version, event=step.events[0], payload={"text": TEXT},
        known=game if known else None,
    )  # fmt: skip


def _written(game: Game) -> tuple[Any, ...]:
    row = Game.objects.get(pk=game.pk)
    entries = list(TranscriptEntry.objects.filter(game=game).order_by("seq").values_list("speaker", "text"))
    checkpoint = (
        Checkpoint.objects.filter(game=game).order_by("-seq").values_list("seq", "after_event").first()
    )
    return row.version, row.phase, row.state, entries, checkpoint


def test_it_commits_what_a_commit_that_reads_the_row_commits() -> None:
    read, kept = game_at_first_ai_turn(seed=3), game_at_first_ai_turn(seed=3)
    assert step_of(read).kind == "ai"
    by_reading, by_known = _commit(read, known=False), _commit(kept, known=True)
    assert by_known.version == by_reading.version == read.version + 1
    first, second = _written(by_reading), _written(by_known)
    assert first[:3] == second[:3] and [e[1] for e in first[3]] == [e[1] for e in second[3]]
    assert first[4] == second[4]


def test_a_version_that_moved_on_is_refused_and_the_callers_game_is_untouched() -> None:
    game = game_at_first_ai_turn(seed=4)
    stale = Game.objects.get(pk=game.pk)
    _commit(game, known=True)
    before = (stale.version, stale.state)
    with pytest.raises(StaleTurn):
        _commit(stale, known=True)
    assert (stale.version, stale.state) == before


def test_a_commit_that_fails_inside_leaves_the_callers_game_as_it_was() -> None:
    game = game_at_first_ai_turn(seed=5)
    before = (game.version, game.phase, game.state)
    faults.arm("inside_commit", 1, raise_instead=True)
    try:
        with pytest.raises(faults.InjectedFault):
            _commit(game, known=True)
    finally:
        faults.disarm()
    assert (game.version, game.phase, game.state) == before
    assert Game.objects.get(pk=game.pk).version == game.version
    assert _commit(game, known=True).version == game.version + 1  # and it commits once the fault is gone
