"""The embedded default: the server process runs the task queue's worker itself.

It is django-tasks-db's own worker (the one `manage.py db_worker` runs), in the pooled form of
`simulations.worker_pool`: one thread claims queued drives and runs up to MERCURY_EMBEDDED_WORKERS of them at once
in a pool, started with the server's first connection so that a laptop needs no second process. (Two worker
threads, each polling, drove two games at a time: with ten students at once every game waited for seconds.)
With `MERCURY_WORKERS=external` the server starts none and `manage.py drive_worker` processes do the work. Threads
are daemons: a server that stops mid-turn loses only the unfinished turn (never half-stored), and its lease
lapses so the next worker takes the game over.

A task queued by this process wakes the claiming thread at once (`task_enqueued`); otherwise it looks every
POLL_INTERVAL for tasks queued by other processes or due later. Sleeping a whole interval after each student's
move cost a game about a second and a half of waiting (30-odd moves, each waiting 0.125 s on average).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from typing import Any

from django.conf import settings
from django.db import connections
from django_tasks import DEFAULT_TASK_BACKEND_ALIAS, DEFAULT_TASK_QUEUE_NAME, TaskResultStatus
from django_tasks.signals import task_enqueued
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from simulations.services.broadcast import serve_from_loop
from simulations.worker_pool import PooledWorker

logger = logging.getLogger("mercury")
POLL_INTERVAL = 0.25  # seconds between looks at an empty queue when nothing in this process queues a task
stopping = threading.Event()  # asked to stop: drives pause between steps (their task is queued again)
_running: list[tuple[Worker, threading.Thread]] = []
_lock = threading.Lock()
WORKER_PREFIX = "embedded-"  # then the server's pid: tells this server's running drives from a dead one's
_queued = threading.Event()  # set when this process queues a task: idle worker threads look at once


def _wake_workers(**_: Any) -> None:
    _queued.set()


task_enqueued.connect(_wake_workers, dispatch_uid="mercury-embedded-wake")


class ServerStopped(Exception):
    """Recorded on a drive whose server process stopped while running it (the drive is queued again)."""


class EmbeddedWorker(PooledWorker):
    def _claim(self) -> DBTaskResult | None:
        _queued.clear()  # before looking: a task queued while we look wakes the wait below
        return super()._claim()

    def idle(self) -> None:
        _queued.wait(POLL_INTERVAL)  # an enqueue in this process wakes it at once


def start_embedded_workers(*, count: int) -> None:
    """Start the claiming thread with `count` drives at once, unless it runs already."""
    with _lock:
        if _running:
            return
        stopping.clear()
        worker = EmbeddedWorker(
            slots=count, queue_names=[DEFAULT_TASK_QUEUE_NAME], interval=POLL_INTERVAL, batch=False,
            backend_name=DEFAULT_TASK_BACKEND_ALIAS, startup_delay=False, max_tasks=None,
            worker_id=f"{WORKER_PREFIX}{os.getpid()}-0", excluded_queue_names=[],
        )  # fmt: skip
        thread = threading.Thread(target=_run, args=(worker, True), name="mercury-worker", daemon=True)
        thread.start()
        _running.append((worker, thread))
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


def _requeue_orphaned_drives() -> None:
    """Drives another server process was running when it stopped stay "running" in the queue for ever: queue
    their games again (a new drive waits for the old lease to lapse, so a server that is in fact alive keeps its
    game), and mark those whose lease has lapsed failed, with why."""
    from simulations.services.lease import lease_expires_in
    from simulations.tasks import drive_game_task, enqueue_drive

    mine = f"{WORKER_PREFIX}{os.getpid()}-"
    running = DBTaskResult.objects.filter(
        status=TaskResultStatus.RUNNING, task_path=drive_game_task.module_path
    )
    for row in running:
        last = row.worker_ids[-1] if row.worker_ids else ""
        if not last.startswith(WORKER_PREFIX) or last.startswith(mine):
            continue
        game_id = row.args_kwargs["kwargs"]["game_id"]
        if lease_expires_in(game_id=game_id) == 0:
            row.set_failed(ServerStopped(f"the server process of {last} stopped during this drive"))
        enqueue_drive(game_id=game_id)


def _run(worker: Worker, first: bool) -> None:
    """The claiming thread (it also recovers what an earlier server left running: in a thread, because the server
    starts the workers from its event loop, where the ORM may not be used)."""
    try:
        if first:
            _requeue_orphaned_drives()
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
