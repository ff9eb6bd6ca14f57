"""The embedded default: the server process runs the task queue's worker itself.

It is django-tasks-db's own worker (the one `manage.py db_worker` runs), in the pooled form of
`simulations.driving.pool`: one thread claims queued drives and runs up to MERCURY_EMBEDDED_WORKERS of them at once
in a pool, started with the server's first connection so that a laptop needs no second process; a pool, since a
drive waits on its model most of the time and a class's games are driven at once. With `MERCURY_WORKERS=external` the server starts none and `manage.py drive_worker` processes do the work. Threads
are daemons: a server that stops mid-turn loses only the unfinished turn (never half-stored); the next server's
sweep (simulations/driving/recovery.py, as in `drive_worker`) sees its process gone and queues the game again.

A task queued by this process wakes the claiming thread at once (`task_enqueued`); otherwise it looks every
POLL_INTERVAL for tasks queued by other processes or due later, so a student's move does not wait out an
interval.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from django.conf import settings
from django.db import connections
from django_tasks import DEFAULT_TASK_BACKEND_ALIAS, DEFAULT_TASK_QUEUE_NAME
from django_tasks.signals import task_enqueued
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from simulations.driving.pool import PooledWorker
from simulations.driving.recovery import Sweeper
from simulations.driving.tasks import stopping
from simulations.services.pages.broadcast import serve_from_loop
from simulations.services.play.lease import new_holder

logger = logging.getLogger("mercury")
POLL_INTERVAL = 0.25  # seconds between looks at an empty queue when nothing in this process queues a task
_running: list[tuple[Worker, threading.Thread]] = []
_lock = threading.Lock()
_sweepers: list[Sweeper] = []
_queued = threading.Event()  # set when this process queues a task: idle worker threads look at once


def _wake_workers(**_: Any) -> None:
    _queued.set()


task_enqueued.connect(_wake_workers, dispatch_uid="mercury-embedded-wake")


class EmbeddedWorker(PooledWorker):
    def _claim(self, *, most: int = 1, look_first: bool = True) -> list[DBTaskResult]:
        # Woken by a task this process queued: claim without looking first (the look would find it, one statement
        # more for each student's move). Cleared before claiming: a task queued meanwhile wakes the wait below.
        woken = _queued.is_set()
        _queued.clear()
        return super()._claim(most=most, look_first=look_first and not woken)

    def idle(self) -> None:
        _queued.wait(POLL_INTERVAL)  # an enqueue in this process wakes it at once


def start_embedded_workers(*, count: int) -> None:
    """Start the claiming thread with `count` drives at once, unless it runs already."""
    with _lock:
        if _running:
            return
        stopping.clear()
        # The worker's id names this host and process (as a lease holder's does): the next server's sweep sees at
        # once that this one is gone and queues its running drives again (simulations/driving/recovery.py).
        worker = EmbeddedWorker(
            slots=count, queue_names=[DEFAULT_TASK_QUEUE_NAME], interval=POLL_INTERVAL, batch=False,
            backend_name=DEFAULT_TASK_BACKEND_ALIAS, startup_delay=False, max_tasks=None,
            worker_id=new_holder(), excluded_queue_names=[],
        )  # fmt: skip
        thread = threading.Thread(target=_run, args=(worker,), name="mercury-worker", daemon=True)
        thread.start()
        _running.append((worker, thread))
        sweeper = Sweeper()  # sweeps at once (what an earlier server left running), then every half lease
        sweeper.start()
        _sweepers.append(sweeper)
        logger.info("embedded task worker started: %d games at once", count)


def stop_embedded_workers(*, timeout: float = 30.0) -> None:
    """Stop the threads after their current step (a drive pauses; its task is queued again) and wait for them."""
    with _lock:
        stopping.set()
        for worker, _ in _running:
            worker.running = False
        _queued.set()  # idle threads stop waiting
        for _, thread in _running:
            thread.join(timeout)
        _running.clear()
        for sweeper in _sweepers:
            sweeper.stopped.set()
            sweeper.join(timeout)
        _sweepers.clear()


def _run(worker: Worker) -> None:
    """The claiming thread."""
    try:
        worker.run()
    finally:
        connections.close_all()  # this thread's own connections


class EmbeddedWorkers:
    """ASGI wrapper: records the server's event loop for broadcasts from worker threads and, on the embedded
    default, starts the worker threads with the first connection the server takes."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        serve_from_loop(asyncio.get_running_loop())
        if settings.MERCURY_WORKERS == "embedded" and not _running:
            start_embedded_workers(count=settings.MERCURY_EMBEDDED_WORKERS)
        return await self.app(scope, receive, send)
