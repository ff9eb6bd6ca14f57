"""django-tasks-db's worker, driving several games at once: one loop claims ready tasks (one query an interval
while idle, as `db_worker` makes, not one per thread) whenever a slot is free, and each claimed task runs in a
thread of a pool with the library's own `run_task`.

A drive spends most of its time waiting for the model's words, so one process drives many games this way: the
external workers (`manage.py drive_worker --threads N`) and the embedded server (MERCURY_EMBEDDED_WORKERS).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import close_old_connections, connections
from django.db.utils import OperationalError
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import exclusive_transaction, is_locked_database_exception

from simulations.driving import statements as task_statements
from simulations.models import ClaimedTask
from simulations.services.ledger.rows import models_from_rows

# At most this many ready tasks are claimed in one transaction (as many as slots are free). Claiming them one
# transaction each (a look, a lock, a select, an update and a commit, in a process of 100-odd threads), a class
# arriving at once left drives waiting to be claimed while slots were free.
CLAIM_AT_MOST = 16


class PooledWorker(Worker):
    def __init__(self, *, slots: int, on_ready: Callable[[], None] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.slots = slots
        self.on_ready = on_ready  # called once every slot's thread has started, before the first claim
        self.more_ready = False  # the last claim saw another ready task besides the one it took

    def idle(self) -> None:
        """Nothing to claim: wait before looking again (the embedded workers are also woken by an enqueue)."""
        time.sleep(self.interval)

    def run(self) -> None:
        free = threading.BoundedSemaphore(self.slots)
        busy = 0
        lock = threading.Lock()

        def drive(task_result: DBTaskResult) -> None:
            nonlocal busy
            try:
                self.run_task(task_result)
            finally:
                connections.close_all()  # this thread's own connections
                with lock:
                    busy -= 1
                free.release()

        with ThreadPoolExecutor(max_workers=self.slots, thread_name_prefix="mercury-drive") as pool:
            _start_every_thread(pool, self.slots)
            if self.on_ready is not None:
                self.on_ready()
            while self.running:
                if not free.acquire(timeout=0.5):
                    continue  # every slot is driving: look again (and at `running`) shortly
                slots = 1  # taken, and as many more free ones as one claim may fill
                while slots < CLAIM_AT_MOST and free.acquire(blocking=False):
                    slots += 1
                claimed = self._claim(most=slots)
                for _ in range(slots - len(claimed)):  # the slots no task was claimed for
                    free.release()
                if not claimed:
                    with lock:
                        idle = busy == 0
                    if self.batch and idle:
                        return
                    self.idle()
                    continue
                with lock:
                    busy += len(claimed)
                for task_result in claimed:
                    pool.submit(drive, task_result)
                if not self.more_ready:
                    self.idle()  # nothing else was ready: look again at the next enqueue or poll, not at once
            # asked to stop: the pool's drives finish their current step (they see `stopping`) and return

    def _claim(self, *, most: int = 1, look_first: bool = True) -> list[DBTaskResult]:
        """Up to `most` ready tasks, claimed for this worker in one transaction (none: nothing ready).
        `look_first`: see whether one is ready before taking the claim's transaction (False when a task was
        just queued: the look would find it)."""
        close_old_connections()
        if look_first and not self._any_ready():
            self.more_ready = False
            return []
        alias = DBTaskResult.objects.db
        queues, excluded = self._queues()
        sql = task_statements.claim_sql(alias, len(queues), len(excluded))
        params = task_statements.ready_params(alias, self.backend_name, queues, excluded)
        try:
            with exclusive_transaction(alias):
                # The library's get_locked() and claim(), built once (see task_statements), for several rows and
                # one more: whether yet another task is ready, so that after a claim the loop looks again at
                # once only then (looking at once every time found nothing about half the time).
                with connections[alias].cursor() as cursor:
                    cursor.execute(sql, [*params, most + 1])
                    found = models_from_rows(ClaimedTask, alias, cursor.fetchall())
                self.more_ready = len(found) > most
                claimed = found[:most]
                for task_result in claimed:
                    task_statements.claim(task_result, self.worker_id)
                return list(claimed)  # as a list of the base model (lists are invariant)
        except OperationalError as exc:
            if is_locked_database_exception(exc):
                self.more_ready = False
                return []  # SQLite busy: look again after the interval
            raise

    def _queues(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(the queues this worker takes, none meaning all; the queues it leaves)."""
        return () if self.process_all_queues else tuple(self.queue_names), tuple(self.excluded_queue_names)

    def _any_ready(self) -> bool:
        """Whether the claim below would find a task, without a transaction: most claims are idle polls (ten a
        second per worker process)."""
        queues, excluded = self._queues()
        return task_statements.any_ready(DBTaskResult.objects.db, self.backend_name, queues, excluded)


def _start_every_thread(pool: ThreadPoolExecutor, count: int) -> None:
    """Start the pool's `count` threads now. The pool starts a thread at a submit that finds none idle, and a
    thread's start waits for the new thread to run: when a class arrives at once, a claim loop starting its
    threads one after another among a hundred busy ones falls behind while drives wait. Each thread waits at the
    barrier until all have started, so no submit finds one idle and every submit starts one."""
    started = threading.Barrier(count + 1)
    for _ in range(count):
        pool.submit(started.wait)
    started.wait()
