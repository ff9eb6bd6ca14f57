"""Database connections are pooled: on SQLite by mercury/db/pool.py (a connection closed by one thread serves the
next; only clean connections go back), on PostgreSQL by Django's own pool (psycopg_pool), at most a process's
share of the server's connections open."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings
from django.db import connection, connections, transaction
from django.db.backends.signals import connection_created

from mercury.db import pool
from simulations.models import Game

pytestmark = pytest.mark.django_db(transaction=True)
SQLITE = settings.DATABASES["default"]["ENGINE"] == "mercury.db.sqlite3"
sqlite_only = pytest.mark.skipif(
    not SQLITE, reason="mercury/db/pool.py serves SQLite; PostgreSQL has Django's"
)
postgresql_only = pytest.mark.skipif(SQLITE, reason="Django's pool, on PostgreSQL only")


def in_thread(fn: Callable[[], Any]) -> Any:
    """Run `fn` in a new thread, as a request, a consumer call or a worker does, closing as they do."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(fn())
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return out[0]


def raw_connection() -> Any:
    connection.ensure_connection()
    Game.objects.count()
    return connection.connection


def opened_while(fn: Callable[[], Any]) -> int:
    """New database connections opened while `fn` runs (handed-over ones not counted)."""
    opened: list[bool] = []

    def record(connection: Any, **_: Any) -> None:
        opened.append(not connection.reused_connection)

    connection_created.connect(record, weak=False)
    try:
        fn()
    finally:
        connection_created.disconnect(record)
    return sum(opened)


@sqlite_only
def test_the_project_uses_the_pooled_back_end() -> None:
    assert connection.settings_dict["POOL_SIZE"] > 0


@sqlite_only
def test_a_connection_closed_by_one_thread_is_taken_by_the_next_and_still_works() -> None:
    first = in_thread(raw_connection)
    second = in_thread(raw_connection)
    assert second is first
    assert opened_while(lambda: in_thread(raw_connection)) == 0


@sqlite_only
def test_many_threads_in_turn_open_one_connection_between_them() -> None:
    def work() -> None:
        for _ in range(20):
            in_thread(lambda: Game.objects.count())

    in_thread(raw_connection)  # one idle connection in the pool
    assert opened_while(work) == 0


def test_threads_at_once_each_get_their_own_connection() -> None:
    barrier = threading.Barrier(3)
    raws: list[Any] = []

    def hold() -> None:
        raws.append(raw_connection())
        barrier.wait(10)  # all three hold a connection at the same time
        connections.close_all()

    threads = [threading.Thread(target=hold) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(r) for r in raws}) == 3


@sqlite_only
def test_a_connection_closed_inside_a_transaction_is_not_pooled() -> None:
    def closed_mid_transaction() -> Any:
        with transaction.atomic():
            raw = raw_connection()
            connection.close()  # Django allows this; the transaction is lost, the connection must not be reused
        return raw

    abandoned = in_thread(closed_mid_transaction)
    assert in_thread(raw_connection) is not abandoned


@sqlite_only
def test_a_pooled_connection_closed_behind_the_pools_back_is_replaced_after_its_health_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dead = in_thread(raw_connection)
    dead.close()
    monkeypatch.setattr(pool, "HEALTH_CHECK_AFTER", -1.0)  # check every connection handed out
    fresh = in_thread(raw_connection)
    assert fresh is not dead
    assert in_thread(lambda: Game.objects.count()) == 0


@sqlite_only
def test_without_a_pool_size_every_thread_opens_its_own() -> None:
    size = connection.settings_dict["POOL_SIZE"]  # (the same dict as settings.DATABASES["default"])
    connection.settings_dict["POOL_SIZE"] = 0
    try:
        first = in_thread(raw_connection)
        assert in_thread(raw_connection) is not first
    finally:
        connection.settings_dict["POOL_SIZE"] = size


@postgresql_only
def test_postgresql_uses_djangos_pool_with_the_processs_cap() -> None:
    options = connection.settings_dict["OPTIONS"]["pool"]
    assert connection.settings_dict["ENGINE"] == "django.db.backends.postgresql"
    assert options["max_size"] == settings.WORKER_DB_MAX_CONNECTIONS  # a server with embedded workers
    assert connection.settings_dict["CONN_MAX_AGE"] == 0  # Django's pool refuses persistent connections


@postgresql_only
def test_threads_in_turn_share_the_pools_few_server_sessions() -> None:
    def backend() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            return int(cursor.fetchone()[0])

    sessions = {in_thread(backend) for _ in range(20)}
    assert len(sessions) <= connection.settings_dict["OPTIONS"]["pool"]["min_size"] + 1


@pytest.fixture
def resized() -> Iterator[None]:
    """The cap restored after a test that changes it."""
    options = connection.settings_dict["OPTIONS"]["pool"]
    saved = options["max_size"]
    yield
    pool.limit_connections(saved)


@postgresql_only
def test_a_drive_worker_opens_as_many_connections_as_the_worker_setting_allows(
    resized: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from django.core.management import call_command

    from simulations.management.commands import drive_worker

    Game.objects.count()  # the pool is made already: it is resized
    ran: list[int] = []
    monkeypatch.setattr(drive_worker.PooledWorker, "run", lambda self: ran.append(self.slots))
    monkeypatch.setattr(drive_worker.Sweeper, "start", lambda self: None)
    monkeypatch.setattr(drive_worker, "pin_to_one_cpu", lambda: None)  # the test process's own: left alone
    monkeypatch.setattr(drive_worker, "keep_startup_objects_out_of_gc", lambda **_: None)
    monkeypatch.setattr(drive_worker.signal, "signal", lambda *_: None)
    monkeypatch.setattr(settings, "WORKER_DB_MAX_CONNECTIONS", 7)
    call_command("drive_worker", threads=4, stdout=io.StringIO())
    assert ran == [4]
    assert connection.settings_dict["OPTIONS"]["pool"]["max_size"] == connection.pool.max_size == 7  # type: ignore[attr-defined]
