"""A process-wide pool of idle SQLite connections, shared by every thread (Django's SQLite back-end, subclassed in
`mercury.db.sqlite3`); on PostgreSQL Mercury uses Django's own pool (settings.py), which has no SQLite version.

Why: Django opens a connection per thread and, with CONN_MAX_AGE=0, closes it after each request or consumer
call. Under ASGI every request runs in a thread of its own, the websocket consumers close theirs after every call
and the task workers after every poll, so a game opened about 200 connections, each with its set-up statements.
Persistent connections (CONN_MAX_AGE > 0) do not help the per-request threads, whose connections would pile up
until the garbage collector finds them. Here a thread that closes its connection hands it to the pool instead,
and the next thread to connect takes it back: the same rule for requests, consumers and workers.

Only a clean connection is pooled: no transaction open, no error seen, not closed inside an atomic block;
anything else is really closed. At most `MERCURY_DB_POOL_SIZE` idle connections are kept (0 turns pooling off);
one idle longer than `HEALTH_CHECK_AFTER` seconds is checked before it is handed out. A forked child process
never uses its parent's connections (they share its sockets and files): it forgets them without closing them.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from typing import Any

from django.db import connections

HEALTH_CHECK_AFTER = 30.0  # seconds idle before a pooled connection is checked on the way out


class IdleConnections:
    """The idle connections of one database (one NAME of one back-end) in this process, at most `size`."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._idle: list[tuple[Any, float]] = []
        self._lock = threading.Lock()

    def take(self) -> tuple[Any, float] | None:
        """The most recently returned connection and how long it has been idle, or None (open a new one)."""
        with self._lock:
            if not self._idle:
                return None
            raw, since = self._idle.pop()
        return raw, time.monotonic() - since

    def give(self, raw: Any) -> bool:
        """Keep `raw` for the next thread; False when the pool is full (the caller closes it)."""
        with self._lock:
            if len(self._idle) >= self.size:
                return False
            self._idle.append((raw, time.monotonic()))
            return True

    def close_all(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for raw, _ in idle:
            with contextlib.suppress(Exception):
                raw.close()

    def forget(self) -> None:
        """After fork: drop the parent's connections without closing them (closing would end the parent's)."""
        _orphans.extend(raw for raw, _ in self._idle)
        self._idle = []
        self._lock = threading.Lock()


_pools: dict[tuple[str, str], IdleConnections] = {}
_pools_lock = threading.Lock()
_orphans: list[Any] = []  # a forked child's inherited connections: kept referenced so they are never closed


def pool_for(vendor: str, name: str, size: int) -> IdleConnections:
    with _pools_lock:
        pool = _pools.get((vendor, name))
        if pool is None:
            pool = _pools[(vendor, name)] = IdleConnections(size)
        return pool


def limit_connections(limit: int) -> None:
    """From now on this process opens at most `limit` connections to each PostgreSQL database (Django's pool,
    `max_size`): a `drive_worker` raises the web processes' default this way before its threads start, since
    settings cannot tell a worker from a web process. A pool made already is resized, and threads waiting on it
    look again."""
    for alias in connections:
        pool = connections.settings[alias].get("OPTIONS", {}).get("pool")
        if not isinstance(pool, dict):
            continue
        pool["max_size"] = limit
        made = connections[alias]._connection_pools.get(alias)  # type: ignore[attr-defined]
        if made is not None:
            made.resize(min_size=min(made.min_size, limit), max_size=limit)


def close_idle(name: str | None = None) -> None:
    """Really close idle connections (of one database NAME, or all), Django's pools' too: before a database is
    dropped."""
    with _pools_lock:
        pools = [p for (_, n), p in _pools.items() if name is None or n == name]
    for pool in pools:
        pool.close_all()
    for alias in connections:
        connection = connections[alias]
        made = alias in getattr(connection, "_connection_pools", {})
        if made and name in (None, connection.settings_dict["NAME"]):
            connection.close_pool()  # type: ignore[attr-defined]


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
        return pool_for(self.vendor, str(self.settings_dict["NAME"]), size) if size > 0 else None

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
        self.reused_connection = False
        return super().get_new_connection(conn_params)  # type: ignore[misc]

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
        super()._close()  # type: ignore[misc]

    # --- per back-end -------------------------------------------------------------------------------------------

    def _clean(self, raw: Any) -> bool:
        """No transaction open and the connection still open."""
        raise NotImplementedError

    def _reusable(self, raw: Any, *, checked: bool) -> bool:
        """Still open (and, when `checked`, answering)."""
        raise NotImplementedError

    def _prepare_reused(self, raw: Any) -> None:
        """What the back-end's own get_new_connection sets on the wrapper besides opening the connection."""
