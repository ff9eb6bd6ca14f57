"""A process keeps each game's append-only rows and reads only those added since its last read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import pytest

from simulations.kinds.negotiation.prompts import SeenEntry
from simulations.kinds.negotiation.turns import seen_entries
from simulations.models import Game, TranscriptEntry
from simulations.services.ledger.appended import AppendedRows, committed
from simulations.services.play.drive import drive_game
from tests.helpers import game_at_the_first_debate

T0 = datetime(2026, 11, 27, tzinfo=UTC)


class Row(NamedTuple):
    seq: int
    game_id: int


class Table:
    """Rows in memory, counting how many each read returned."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.read: list[int] = []

    def fetch(self, game_id: int, after: int) -> list[Row]:
        found = [r for r in self.rows if r.game_id == game_id and r.seq > after]
        self.read.append(len(found))
        return found

    def add(self, game_id: int, n: int) -> None:
        start = max((r.seq for r in self.rows if r.game_id == game_id), default=0)
        self.rows += [Row(start + i + 1, game_id) for i in range(n)]


def test_rows_are_read_once_then_only_those_added_since() -> None:
    table = Table()
    kept = AppendedRows(table.fetch)
    table.add(1, 5)
    assert [r.seq for r in kept.rows(game_id=1, created_at=T0)] == [1, 2, 3, 4, 5]
    table.add(1, 2)
    assert [r.seq for r in kept.rows(game_id=1, created_at=T0)] == [1, 2, 3, 4, 5, 6, 7]
    assert kept.rows(game_id=1, created_at=T0) == tuple(table.rows)
    assert table.read == [5, 2, 0]


def test_a_game_id_given_out_again_is_another_game() -> None:
    table = Table()
    kept = AppendedRows(table.fetch)
    table.add(1, 3)
    assert len(kept.rows(game_id=1, created_at=T0)) == 3
    table.rows = [Row(1, 1)]  # the database was emptied; a new game got id 1 and wrote one row
    assert kept.rows(game_id=1, created_at=T0 + timedelta(microseconds=1)) == (Row(1, 1),)


def test_the_oldest_games_go_first() -> None:
    table = Table()
    kept = AppendedRows(table.fetch, games=2)
    for game_id in (1, 2, 3):
        table.add(game_id, 1)
        kept.rows(game_id=game_id, created_at=T0)
    kept.rows(game_id=2, created_at=T0)  # kept: read again from where it ended
    kept.rows(game_id=1, created_at=T0)  # gone: read whole again
    assert table.read == [1, 1, 1, 0, 1]


@pytest.mark.django_db
def test_a_turns_entries_equal_a_fresh_read_of_the_transcript_as_the_game_goes_on() -> None:
    game = game_at_the_first_debate()
    lengths = []
    for _ in range(4):
        assert seen_entries(game) == read_whole(game)
        lengths.append(len(read_whole(game)))
        assert drive_game(game_id=game.pk, max_steps=1, stream=False).steps == 1
        game = Game.objects.get(pk=game.pk)
    assert seen_entries(game) == read_whole(game)
    assert lengths == sorted(set(lengths))  # each step added entries


def read_whole(game: Game) -> list[SeenEntry]:
    rows = TranscriptEntry.objects.filter(game=game).order_by("seq")
    return [
        SeenEntry(*r)
        for r in rows.values_list(
            "seq", "speaker", "kind", "visibility", "audience", "text", "round", "issue"
        )
    ]


def test_rows_known_to_cover_the_readers_version_are_not_read_again_and_commits_here_add_theirs() -> None:
    table = Table()
    kept = AppendedRows(table.fetch, written=lambda advance: advance)
    table.add(1, 3)
    assert len(kept.rows(game_id=1, created_at=T0, version=5)) == 3  # read at version 5
    assert len(kept.rows(game_id=1, created_at=T0, version=5)) == 3 and table.read == [3]  # no query
    # A commit in this process, from version 5 to 6, wrote two rows: they are added without a read.
    table.add(1, 2)
    committed(game_id=1, created_at=T0, before=5, after=6, advance=table.rows[-2:])
    assert kept.rows(game_id=1, created_at=T0, version=6) == tuple(table.rows) and table.read == [3]
    # A commit elsewhere (6 -> 7) is not known here: a reader at version 7 reads what was added.
    table.add(1, 1)
    assert kept.rows(game_id=1, created_at=T0, version=7) == tuple(table.rows) and table.read == [3, 1]
    # A commit that does not follow what is kept (from 9, while 7 is known) adds nothing: the next read does.
    table.add(1, 1)
    committed(game_id=1, created_at=T0, before=9, after=10, advance=table.rows[-1:])
    assert kept.rows(game_id=1, created_at=T0, version=10) == tuple(table.rows) and table.read == [3, 1, 1]
    # A read that ran between a commit and its being added here already has its rows: they are not added twice.
    table.add(2, 3)
    kept.rows(game_id=2, created_at=T0, version=3)
    table.add(2, 2)  # a commit elsewhere, 3 -> 4
    table.add(2, 1)  # this process's commit, 4 -> 5, not yet added here...
    assert len(kept.rows(game_id=2, created_at=T0, version=4)) == 6  # ...when a reader at 4 reads all three
    committed(game_id=2, created_at=T0, before=4, after=5, advance=table.rows[-1:])
    game_2 = tuple(r for r in table.rows if r.game_id == 2)
    assert kept.rows(game_id=2, created_at=T0, version=5) == game_2
    del table.read[-2:]  # game 2's two reads
    # A reader without a version always looks for more.
    game_1 = tuple(r for r in table.rows if r.game_id == 1)
    assert kept.rows(game_id=1, created_at=T0) == game_1 and table.read == [3, 1, 1, 0]


@pytest.mark.django_db(transaction=True)  # commits for real: what a commit adds is taken only once committed
def test_a_drive_reads_the_transcript_once_and_then_keeps_what_its_own_turns_wrote(monkeypatch: Any) -> None:
    from simulations.kinds.negotiation import entries
    from simulations.kinds.negotiation import turns as ai_turns

    game = game_at_the_first_debate()
    reads: list[int] = []
    for appended in (entries._ENTRIES, ai_turns._STANCE_CHANGES):
        appended._kept.clear()  # as in a process that has not read this game yet (its set-up was played here)
        fetch = appended._fetch

        def counted(game_id: int, after: int, fetch: Any = fetch) -> Any:
            reads.append(game_id)
            return fetch(game_id, after)

        monkeypatch.setattr(appended, "_fetch", counted)
    assert drive_game(game_id=game.pk, max_steps=5, stream=False).steps == 5
    assert reads == [game.pk, game.pk]  # the first turn's prompt: entries and stance changes, once each
    game = Game.objects.get(pk=game.pk)
    assert seen_entries(game) == read_whole(game) and len(reads) == 2
    kept_changes = ai_turns._STANCE_CHANGES.rows(
        game_id=game.pk, created_at=game.created_at, version=game.version
    )
    fresh = ai_turns._STANCE_CHANGES._fetch(game.pk, 0)
    assert list(kept_changes) == list(fresh) and kept_changes


@pytest.mark.django_db(transaction=True)
def test_a_pages_render_after_turns_driven_in_its_process_reads_no_entries() -> None:
    """The embedded set-up: the page and the driver share a process, so the render after a turn takes the new
    entries and the heading before them from what the process keeps, and shows what a fresh read shows."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from simulations.kinds.negotiation import entries
    from simulations.kinds.negotiation.presenters import render_update, transcript
    from simulations.services.ledger.turns import load_game

    game = game_at_the_first_debate()
    shown = transcript(game)[-1].seq  # the page's first render
    assert drive_game(game_id=game.pk, max_steps=4, stream=False).steps == 4
    game = load_game(game.pk)
    with CaptureQueriesContext(connection) as queries:
        _, last = render_update(game, since_seq=shown, full=False)
        new = transcript(game, since_seq=shown)
    assert last > shown and new and new[-1].seq == last
    assert not [q for q in queries if "transcriptentry" in q["sql"].lower()]
    entries._ENTRIES._kept.clear()  # a process that has kept nothing: it reads them
    assert transcript(game, since_seq=shown) == new
