"""The task queue's statements built once (simulations/driving/statements.py) answer exactly what django-tasks-db's own
ORM queries answer: which drive is already queued, which task a worker claims and what the claim writes. Real
parts: the library's database queue, on SQLite and (CI's second leg) PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django_tasks import DEFAULT_TASK_BACKEND_ALIAS, DEFAULT_TASK_QUEUE_NAME, TaskResultStatus
from django_tasks_db.models import DBTaskResult, get_date_max

from simulations.driving import embedded as embedded_worker
from simulations.driving import statements as task_statements
from simulations.driving.pool import PooledWorker
from simulations.driving.statements import drive_queued
from simulations.driving.tasks import drive_game_task, enqueue_drive
from simulations.models import ClaimedTask
from simulations.services.ledger.turns import create_game
from tests.helpers import mercury_version

pytestmark = [pytest.mark.django_db(transaction=True)]


def _worker(worker_id: str = "w") -> PooledWorker:
    return PooledWorker(
        slots=1, queue_names=[DEFAULT_TASK_QUEUE_NAME], interval=0.1, batch=False,
        backend_name=DEFAULT_TASK_BACKEND_ALIAS, startup_delay=False, max_tasks=None, worker_id=worker_id,
        excluded_queue_names=[],
    )  # fmt: skip


def _queue(game_id: int, *, priority: int = 0, run_after: timedelta | None = None) -> DBTaskResult:
    due = timezone.now() + run_after if run_after is not None else None
    result = drive_game_task.using(priority=priority, run_after=due).enqueue(game_id=game_id)
    return DBTaskResult.objects.get(pk=result.id)


def _library_queued(game_id: int, due: object) -> bool:
    """What enqueue_drive asked the ORM before its statement was built once."""
    return DBTaskResult.objects.filter(
        Q(run_after__lte=due) | Q(run_after=get_date_max()),
        status=TaskResultStatus.READY,
        task_path=drive_game_task.module_path,
        args_kwargs__kwargs__game_id=game_id,
    ).exists()


def test_a_queued_drive_is_found_exactly_when_the_orms_json_lookup_finds_it() -> None:
    now = timezone.now()
    rows = {
        "now": _queue(1),  # no run_after: the library stores its far-future date
        "soon": _queue(2, run_after=timedelta(seconds=20)),
        "later": _queue(12, run_after=timedelta(seconds=300)),
        "past": _queue(21, run_after=timedelta(seconds=-5)),
        "running": _queue(3),
        "other task": _queue(4),
    }
    DBTaskResult.objects.filter(pk=rows["running"].pk).update(status=TaskResultStatus.RUNNING)
    DBTaskResult.objects.filter(pk=rows["other task"].pk).update(task_path="simulations.tasks.another")
    answers = []
    for game_id in (1, 2, 3, 4, 12, 21, 99):  # 1 and 12, 2 and 21: no match on a prefix of the number
        for due in (now, now + timedelta(seconds=60), now + timedelta(seconds=600)):
            ours = drive_queued(DBTaskResult.objects.db, drive_game_task.module_path, game_id, due)
            assert ours == _library_queued(game_id, due), (game_id, due - now)
            answers.append(ours)
    assert True in answers and False in answers
    # And enqueue_drive uses it: a second drive of a queued game is not queued, another game's is.
    assert enqueue_drive(game_id=1) is False
    assert enqueue_drive(game_id=12) is True  # queued for later than now: one due now is queued too
    assert enqueue_drive(game_id=99) is True


def test_a_claim_takes_the_task_the_librarys_get_locked_would_and_writes_what_its_claim_writes() -> None:
    _queue(1, priority=0)
    _queue(2, priority=5)
    _queue(3, priority=5, run_after=timedelta(seconds=-30))  # same priority, due earlier: first
    _queue(4, run_after=timedelta(seconds=120))  # not due
    requeued = _queue(5, priority=-3)
    DBTaskResult.objects.filter(pk=requeued.pk).update(
        worker_ids=["gone"]
    )  # a dead worker's task, queued again
    worker = _worker("w-1")
    claimed = []
    while True:
        with transaction.atomic():
            expected = (
                DBTaskResult.objects.ready().filter(backend_name=DEFAULT_TASK_BACKEND_ALIAS).get_locked()
            )
        before = timezone.now()
        found = worker._claim()
        assert len(found) <= 1  # one, unless asked for more
        task = found[0] if found else None
        if task is None:
            assert expected is None
            break
        assert expected is not None and task.pk == expected.pk
        assert worker.more_ready == DBTaskResult.objects.ready().exists()
        row = DBTaskResult.objects.get(pk=task.pk)
        assert row.status == TaskResultStatus.RUNNING
        assert row.started_at is not None and row.started_at >= before
        assert row.worker_ids == [*expected.worker_ids, "w-1"]
        assert row.args_kwargs == expected.args_kwargs
        for field in DBTaskResult._meta.concrete_fields:  # the claimed object, built as the ORM builds it
            if field.name not in ("status", "started_at", "worker_ids"):  # what the claim changes
                assert getattr(task, field.attname) == getattr(expected, field.attname), field.name
        assert (task.status, task.started_at, task.worker_ids) == (row.status, row.started_at, row.worker_ids)
        claimed.append(task.args_kwargs["kwargs"]["game_id"])
    assert claimed == [3, 2, 1, 5]  # priority, then the earlier due; the one due later stays queued
    assert DBTaskResult.objects.get(status=TaskResultStatus.READY).args_kwargs["kwargs"]["game_id"] == 4


def test_a_claim_of_several_takes_the_first_ready_tasks_in_the_librarys_order_in_one_transaction() -> None:
    """With free slots, the worker claims up to as many tasks as it has slots in one transaction: the ones the
    library's claims, one after another, would have taken first, each marked running by this worker; and it knows
    whether yet another is ready."""
    for game_id, priority in ((1, 0), (2, 5), (3, 0), (4, -3), (5, 0)):
        _queue(game_id, priority=priority)
    _queue(6, run_after=timedelta(seconds=120))  # not due
    with transaction.atomic():
        order = [t.args_kwargs["kwargs"]["game_id"] for t in DBTaskResult.objects.ready().select_for_update()]
    worker = _worker("w-1")
    before = timezone.now()
    first = worker._claim(most=3)
    assert [t.args_kwargs["kwargs"]["game_id"] for t in first] == order[:3] == [2, 1, 3]
    assert worker.more_ready
    for task in first:
        row = DBTaskResult.objects.get(pk=task.pk)
        assert row.status == TaskResultStatus.RUNNING and row.worker_ids == ["w-1"]
        assert row.started_at is not None and row.started_at >= before
    rest = worker._claim(most=3)  # two left that are due
    assert [t.args_kwargs["kwargs"]["game_id"] for t in rest] == [5, 4] and not worker.more_ready
    assert worker._claim(most=3) == []
    assert DBTaskResult.objects.get(status=TaskResultStatus.READY).args_kwargs["kwargs"]["game_id"] == 6


def test_the_idle_polls_check_finds_a_task_exactly_when_the_librarys_ready_query_does() -> None:
    """PooledWorker._any_ready is a statement built once in front of the library's claim: it must agree with
    `DBTaskResult.objects.ready()` and the worker's filters, row by row, on SQLite and on PostgreSQL."""

    def worker(queues: list[str], excluded: list[str] = []) -> PooledWorker:  # noqa: B006
        return PooledWorker(
            slots=1, queue_names=queues, interval=0.1, batch=False, backend_name=DEFAULT_TASK_BACKEND_ALIAS,
            startup_delay=False, max_tasks=None, worker_id="w", excluded_queue_names=excluded,
        )  # fmt: skip

    def library(w: PooledWorker) -> bool:
        tasks = DBTaskResult.objects.ready().filter(backend_name=w.backend_name)
        if not w.process_all_queues:
            tasks = tasks.filter(queue_name__in=w.queue_names)
        if w.excluded_queue_names:
            tasks = tasks.exclude(queue_name__in=w.excluded_queue_names)
        return tasks.exists()

    workers = [
        worker([DEFAULT_TASK_QUEUE_NAME]),
        worker(["*"]),
        worker(["*"], ["other"]),
        worker(["other", "x"]),
    ]
    seen: list[list[bool]] = []

    def compare() -> None:
        ours = [w._any_ready() for w in workers]
        assert ours == [library(w) for w in workers]
        seen.append(ours)

    compare()  # an empty queue
    enqueue_drive(game_id=5)  # ready now (no run_after: the library stores its far-future date)
    compare()
    row = DBTaskResult.objects.get()
    for status in (TaskResultStatus.RUNNING, TaskResultStatus.SUCCESSFUL, TaskResultStatus.FAILED):
        DBTaskResult.objects.filter(pk=row.pk).update(status=status)
        compare()
    DBTaskResult.objects.filter(pk=row.pk).update(status=TaskResultStatus.READY, queue_name="other")
    compare()
    DBTaskResult.objects.filter(pk=row.pk).update(backend_name="elsewhere")
    compare()
    DBTaskResult.objects.all().delete()
    enqueue_drive(game_id=5, delay=60)  # due in a minute
    compare()
    DBTaskResult.objects.update(run_after=timezone.now() - timedelta(seconds=1))  # due a second ago
    compare()
    assert [True] in [s[:1] for s in seen] and [False] in [s[:1] for s in seen]  # both answers were compared


def test_a_claimed_tasks_outcome_is_written_as_the_librarys_orm_save_writes_it(monkeypatch: Any) -> None:
    """The worker runs a claimed task with the library's own `run_task`, whose `set_successful` and `set_failed`
    save named columns: on a ClaimedTask that save is a statement built once (never the ORM's), and each row must
    read back exactly as the library's ORM save leaves a twin row."""
    rows = [_queue(n) for n in (1, 2, 3, 4)]
    worker = _worker("w-1")
    claimed = [task for _ in rows for task in worker._claim()]
    assert all(isinstance(task, ClaimedTask) for task in claimed)
    ours = {task.args_kwargs["kwargs"]["game_id"]: task for task in claimed}
    library = {r.args_kwargs["kwargs"]["game_id"]: DBTaskResult.objects.get(pk=r.pk) for r in rows}
    before = timezone.now()
    library[2].set_successful("human")  # django-tasks-db's own, through the ORM
    library[4].set_failed(ValueError("the model said nothing"))

    def no_orm_save(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the ORM's save ran")

    monkeypatch.setattr(DBTaskResult, "save", no_orm_save)
    ours[1].set_successful("human")
    ours[3].set_failed(ValueError("the model said nothing"))
    monkeypatch.undo()
    for mine, theirs in ((1, 2), (3, 4)):
        written, expected = (
            DBTaskResult.objects.get(pk=ours[mine].pk),
            DBTaskResult.objects.get(pk=library[theirs].pk),
        )
        for name in ("status", "return_value", "exception_class_path"):
            assert getattr(written, name) == getattr(expected, name), name
        assert written.finished_at is not None and written.finished_at >= before
        assert written.worker_ids == ["w-1"]  # the claim's columns untouched
    assert DBTaskResult.objects.get(pk=ours[1].pk).task_result.return_value == "human"  # the library reads it
    failed = DBTaskResult.objects.get(pk=ours[3].pk)
    assert failed.status == TaskResultStatus.FAILED and "the model said nothing" in failed.traceback


def test_the_pool_records_a_driven_games_task_as_successful() -> None:
    game = create_game(scenario_version=mercury_version(), seed=3)
    enqueue_drive(game_id=game.pk)
    worker = _worker()
    [task] = worker._claim()
    worker.run_task(task)
    row = DBTaskResult.objects.get(pk=task.pk)
    assert row.status == TaskResultStatus.SUCCESSFUL and row.return_value == "human"


@pytest.mark.parametrize("delay", [0.0, 90.0])
def test_a_queued_drives_row_is_the_one_the_librarys_enqueue_writes(delay: float) -> None:
    """enqueue_drive writes its row with a statement built once: every column must read back as the library's own
    `enqueue` leaves a twin row (its id and time of queueing aside), and the library's signal must go out (it wakes
    the embedded worker)."""
    due = timezone.now() + timedelta(seconds=delay) if delay else None
    theirs = DBTaskResult.objects.get(pk=drive_game_task.using(run_after=due).enqueue(game_id=7).id)
    embedded_worker._queued.clear()
    before = timezone.now()
    written = task_statements.enqueue(drive_game_task.using(run_after=due), game_id=8)
    assert embedded_worker._queued.is_set()
    ours = DBTaskResult.objects.get(pk=written.pk)
    for field in DBTaskResult._meta.concrete_fields:
        if field.name not in ("id", "enqueued_at", "args_kwargs"):
            assert getattr(ours, field.attname) == getattr(theirs, field.attname), field.name
    assert ours.args_kwargs == {"args": [], "kwargs": {"game_id": 8}} and theirs.args_kwargs["kwargs"] == {
        "game_id": 7
    }
    assert ours.enqueued_at >= before and ours.task_result.task.func is drive_game_task.func
    assert ours.run_after == (due or get_date_max())


def test_a_worker_woken_by_a_queued_drive_claims_it_without_looking_first(monkeypatch: Any) -> None:
    """The embedded worker's claim skips the idle look when this process has just queued a task (one statement
    fewer after each move), and still looks first when it was not woken."""
    worker = embedded_worker.EmbeddedWorker(
        slots=1, queue_names=[DEFAULT_TASK_QUEUE_NAME], interval=0.1, batch=False,
        backend_name=DEFAULT_TASK_BACKEND_ALIAS, startup_delay=False, max_tasks=None, worker_id="w",
        excluded_queue_names=[],
    )  # fmt: skip
    looks: list[bool] = []
    looked = PooledWorker._any_ready

    def any_ready(self: PooledWorker) -> bool:
        looks.append(True)
        return looked(self)

    monkeypatch.setattr(PooledWorker, "_any_ready", any_ready)
    enqueue_drive(game_id=3)  # wakes it
    [task] = worker._claim()
    assert task.args_kwargs["kwargs"]["game_id"] == 3 and looks == []
    assert worker._claim() == [] and looks == [True]  # not woken: it looks, and finds nothing
