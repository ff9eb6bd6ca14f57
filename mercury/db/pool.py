"""A process-wide pool of idle database connections, shared by every thread (Django's SQLite and PostgreSQL
back-ends, subclassed in `mercury.db.sqlite3` and `mercury.db.postgresql`).

Why: Django opens a connection per thread and, with CONN_MAX_AGE=0, closes it after each request or consumer
call. Under ASGI every request runs in a thread of its own, the websocket consumers close theirs after every call
and the task workers after every poll, so a game opened about 400 connections (about 3 s of PostgreSQL CPU per
game). Persistent connections (CONN_MAX_AGE > 0) do not help the per-request threads, whose connections would
pile up until the garbage collector finds them. Here a thread that closes its connection hands it to the pool
instead, and the next thread to connect takes it back: the same rule for requests, consumers and workers.

With `MAX_CONNECTIONS` (on PostgreSQL MERCURY_DB_MAX_CONNECTIONS, 10 a web process and 30 one that drives games,
MERCURY_WORKER_DB_MAX_CONNECTIONS for a `drive_worker`: `limit_connections`) a process never has more
connections open than that: a thread that needs one more waits for another thread to give one back (and fails
with PoolExhausted after `POOL_WAIT` seconds). Under load a school's processes otherwise went past PostgreSQL's
own limit of 100 clients, and requests failed ("too many clients already").

Only a clean connection is pooled: no transaction open, no error seen, not closed inside an atomic block;
anything else is really closed. At most `MERCURY_DB_POOL_SIZE` idle connections are kept (0 turns pooling off);
one idle longer than `HEALTH_CHECK_AFTER` seconds is checked before it is handed out. A forked child process
never uses its parent's connections (they share its sockets and files): it forgets them without closing them.
Django's own pool (`OPTIONS={"pool": True}`) needs the psycopg_pool package and exists for PostgreSQL only.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from typing import Any

from django.db import connections
from django.db.utils import OperationalError

HEALTH_CHECK_AFTER = 30.0  # seconds idle before a pooled connection is checked on the way out


class PoolExhausted(OperationalError):
    """Every connection this process may open to the database is in use, and none came back in time (a
    database error like a refused connection: callers that retry those retry this)."""


class IdleConnections:
    """The connections of one database (one NAME of one back-end) in this process: the idle ones, and how many
    are open in all (idle or in use) when a limit is set (`MAX_CONNECTIONS`: a thread that needs one more waits
    for one to come back instead of going over the server's own limit; 0: no limit)."""

    def __init__(self, size: int, limit: int = 0, wait: float = 30.0) -> None:
        self.size, self.limit, self.wait = size, limit, wait
        self.open = 0  # counted only with a limit
        self._idle: list[tuple[Any, float]] = []
        self._cond = threading.Condition()

    def take(self) -> tuple[Any, float] | None:
        """The most recently returned connection and how long it has been idle, or None: then the caller may
        open a new one (it was counted; call `closed` if opening fails). With a limit reached this waits for a
        connection to come back and raises PoolExhausted after `wait` seconds."""
        deadline = time.monotonic() + self.wait
        with self._cond:
            while True:
                if self._idle:
                    raw, since = self._idle.pop()
                    return raw, time.monotonic() - since
                if not self.limit or self.open < self.limit:
                    self.open += 1 if self.limit else 0
                    return None
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise PoolExhausted(
                        f"all {self.limit} database connections of this process stayed in use for {self.wait:g} s"
                        " (MERCURY_DB_MAX_CONNECTIONS; in a drive_worker, MERCURY_WORKER_DB_MAX_CONNECTIONS)"
                    )
                self._cond.wait(remaining)

    def give(self, raw: Any) -> bool:
        """Keep `raw` for the next thread; False when the pool is full (the caller closes it, then `closed`)."""
        with self._cond:
            if len(self._idle) >= self.size:
                return False
            self._idle.append((raw, time.monotonic()))
            self._cond.notify()
            return True

    def set_limit(self, limit: int, *, size: int) -> None:
        with self._cond:
            self.limit, self.size = limit, size
            self._cond.notify_all()  # room for more, perhaps: waiting threads look again

    def closed(self) -> None:
        """A connection opened through this pool was really closed (or failed to open): room for another."""
        with self._cond:
            if self.limit and self.open > 0:
                self.open -= 1
                self._cond.notify()

    def close_all(self) -> None:
        with self._cond:
            idle, self._idle = self._idle, []
        for raw, _ in idle:
            with contextlib.suppress(Exception):
                raw.close()
            self.closed()

    def forget(self) -> None:
        """After fork: drop the parent's connections without closing them (closing would end the parent's)."""
        _orphans.extend(raw for raw, _ in self._idle)
        self._idle = []
        self.open = 0
        self._cond = threading.Condition()


_pools: dict[tuple[str, str], IdleConnections] = {}
_pools_lock = threading.Lock()
_orphans: list[Any] = []  # a forked child's inherited connections: kept referenced so they are never closed


def pool_for(vendor: str, name: str, size: int, limit: int = 0, wait: float = 30.0) -> IdleConnections:
    with _pools_lock:
        pool = _pools.get((vendor, name))
        if pool is None:
            pool = _pools[(vendor, name)] = IdleConnections(size, limit, wait)
        return pool


def limit_connections(limit: int) -> None:
    """From now on this process opens at most `limit` connections to each database that has a limit (PostgreSQL's;
    SQLite's has none), and keeps as many idle: a `drive_worker` raises the web processes' default this way before
    its threads start, since settings cannot tell a worker from a web process. A pool made already follows, and
    threads waiting on it look again."""
    for alias in connections:
        settings_dict = connections.settings[alias]
        if not int(settings_dict.get("MAX_CONNECTIONS", 0) or 0):
            continue
        if int(settings_dict.get("POOL_SIZE", 0) or 0) == int(settings_dict["MAX_CONNECTIONS"]):
            settings_dict["POOL_SIZE"] = limit  # idle as many as may be open (settings.py), unless set apart
        settings_dict["MAX_CONNECTIONS"] = limit
        with _pools_lock:
            made = [p for (_, name), p in _pools.items() if name == str(settings_dict["NAME"])]
        for made_pool in made:
            made_pool.set_limit(limit, size=int(settings_dict.get("POOL_SIZE", 0) or 0))


def close_idle(name: str | None = None) -> None:
    """Really close idle connections (of one database NAME, or all): before a database is dropped."""
    with _pools_lock:
        pools = [p for (_, n), p in _pools.items() if name is None or n == name]
    for pool in pools:
        pool.close_all()


def hand_back_connections() -> None:
    """This thread's connections back to the pool (or closed, with pooling off) whatever CONN_MAX_AGE says: a thread
    kept for the next call (a request's, a page's) must not hold one in between, and channels closes a connection
    only once it is obsolete. One inside a transaction (a test's own) is left alone."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close()


def _forget_after_fork() -> None:
    global _pools_lock
    _pools_lock = threading.Lock()
    for pool in _pools.values():
        pool.forget()


os.register_at_fork(after_in_child=_forget_after_fork)
atexit.register(close_idle)  # idle connections closed, not left for the garbage collector to warn about


class PooledWrapperMixin:
    """Mixed into a Django DatabaseWrapper: `get_new_connection` takes an idle connection when there is one,
    `_close` gives a clean connection back instead of closing it."""

    settings_dict: dict[str, Any]
    vendor: str
    connection: Any
    in_atomic_block: bool
    errors_occurred: bool
    # The current connection came from the pool (bench/http_server.py counts only new ones).
    reused_connection: bool = False

    def _idle_pool(self) -> IdleConnections | None:
        size = int(self.settings_dict.get("POOL_SIZE", 0) or 0)
        if size <= 0:
            return None
        limit = int(self.settings_dict.get("MAX_CONNECTIONS", 0) or 0)
        wait = float(self.settings_dict.get("POOL_WAIT", 30.0))
        return pool_for(self.vendor, str(self.settings_dict["NAME"]), size, limit, wait)

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        pool = self._idle_pool()
        while pool is not None and (taken := pool.take()) is not None:
            raw, idle_for = taken
            if self._reusable(raw, checked=idle_for > HEALTH_CHECK_AFTER):
                self.reused_connection = True
                self._prepare_reused(raw)
                return raw
            with contextlib.suppress(Exception):
                raw.close()
            pool.closed()
        self.reused_connection = False
        try:
            return super().get_new_connection(conn_params)  # type: ignore[misc]
        except BaseException:
            if pool is not None:
                pool.closed()  # counted by `take`, never opened
            raise

    def _close(self) -> None:
        raw = self.connection
        pool = self._idle_pool()
        if (
            pool is not None
            and raw is not None
            and not self.in_atomic_block
            and not self.errors_occurred
            and self._clean(raw)
            and pool.give(raw)
        ):
            return
        try:
            super()._close()  # type: ignore[misc]
        finally:
            if pool is not None and raw is not None:
                pool.closed()

    # --- per back-end -------------------------------------------------------------------------------------------

    def _clean(self, raw: Any) -> bool:
        """No transaction open and the connection still open."""
        raise NotImplementedError

    def _reusable(self, raw: Any, *, checked: bool) -> bool:
        """Still open (and, when `checked`, answering)."""
        raise NotImplementedError

    def _prepare_reused(self, raw: Any) -> None:
        """What the back-end's own get_new_connection sets on the wrapper besides opening the connection."""
