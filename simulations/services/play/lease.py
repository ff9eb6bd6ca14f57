"""One driver per game: a lease in the game's row, so two tabs, two connections or two server processes never
generate AI turns for the same game at once.

A holder keeps its lease alive with a heartbeat (`LeaseHeartbeat`, every third of
`MERCURY_DRIVER_LEASE_SECONDS`, whatever the model is doing), so the lease can be short: a holder that stops
beating is gone within one lease. A holder on this machine can be known dead sooner: its id names its host, the
machine's boot and pid namespace, its process id and that process's start time, so a live process on the same
machine sees at once that the process is gone (or the pid now belongs to another process) and takes the game over.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import threading
import time
import uuid
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connections, router
from django.utils import timezone

from mercury.processes import read_quietly as _read
from mercury.processes import started as _started
from simulations.models import Game
from simulations.services.ledger.rows import columns_by_pk, quoted_column

log = logging.getLogger(__name__)


@cache
def _machine() -> str:
    """This kernel boot and pid namespace: two processes share it only if their pids can be compared."""
    parts = [_read("/proc/sys/kernel/random/boot_id")]
    try:
        parts.append(str(os.stat("/proc/self/ns/pid").st_ino))
    except OSError:
        parts.append("")
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:8] if parts[0] else ""


@cache
def _own_start(pid: int) -> str | None:
    """This process's start time (by pid: a forked child is another process, with a start of its own)."""
    return _started(pid)


# A queued drive's instance starts with this letter (never a hex digit): its task's row says "running" while it
# drives, so should its worker die, the workers' sweep (driving.recovery) queues the game again. Nobody else need
# watch such a holder for its death.
QUEUED_DRIVE_MARK = "q"


def new_holder(*, queued_drive: bool = False) -> str:
    """An id naming this process and this driver instance: host:machine:pid:start:instance (64 characters at
    most, the column's width). `queued_drive`: the holder is a queued drive's (`held_by_queued_drive`)."""
    pid = os.getpid()
    instance = QUEUED_DRIVE_MARK + uuid.uuid4().hex[:9] if queued_drive else uuid.uuid4().hex[:10]
    return f"{_host()}:{_machine()}:{pid}:{_own_start(pid) or ''}:{instance}"


def held_by_queued_drive(driver: str, driver_until: datetime | None) -> bool:
    """Whether a live queued drive holds this lease (a game row's `driver` and `driver_until`): its death is the
    workers' sweep's to notice, so no other drive need be queued to watch for it."""
    parts = driver.rsplit(":", 4)
    return len(parts) == 5 and parts[4].startswith(QUEUED_DRIVE_MARK) and lease_left(driver, driver_until) > 0


@cache
def _host() -> str:
    return socket.gethostname()[:20]


def holder_is_dead(holder: str) -> bool:
    """True only when the holder ran on this machine (same host name, boot and pid namespace) and its process is
    gone or its pid now names a younger process. Anything else (another machine, an old-style id) may be alive."""
    parts = holder.rsplit(":", 4)
    if len(parts) != 5 or not _machine():
        return False
    host, machine, pid, started, _ = parts
    if host != _host() or machine != _machine() or not pid.isdigit() or not started:
        return False
    if int(pid) == os.getpid():  # this process: alive (a page's render asks about its own drives each turn)
        return _own_start(os.getpid()) != started
    return _started(int(pid)) != started


def acquire_lease(*, game_id: int, holder: str) -> bool:
    """Take or renew the lease; False while another live holder has it. A holder known dead is taken over at once."""
    now = timezone.now()
    until = now + timedelta(seconds=settings.MERCURY_DRIVER_LEASE_SECONDS)
    if _changed("take", holder, _when(until), game_id, _when(now), holder) == 1:
        return True
    current = Game.objects.filter(pk=game_id).values_list("driver", flat=True).first()
    if current and holder_is_dead(current):
        # Only if that dead holder still has it: two takers race, one wins.
        return _changed("take over", holder, _when(until), game_id, current) == 1
    return False


def renew_lease_at(*, game_id: int, holder: str, version: int) -> bool:
    """Renew a lease this holder has, only while the game is still at `version` and not paused: True tells the
    driver, in one statement, that the lease is its own and that nobody committed or paused the game since it last
    committed (so the game it holds is the stored one and need not be read again)."""
    until = timezone.now() + timedelta(seconds=settings.MERCURY_DRIVER_LEASE_SECONDS)
    return _changed("renew at", _when(until), game_id, holder, version, False) == 1


def release_lease(*, game_id: int, holder: str) -> None:
    _changed("release", game_id, holder)


# The lease's writes, each a statement built once: a drive takes, renews (every turn) and releases its lease, and
# the ORM would compile each UPDATE anew, a visible share of a worker's time.
_WRITES = {
    "take": "SET {driver} = %s, {until} = %s WHERE {id} = %s AND ({until} IS NULL OR {until} < %s OR {driver} = %s)",
    "take over": "SET {driver} = %s, {until} = %s WHERE {id} = %s AND {driver} = %s",
    # A paused game is never renewed: the driver then reads it again and sees the pause.
    "renew at": "SET {until} = %s WHERE {id} = %s AND {driver} = %s AND {version} = %s AND {paused} = %s",
    "release": "SET {driver} = '', {until} = NULL WHERE {id} = %s AND {driver} = %s",
}


def _changed(write: str, *params: Any) -> int:
    """Run one of the lease's writes; the number of rows it changed."""
    alias = router.db_for_write(Game)
    with connections[alias].cursor() as cursor:
        cursor.execute(_write_sql(alias, write), params)
        return int(cursor.rowcount)


@cache
def _write_sql(alias: str, write: str) -> str:
    columns = {name: quoted_column(Game, field, alias) for name, field in
               (("driver", "driver"), ("until", "driver_until"), ("id", "id"), ("version", "version"),
                ("paused", "paused"))}  # fmt: skip
    table = connections[alias].ops.quote_name(Game._meta.db_table)
    return f"UPDATE {table} " + _WRITES[write].format(**columns)


def _when(moment: datetime) -> Any:
    """A time as the database takes it (text on SQLite)."""
    return connections[router.db_for_write(Game)].ops.adapt_datetimefield_value(moment)


def lease_expires_in(*, game_id: int) -> float:
    """Seconds until the holder's lease lapses: 0 when nobody holds it, or when its holder is known dead."""
    row = columns_by_pk(Game, ("driver", "driver_until"), game_id)
    return lease_left(*row) if row else 0.0


def lease_left(driver: str, driver_until: datetime | None) -> float:
    """`lease_expires_in` for a game row already read (its `driver` and `driver_until`)."""
    if not driver_until or holder_is_dead(driver):
        return 0.0
    return max(0.0, (driver_until - timezone.now()).total_seconds())


class LeaseHeartbeat:
    """Renews a held lease every third of its length, so a long or stalled model call never lets a live driver's
    lease lapse, and a dead driver's lapses within one lease. `lost` is set when the lease was taken (the driver
    then stops before its next step; a stale turn is refused at commit anyway).

    Every heartbeat of a process is beaten by one thread (`_Heartbeats`): a drive used to start and join a thread
    of its own, about a hundred a game (a thread's start is a wait for the scheduler: a twentieth of a headless
    game's profile), and a worker driving a hundred games kept a hundred threads awake."""

    def __init__(self, *, game_id: int, holder: str) -> None:
        self.game_id, self.holder = game_id, holder
        self.lost = threading.Event()
        self.due = 0.0  # time.monotonic() of the next beat
        # Held while this lease is renewed: leaving takes it, so no renewal is under way or starts once the
        # driver has left (its release would otherwise race a renewal that takes the lease again).
        self.renewing = threading.Lock()

    def __enter__(self) -> LeaseHeartbeat:
        _heartbeats().add(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _heartbeats().discard(self)


def _beat_interval() -> float:
    return max(0.2, settings.MERCURY_DRIVER_LEASE_SECONDS / 3)


class _Heartbeats:
    """The process's heartbeats and the one thread that beats them, each when it is due."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.beating: set[LeaseHeartbeat] = set()
        self.thread = threading.Thread(target=self._run, name="lease-heartbeats", daemon=True)
        self.thread.start()

    def add(self, heartbeat: LeaseHeartbeat) -> None:
        heartbeat.due = time.monotonic() + _beat_interval()
        with self.changed:
            self.beating.add(heartbeat)
            self.changed.notify()

    def discard(self, heartbeat: LeaseHeartbeat) -> None:
        with heartbeat.renewing, self.changed:
            self.beating.discard(heartbeat)

    def _run(self) -> None:
        while True:
            with self.changed:
                now = time.monotonic()
                due = [h for h in self.beating if h.due <= now]
                if not due:
                    self.changed.wait(min((h.due for h in self.beating), default=now + 60.0) - now)
                    continue
            try:
                for heartbeat in due:
                    self._beat(heartbeat)
            finally:
                # Back to the process's pool between beats: a worker driving 100 games renews 100 leases, and
                # holding a connection between beats took one of the few a process may open (mercury/db/pool.py).
                connections.close_all()

    def _beat(self, heartbeat: LeaseHeartbeat) -> None:
        # Due again a beat from now whatever happens below: a renewal that fails is tried at the next beat, not at
        # once and again (a tight loop), and it never keeps the other leases of the process from their beat.
        heartbeat.due = time.monotonic() + _beat_interval()
        with heartbeat.renewing:
            with self.changed:
                if heartbeat not in self.beating:
                    return  # its driver left meanwhile
            try:
                held = acquire_lease(game_id=heartbeat.game_id, holder=heartbeat.holder)
            except DatabaseError as exc:  # e.g. SQLite busy with another writer: try again next beat
                log.warning("game %s: lease renewal failed (%s); retrying", heartbeat.game_id, exc)
                return
            except Exception:  # a bug, not the database: logged whole, and the lease is still tried next beat
                log.exception("game %s: lease renewal failed", heartbeat.game_id)
                return
            if not held:
                heartbeat.lost.set()
                with self.changed:
                    self.beating.discard(heartbeat)


_shared: _Heartbeats | None = None
_shared_lock = threading.Lock()


def _heartbeats() -> _Heartbeats:
    """The process's heartbeats, started at the first drive."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = _Heartbeats()
        return _shared


def _forget_heartbeats() -> None:
    """In a forked child (the crash harness, a pre-forking server): the parent's thread does not run here, and its
    locks may have been held when the process forked."""
    global _shared, _shared_lock
    _shared, _shared_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_heartbeats)
