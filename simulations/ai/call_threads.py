"""The threads model calls run in, kept for the next call instead of one started per call.

A real model's call runs in a thread of its own so that its caller can stop waiting at the deadline
(gateway._attempt; the offline model answers in its caller's thread).
Starting a thread waits for the scheduler to run it, a cost paid on every call of a game on a busy machine. Here
a thread that finished its call waits for the next one instead, and up to
KEEP of them wait at once. A call abandoned at its deadline keeps its thread until the call ends by itself (at its
own read time-out); that thread is then kept or ends like any other.

The threads are daemons, as the per-call threads were: an abandoned call never keeps the process from exiting. A
forked child (the crash tests' harness, a worker process) has none of its parent's threads: it forgets the idle
ones it inherited and starts its own.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("mercury.model")
KEEP = 32  # idle threads kept at most: a worker process drives up to a hundred games, each with one call at a time
NAME = "mercury-model-call"

_Job = tuple[Callable[..., None], tuple[Any, ...]]


class _CallThread(threading.Thread):
    def __init__(self) -> None:
        super().__init__(name=NAME, daemon=True)
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()

    def run(self) -> None:
        while True:
            fn, args = self.jobs.get()
            try:
                fn(*args)
            except Exception:  # the workers report their own errors to their caller: this one escaped them
                log.exception("a model call's thread failed")
            if not _give_back(self):
                return


_idle: list[_CallThread] = []
_lock = threading.Lock()


def run(fn: Callable[..., None], *args: Any) -> None:
    """Run `fn(*args)` in a kept thread (or a new one when none is idle); not waited for."""
    with _lock:
        thread = _idle.pop() if _idle else None
    if thread is None:
        thread = _CallThread()
        thread.jobs.put((fn, args))
        thread.start()
    else:
        thread.jobs.put((fn, args))


def _give_back(thread: _CallThread) -> bool:
    """Keep the thread for the next call, unless KEEP already wait (then it ends)."""
    with _lock:
        if len(_idle) < KEEP:
            _idle.append(thread)
            return True
    return False


def idle() -> tuple[threading.Thread, ...]:
    """The threads waiting for a call now."""
    with _lock:
        return tuple(_idle)


def _forget_after_fork() -> None:
    global _lock
    _lock = threading.Lock()
    _idle.clear()  # the parent's threads: none of them runs in this process


os.register_at_fork(after_in_child=_forget_after_fork)
