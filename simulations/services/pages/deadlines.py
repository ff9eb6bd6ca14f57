"""Callbacks run a little later, all from one thread per process.

A streaming turn's relay (`drive.StreamRelay`) holds back words that arrive too soon after its last frame and
sends them a moment later if nothing else comes. A `threading.Timer` for that started a thread for every such
frame, hundreds a second under a class's load, each thread's start and exit paid under the GIL. Here one daemon thread waits for the earliest deadline instead.
Callbacks run in that thread one after another, so they must be short (a relay's flush sends one message).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class Scheduled:
    """A callback waiting for its time; `cancel()` before then and it never runs."""

    __slots__ = ("when", "callback", "cancelled")

    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when, self.callback, self.cancelled = when, callback, False

    def cancel(self) -> None:
        self.cancelled = True


class Deadlines:
    def __init__(self, name: str) -> None:
        self.name = name
        self._heap: list[tuple[float, int, Scheduled]] = []
        self._order = itertools.count()  # ties run in the order they were asked for
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def call_later(self, delay: float, callback: Callable[[], None]) -> Scheduled:
        item = Scheduled(time.monotonic() + max(0.0, delay), callback)
        with self._wake:
            heapq.heappush(self._heap, (item.when, next(self._order), item))
            if self._thread is None or not self._thread.is_alive():  # first use, or after a fork
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            elif self._heap[0][2] is item:
                self._wake.notify()  # earlier than what the thread sleeps for
        return item

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    self._wake.wait(self._heap[0][0] - time.monotonic() if self._heap else None)
                _, _, item = heapq.heappop(self._heap)
            if item.cancelled:
                continue
            try:
                item.callback()
            except Exception:  # one failing callback must not stop everyone else's
                log.exception("%s: a scheduled callback failed", self.name)


frames = Deadlines("mercury-frames")
