"""A game's append-only rows (transcript entries, events), kept per process and read again only from where the
last read ended.

An AI turn's prompt reads every earlier entry of its game, and what a seat was persuaded of reads every earlier
event: read whole on every turn, a game's reads grew with the square of its length (a tenth of a headless game's
CPU). These rows are never changed or deleted once written (`models.AppendOnly`), and a game's seqs are given
out under its row lock in commit order, so a reader outside a transaction that has seen seq N has seen every row
up to N: the rows after the newest one kept are all that can be missing.

A game is known by its id and its creation time, so a game whose id was given out again (a test database
flushed, a game deleted) is never taken for the old one.

A reader that passes its game's version reads nothing when the rows kept are known to cover that version: kept
rows are labelled with the version they were read at, and a commit made in this process adds its own rows once
it has committed (`committed`, from `turns._write`), so a driver playing turn after turn, and the student's moves
in the same process, never ask the database for rows they wrote themselves (two queries an AI turn).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar


class HasSeq(Protocol):
    @property
    def seq(self) -> int: ...


Row = TypeVar("Row", bound=HasSeq)
GAMES_KEPT = 256  # games whose rows a process keeps (a worker drives up to a hundred at once; the oldest go)


Key = tuple[int, datetime]
_ALL: weakref.WeakSet[AppendedRows[Any]] = weakref.WeakSet()  # what `committed` feeds


class AppendedRows(Generic[Row]):
    def __init__(
        self,
        fetch: Callable[[int, int], Sequence[Row]],
        *,
        written: Callable[[Any], Sequence[Row]] | None = None,
        games: int = GAMES_KEPT,
    ) -> None:
        """`fetch(game_id, after_seq)`: the game's rows with a larger seq, in seq order. `written(advance)`: the
        rows a committed step wrote, as `fetch` would read them (without it, only reads fill what is kept)."""
        self._fetch, self._written, self._size = fetch, written, games
        # Per game: its rows, and the game's version they are known to cover (-1: unknown).
        self._kept: OrderedDict[Key, tuple[tuple[Row, ...], int]] = OrderedDict()
        self._lock = threading.Lock()
        _ALL.add(self)

    def rows(self, *, game_id: int, created_at: datetime, version: int | None = None) -> tuple[Row, ...]:
        """Every row of the game, in seq order (a tuple: callers share it). `version`: the game's version as the
        caller holds it; rows known to cover it are returned without a query."""
        key = (game_id, created_at)
        with self._lock:
            kept, covers = self._kept.get(key, ((), -1))
        if version is not None and covers >= version:
            return kept
        rows = kept + tuple(self._fetch(game_id, kept[-1].seq if kept else 0))
        self._keep(key, rows, -1 if version is None else version)
        return rows

    def _keep(self, key: Key, rows: tuple[Row, ...], covers: int) -> None:
        with self._lock:
            held, held_covers = self._kept.get(key, ((), -1))
            if len(rows) >= len(held):  # a slower reader does not put back fewer rows
                self._kept[key] = (rows, max(covers, held_covers) if len(rows) == len(held) else covers)
            self._kept.move_to_end(key)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)

    def _committed(self, key: Key, before: int, after: int, advance: Any) -> None:
        if self._written is None:
            return
        with self._lock:
            held = self._kept.get(key)
            if held is None or held[1] != before:
                return  # not read here, or not known up to the commit's version: the next read fetches
            # A read between the commit and this call may have fetched these rows already.
            last = held[0][-1].seq if held[0] else 0
            self._kept[key] = (held[0] + tuple(r for r in self._written(advance) if r.seq > last), after)


def committed(*, game_id: int, created_at: datetime, before: int, after: int, advance: Any) -> None:
    """A step that took the game from version `before` to `after` has committed in this process (called after
    the transaction's commit, never inside it: rolled back rows must not be kept)."""
    for appended in list(_ALL):
        appended._committed((game_id, created_at), before, after, advance)
