"""The connection pool (mercury/db/pool.py): a connection closed by one thread serves the next, on the project's
own back-end (SQLite here, PostgreSQL when DATABASE_URL names it); only clean connections go back."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.db.backends.signals import connection_created

from mercury.db import pool
from simulations.models import Game

pytestmark = pytest.mark.django_db(transaction=True)


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


def test_the_project_uses_the_pooled_back_end() -> None:
    assert connection.settings_dict["ENGINE"] in ("mercury.db.sqlite3", "mercury.db.postgresql")
    assert connection.settings_dict["POOL_SIZE"] > 0


def test_a_connection_closed_by_one_thread_is_taken_by_the_next_and_still_works() -> None:
    first = in_thread(raw_connection)
    second = in_thread(raw_connection)
    assert second is first
    assert opened_while(lambda: in_thread(raw_connection)) == 0


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


def test_a_connection_closed_inside_a_transaction_is_not_pooled() -> None:
    def closed_mid_transaction() -> Any:
        with transaction.atomic():
            raw = raw_connection()
            connection.close()  # Django allows this; the transaction is lost, the connection must not be reused
        return raw

    abandoned = in_thread(closed_mid_transaction)
    assert in_thread(raw_connection) is not abandoned


def test_a_pooled_connection_closed_behind_the_pools_back_is_replaced_after_its_health_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dead = in_thread(raw_connection)
    dead.close()
    monkeypatch.setattr(pool, "HEALTH_CHECK_AFTER", -1.0)  # check every connection handed out
    fresh = in_thread(raw_connection)
    assert fresh is not dead
    assert in_thread(lambda: Game.objects.count()) == 0


def test_without_a_pool_size_every_thread_opens_its_own() -> None:
    size = connection.settings_dict["POOL_SIZE"]  # (the same dict as settings.DATABASES["default"])
    connection.settings_dict["POOL_SIZE"] = 0
    try:
        first = in_thread(raw_connection)
        assert in_thread(raw_connection) is not first
    finally:
        connection.settings_dict["POOL_SIZE"] = size


@pytest.fixture
def limited() -> Any:
    """This database's pool replaced by one that lets the process open at most 2 connections."""
    key = (connection.vendor, str(connection.settings_dict["NAME"]))
    connections.close_all()
    pool.close_idle()
    saved = pool._pools.get(key)
    pool._pools[key] = pool.IdleConnections(size=8, limit=2, wait=5.0)
    yield pool._pools[key]
    pool._pools[key].close_all()
    if saved is not None:
        pool._pools[key] = saved
    else:
        del pool._pools[key]


def test_with_a_limit_threads_wait_for_a_connection_instead_of_opening_more(limited: Any) -> None:
    """Six threads at once, each holding a connection a while: never more than two open, and all six done."""
    open_now, most, lock = 0, 0, threading.Lock()
    done: list[int] = []

    def work(n: int) -> None:
        nonlocal open_now, most
        try:
            Game.objects.count()
            with lock:
                open_now += 1
                most = max(most, open_now)
            threading.Event().wait(0.2)
            with lock:
                open_now -= 1
            done.append(n)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(done) == list(range(6)) and most <= 2 and limited.open <= 2


@contextmanager
def both_connections_held() -> Iterator[None]:
    """Two threads each holding a connection of the `limited` pool (its two) for the block, then giving it back."""
    release, held = threading.Event(), threading.Barrier(3)

    def hold() -> None:
        try:
            Game.objects.count()
            held.wait(5)
            release.wait(10)
        finally:
            connections.close_all()

    holders = [threading.Thread(target=hold) for _ in range(2)]
    for t in holders:
        t.start()
    held.wait(5)
    try:
        yield
    finally:
        release.set()
        for t in holders:
            t.join()


def test_a_thread_that_waits_too_long_gets_a_database_error_naming_the_setting(limited: Any) -> None:
    from django.db import OperationalError

    limited.wait = 0.3
    failures: list[BaseException] = []

    def third() -> None:
        try:
            Game.objects.count()
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            failures.append(exc)
        finally:
            connections.close_all()

    with both_connections_held():
        waiter = threading.Thread(target=third)
        waiter.start()
        waiter.join()
        assert len(failures) == 1 and isinstance(failures[0], OperationalError)
        assert "MERCURY_DB_MAX_CONNECTIONS" in str(failures[0])
    assert in_thread(lambda: Game.objects.count()) >= 0  # one came back: served again


@pytest.fixture
def capped(limited: Any) -> Any:
    """The `limited` pool (2 connections), with this database's settings saying so, as PostgreSQL's do."""
    settings_dict = connection.settings_dict
    saved = settings_dict.get("MAX_CONNECTIONS"), settings_dict.get("POOL_SIZE")
    settings_dict["MAX_CONNECTIONS"] = settings_dict["POOL_SIZE"] = 2
    yield limited
    settings_dict["MAX_CONNECTIONS"], settings_dict["POOL_SIZE"] = saved


def test_raising_the_limit_lets_a_waiting_thread_connect_at_once(capped: Any) -> None:
    """A drive_worker raises the web processes' limit (`limit_connections`): the pool made already follows, and
    a thread waiting for one of the two connections opens a third instead of waiting for one to come back."""
    served = threading.Event()

    def count() -> None:
        Game.objects.count()
        served.set()

    waiter = threading.Thread(target=lambda: in_thread(count))
    with both_connections_held():
        waiter.start()
        assert not served.wait(0.3)  # waiting for one of the two
        pool.limit_connections(3)
        assert served.wait(5)  # a third was opened, while both others are still held
        assert (capped.limit, capped.size) == (3, 3)
        assert (connection.settings_dict["MAX_CONNECTIONS"], connection.settings_dict["POOL_SIZE"]) == (3, 3)
    waiter.join()


def test_a_drive_worker_opens_as_many_connections_as_the_worker_setting_allows(
    capped: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from django.conf import settings
    from django.core.management import call_command

    from simulations.management.commands import drive_worker

    ran: list[int] = []
    monkeypatch.setattr(drive_worker.PooledWorker, "run", lambda self: ran.append(self.slots))
    monkeypatch.setattr(drive_worker.Sweeper, "start", lambda self: None)
    monkeypatch.setattr(drive_worker, "pin_to_one_cpu", lambda: None)  # the test process's own: left alone
    monkeypatch.setattr(drive_worker, "keep_startup_objects_out_of_gc", lambda **_: None)
    monkeypatch.setattr(drive_worker.signal, "signal", lambda *_: None)
    monkeypatch.setattr(settings, "WORKER_DB_MAX_CONNECTIONS", 7)
    out = io.StringIO()
    call_command("drive_worker", threads=4, stdout=out)
    assert ran == [4]
    assert capped.limit == connection.settings_dict["MAX_CONNECTIONS"] == 7
