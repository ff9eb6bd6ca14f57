"""This process's page threads: a small pool, living as long as the process, for the database work of pages and
of what a request does after its answer.

A page's database work (renders, session and version checks) runs here (`simulations.consumers`), not on
channels' one database thread, which every page of the process would share, so that a streamed frame does not
wait behind other pages' renders. The pool is the process's
own, not an event loop's: a loop's threads end with their loop, and a connection still open in a thread that ends
never went back to mercury/db/pool.py (the PostgreSQL test leg, whose tests each run a loop of their own, ran out of
connections). Each call hands its connection back when it ends (`hand_back`).
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from django.db import connection

from mercury.db.pool import hand_back_connections

logger = logging.getLogger("mercury")
P = ParamSpec("P")
T = TypeVar("T")

PAGE_THREADS = 4
_pool: tuple[int, ThreadPoolExecutor] | None = None
_pool_lock = threading.Lock()


def page_threads() -> ThreadPoolExecutor:
    """This process's pool (made on first use, and again in a forked child: a child has none of its parent's
    threads)."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(PAGE_THREADS, thread_name_prefix="mercury-pages"))
        return _pool[1]


def hand_back(fn: Callable[P, T]) -> Callable[P, T]:
    """`fn`, then this thread's connections back to the pool (`hand_back_connections`)."""

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return fn(*args, **kwargs)
        finally:
            hand_back_connections()

    return call


def soon(fn: Callable[P, object], *args: P.args, **kwargs: P.kwargs) -> None:
    """`fn` in the page threads, not waited for: database work a request's answer does not depend on (queueing
    the drive inside the move's request would slow every move under load); a failure is logged. Inside a transaction (a test's) it runs here and now: its rows are not visible to
    another connection yet."""
    if connection.in_atomic_block:
        fn(*args, **kwargs)
        return
    page_threads().submit(_logged(hand_back(fn)), *args, **kwargs)


def _logged(fn: Callable[P, T]) -> Callable[P, T | None]:
    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> T | None:
        try:
            return fn(*args, **kwargs)
        except Exception:  # nobody waits for it: say so in the log
            logger.exception("%s failed in a page thread", getattr(fn, "__name__", fn))
            return None

    return call
