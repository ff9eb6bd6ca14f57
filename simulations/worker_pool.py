"""django-tasks-db's worker, driving several games at once: one loop claims ready tasks (one query an interval
while idle, as `db_worker` makes, not one per thread) whenever a slot is free, and each claimed task runs in a
thread of a pool with the library's own `run_task`.

A drive spends most of its time waiting for the model's words, so one process drives many games this way: the
external workers (`manage.py drive_worker --threads N`) and the embedded server (MERCURY_EMBEDDED_WORKERS).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any

from django.db import close_old_connections, connections
from django.db.utils import OperationalError
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult, get_date_max
from django_tasks_db.utils import exclusive_transaction, is_locked_database_exception

from simulations.services.rows import quoted_column


class PooledWorker(Worker):
    def __init__(self, *, slots: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.slots = slots
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
            while self.running:
                if not free.acquire(timeout=0.5):
                    continue  # every slot is driving: look again (and at `running`) shortly
                task_result = self._claim()
                if task_result is None:
                    free.release()
                    with lock:
                        idle = busy == 0
                    if self.batch and idle:
                        return
                    self.idle()
                    continue
                with lock:
                    busy += 1
                pool.submit(drive, task_result)
                if not self.more_ready:
                    self.idle()  # nothing else was ready: look again at the next enqueue or poll, not at once
            # asked to stop: the pool's drives finish their current step (they see `stopping`) and return

    def _claim(self) -> DBTaskResult | None:
        close_old_connections()
        if not self._any_ready():
            self.more_ready = False
            return None
        tasks = DBTaskResult.objects.ready().filter(backend_name=self.backend_name)
        if not self.process_all_queues:
            tasks = tasks.filter(queue_name__in=self.queue_names)
        if self.excluded_queue_names:
            tasks = tasks.exclude(queue_name__in=self.excluded_queue_names)
        try:
            with exclusive_transaction(tasks.db):
                # The library's get_locked(), two rows instead of one: whether another task is ready too, so
                # that after a claim the loop looks again at once only then (looking at once every time found
                # nothing about half the time: a statement and an exclusive transaction for nothing each drive).
                found = list(tasks.select_for_update(skip_locked=True)[:2])
                self.more_ready = len(found) > 1
                task_result = found[0] if found else None
                if task_result is not None:
                    task_result.claim(self.worker_id)
                return task_result
        except OperationalError as exc:
            if is_locked_database_exception(exc):
                self.more_ready = False
                return None  # SQLite busy: look again after the interval
            raise

    def _any_ready(self) -> bool:
        """Whether the claim below would find a task, by a statement built once: most claims are idle polls (ten a
        second per worker process), and building the library's query and transaction for each was a seventh of a
        worker's time at 100 students (py-spy). Same conditions as the library's `ready()` with this worker's
        filters (a test compares them)."""
        alias = DBTaskResult.objects.db
        connection = connections[alias]
        queues = () if self.process_all_queues else tuple(self.queue_names)
        excluded = tuple(self.excluded_queue_names)
        adapt = connection.ops.adapt_datetimefield_value
        params = [TaskResultStatus.READY, adapt(get_date_max()), adapt(timezone.now()), self.backend_name]
        with connection.cursor() as cursor:
            cursor.execute(_ready_sql(alias, len(queues), len(excluded)), [*params, *queues, *excluded])
            return cursor.fetchone() is not None


@cache
def _ready_sql(alias: str, queues: int, excluded: int) -> str:
    quote = connections[alias].ops.quote_name

    def column(name: str) -> str:
        return quoted_column(DBTaskResult, name, alias)

    run_after = column("run_after")
    sql = (
        f"SELECT 1 FROM {quote(DBTaskResult._meta.db_table)} WHERE {column('status')} = %s"
        f" AND ({run_after} = %s OR {run_after} <= %s) AND {column('backend_name')} = %s"
    )
    if queues:
        sql += f" AND {column('queue_name')} IN ({', '.join(['%s'] * queues)})"
    if excluded:
        sql += f" AND {column('queue_name')} NOT IN ({', '.join(['%s'] * excluded)})"
    return sql + " LIMIT 1"
