"""The task queue's busiest statements, each built once per database: the worker's idle check and claim, the
"is a drive of this game already queued?" check every queued drive makes first, and the queueing itself.

django-tasks-db builds these through the ORM each time: its `ready()` filters, `select_for_update().first()` and
a JSON key lookup on the task's arguments. Under load compiling them is most of a worker's claim and a visible
share of a web process's time; the statements themselves are a small part of that. Here the text is built once from the model's own
columns and the values go through the database's own adaptation, so each answers exactly what the library's
query answers (tests compare them row by row, on SQLite and PostgreSQL).

A drive is queued after every student's move, so queueing, claiming and running its task is paid on every turn.
Most of a queueing was the ORM's `create` compiling its INSERT, and much of a claim the ORM's raw query building its
model: `enqueue` writes the library's row with its values and sends its signal,
and `claimed` builds the claimed rows as the ORM does (`from_db`, each value converted as a query's are).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import Any

from django.db import connections
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks.base import Task
from django_tasks.signals import task_enqueued
from django_tasks.utils import normalize_json
from django_tasks_db.backend import DatabaseBackend
from django_tasks_db.models import DBTaskResult, get_date_max

from simulations.services.ledger.rows import insert_rows, quoted_column, update_row


def _column(name: str, alias: str) -> str:
    return quoted_column(DBTaskResult, name, alias)


def _table(alias: str) -> str:
    return connections[alias].ops.quote_name(DBTaskResult._meta.db_table)


def _ready_where(alias: str, queues: int, excluded: int) -> str:
    """The library's `ready()` (ready, and due: no run_after, or one past) for one backend and these queues."""
    run_after = _column("run_after", alias)
    where = (
        f"{_column('status', alias)} = %s AND ({run_after} = %s OR {run_after} <= %s)"
        f" AND {_column('backend_name', alias)} = %s"
    )
    if queues:
        where += f" AND {_column('queue_name', alias)} IN ({', '.join(['%s'] * queues)})"
    if excluded:
        where += f" AND {_column('queue_name', alias)} NOT IN ({', '.join(['%s'] * excluded)})"
    return where


def ready_params(alias: str, backend: str, queues: Sequence[str], excluded: Sequence[str]) -> list[Any]:
    adapt = connections[alias].ops.adapt_datetimefield_value
    return [TaskResultStatus.READY, adapt(get_date_max()), adapt(timezone.now()), backend, *queues, *excluded]


def any_ready(alias: str, backend: str, queues: Sequence[str], excluded: Sequence[str]) -> bool:
    """Whether some task is ready for a worker of this backend and these queues (none: all; `excluded` left):
    the worker's idle poll, no transaction, no lock."""
    return _finds(
        alias,
        _any_ready_sql(alias, len(queues), len(excluded)),
        ready_params(alias, backend, queues, excluded),
    )


def drive_queued(alias: str, task_path: str, game_id: int, due: datetime) -> bool:
    """Whether a task of this path for this game is ready and due by `due` (no run_after, or one before it)."""
    ops = connections[alias].ops
    game = ops.adapt_json_value(game_id, None) if connections[alias].vendor == "postgresql" else game_id
    adapt = ops.adapt_datetimefield_value
    params = [TaskResultStatus.READY, task_path, adapt(due), adapt(get_date_max()), game]
    return _finds(alias, _drive_queued_sql(alias), params)


def _finds(alias: str, sql: str, params: list[Any]) -> bool:
    with connections[alias].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone() is not None


@cache
def _any_ready_sql(alias: str, queues: int, excluded: int) -> str:
    return f"SELECT 1 FROM {_table(alias)} WHERE {_ready_where(alias, queues, excluded)} LIMIT 1"


@cache
def claim_sql(alias: str, queues: int, excluded: int) -> str:
    """Ready tasks in the library's order, as many as the last parameter says (`DBTaskResult.Meta.ordering`), whole rows for the model,
    locked and skipping rows another worker holds where the database can (`get_locked()`; SQLite has no row
    locks, its exclusive transaction serialises claims)."""
    connection = connections[alias]
    columns = ", ".join(_column(f.name, alias) for f in DBTaskResult._meta.concrete_fields)
    order = (
        f"{_column('priority', alias)} DESC, {_column('run_after', alias)}, {_column('enqueued_at', alias)}"
    )
    sql = f"SELECT {columns} FROM {_table(alias)} WHERE {_ready_where(alias, queues, excluded)} ORDER BY {order} LIMIT %s"
    if connection.features.has_select_for_update:
        sql += " " + connection.ops.for_update_sql(
            skip_locked=connection.features.has_select_for_update_skip_locked
        )
    return sql


def claim(task_result: DBTaskResult, worker_id: str) -> None:
    """The library's `DBTaskResult.claim` (running, started now, this worker added to its workers) as one
    statement built once: its `save(update_fields=…)` compiled an UPDATE for every claim."""
    task_result.status = TaskResultStatus.RUNNING
    task_result.started_at = timezone.now()
    task_result.worker_ids = [*task_result.worker_ids, worker_id]
    update_row(task_result, ("status", "started_at", "worker_ids"))


@cache
def _drive_queued_sql(alias: str) -> str:
    arguments = _column("args_kwargs", alias)
    if connections[alias].vendor == "postgresql":
        game = f"({arguments} -> 'kwargs' -> 'game_id') = %s"
    else:  # SQLite (and MySQL) read a JSON path the same way
        game = f'JSON_EXTRACT({arguments}, \'$."kwargs"."game_id"\') = %s'
    run_after = _column("run_after", alias)
    return (
        f"SELECT 1 FROM {_table(alias)} WHERE {_column('status', alias)} = %s AND {_column('task_path', alias)} = %s"
        f" AND ({run_after} <= %s OR {run_after} = %s) AND {game} LIMIT 1"
    )


def enqueue(task: Task[Any, Any], **kwargs: Any) -> DBTaskResult:
    """`task.enqueue(**kwargs)` on the database backend: the same checks, the same row (the model fills its
    defaults; the library's `pre_save` handler's far-future `run_after` for "now" is set here, as a plain INSERT
    sends no signals) and the same `task_enqueued` signal, which wakes the embedded worker."""
    backend = task.get_backend()
    assert isinstance(backend, DatabaseBackend), "the drive queue is django-tasks-db's"
    backend.validate_task(task)
    row: DBTaskResult = DBTaskResult(
        id=backend._get_id(),
        args_kwargs=normalize_json({"args": [], "kwargs": kwargs}),
        priority=task.priority,
        task_path=task.module_path,
        queue_name=task.queue_name,
        run_after=task.run_after or get_date_max(),
        backend_name=backend.alias,
    )
    insert_rows([row])
    task_enqueued.send(type(backend), task_result=row.task_result)
    return row
