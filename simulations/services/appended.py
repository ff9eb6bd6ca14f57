"""A game's append-only rows (transcript entries, events), kept per process and read again only from where the
last read ended.

An AI turn's prompt reads every earlier entry of its game, and what a seat was persuaded of reads every earlier
event: read whole on every turn, a game's reads grew with the square of its length (a tenth of a headless game's
CPU). These rows are never changed or deleted once written (`models.AppendOnly`), and a game's seqs are given
out under its row lock in commit order, so a reader outside a transaction that has seen seq N has seen every row
up to N: the rows after the newest one kept are all that can be missing.

A game is known by its id and its creation time, so a game whose id was given out again (a test database
flushed, a game deleted) is never taken for the old one.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Generic, Protocol, TypeVar


class HasSeq(Protocol):
    @property
    def seq(self) -> int: ...


Row = TypeVar("Row", bound=HasSeq)
GAMES_KEPT = 256  # games whose rows a process keeps (a worker drives up to a hundred at once; the oldest go)


class AppendedRows(Generic[Row]):
    def __init__(self, fetch: Callable[[int, int], Sequence[Row]], *, games: int = GAMES_KEPT) -> None:
        """`fetch(game_id, after_seq)`: the game's rows with a larger seq, in seq order."""
        self._fetch, self._size = fetch, games
        self._kept: OrderedDict[tuple[int, datetime], tuple[Row, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def rows(self, *, game_id: int, created_at: datetime) -> tuple[Row, ...]:
        """Every row of the game, in seq order (a tuple: callers share it)."""
        key = (game_id, created_at)
        with self._lock:
            kept = self._kept.get(key, ())
        rows = kept + tuple(self._fetch(game_id, kept[-1].seq if kept else 0))
        with self._lock:
            if len(rows) >= len(self._kept.get(key, ())):  # a slower reader does not put back fewer rows
                self._kept[key] = rows
            self._kept.move_to_end(key)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return rows
