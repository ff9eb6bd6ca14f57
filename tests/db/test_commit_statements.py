"""A commit's rows go to the database together (on PostgreSQL, in one pipeline: services/ledger/turns.py `_sent_together`),
and a row that cannot be written still fails the commit as Django's IntegrityError, with nothing of it kept."""

from __future__ import annotations

import pytest
from django.db import connection

from simulations.models import Checkpoint, Event, Game, TranscriptEntry
from simulations.services.ledger import turns
from simulations.services.ledger.turns import StaleTurn, commit_event, create_game
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_commit_whose_rows_collide_is_refused_whole_and_keeps_nothing() -> None:
    game = create_game(scenario_version=mercury_version(), seed=3)
    # A checkpoint already where the next commit writes its own: the commit's insert collides with it (on
    # PostgreSQL when the pipeline is read at its end, after the other rows were sent).
    Checkpoint.objects.create(
        game=game, seq=game.version + 1, after_event=0, transcript_seq=0, schema_version=1, state={"x": 1}
    )
    entries, events = TranscriptEntry.objects.count(), Event.objects.count()
    # StaleTurn: commit_event's answer to an IntegrityError (the turn was played elsewhere).
    with pytest.raises(StaleTurn):
        commit_event(
            game_id=game.pk, expected_version=game.version, event="ROLE_CONFIRMED", payload={"role": "EU"}
        )
    assert Game.objects.get(pk=game.pk).version == game.version
    assert (TranscriptEntry.objects.count(), Event.objects.count()) == (entries, events)


def test_the_rows_of_a_commit_are_sent_in_one_pipeline_on_postgresql(monkeypatch: pytest.MonkeyPatch) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only: SQLite has no pipeline mode")
    game = create_game(scenario_version=mercury_version(), seed=4)
    seen: list[tuple[str, bool]] = []
    insert_rows = turns.insert_rows

    def watched(objs: list[object]) -> None:
        if objs:
            seen.append((type(objs[0]).__name__, connection.connection.pgconn.pipeline_status != 0))
        insert_rows(objs)  # type: ignore[arg-type]

    monkeypatch.setattr(turns, "insert_rows", watched)
    game = commit_event(
        game_id=game.pk, expected_version=game.version, event="ROLE_CONFIRMED", payload={"role": "EU"}
    )
    assert ("Checkpoint", True) in seen and ("Event", True) in seen
    assert Checkpoint.objects.filter(game=game, seq=game.version).exists()
