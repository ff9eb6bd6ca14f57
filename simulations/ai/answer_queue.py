"""What a model call's thread hands to the thread waiting for the answer (gateway._attempt): ("text", words),
("usage", counts), ("end", finish reason) or ("error", exception), in order.

A streaming model sends a word or two a chunk, 30 to 150 a second. Woken for each, the waiting thread (a game's
drive) cost about 60 µs of CPU a chunk in thread switches alone (a hundred games at 30 words a second: 0.2 of a
core), and every chunk then went through the relay's screen and coalescing on its own, though the page gets at
most five frames a second (services/drive.py, FRAME_INTERVAL) and the negotiation's screen lets words out a
sentence at a time. So words wake the waiting thread at most once every GATHER seconds, and it takes everything
that arrived meanwhile at once; the end of the answer and an error wake it at once, so no answer finishes later
for it. The first words of an answer are handed over as soon as they come, and words already waiting when the
drive asks again are taken without a wait (a model with no typing delay sends its answer in one burst). With no
typing delay a game over HTTP still measured about 10 % slower than before this queue, in 8 of 9 pairs of runs,
for a reason not yet found; at a typing pace under load it saved about a tenth of a turn's CPU
(bench/runs/2026-11-29-fourteenth.md).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

GATHER = 0.1  # seconds: words reach the relay at most this much later than they arrived (the relay waits 0.2)

Item = tuple[str, Any]


class AnswerQueue:
    def __init__(self) -> None:
        self._items: deque[Item] = deque()
        self._changed = threading.Condition(threading.Lock())
        self._wake_for_words = True  # else only the end of the answer (or an error) wakes the waiting thread

    def put(self, item: Item) -> None:
        with self._changed:
            self._items.append(item)
            if item[0] != "text" or self._wake_for_words:
                self._changed.notify()

    def take(self, *, until: float, words_not_before: float = 0.0) -> list[Item]:
        """Everything handed over so far, in order: at once if anything is waiting (a burst, as from a model with
        no typing delay, is taken whole), else once something comes: the end of the answer or an error at once,
        words not before `words_not_before` (time.monotonic()); at `until` whatever there is (empty: nothing came)."""
        waited = False
        with self._changed:
            while True:
                now = time.monotonic()
                items = self._items
                final = any(kind != "text" for kind, _ in items)
                if (items and (not waited or now >= words_not_before or final)) or now >= until:
                    taken = list(items)
                    items.clear()
                    return taken
                waited = True
                self._wake_for_words = now >= words_not_before
                wake_at = until if self._wake_for_words else min(until, words_not_before)
                self._changed.wait(wake_at - now)
