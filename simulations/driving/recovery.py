"""Drives whose worker process died: their queue rows say "running" for ever; queue their games again.

django-tasks-db marks a task running when a worker claims it and finished when the worker returns; a worker
killed in between leaves the row running and nobody picks the game up until a page connects or a move is made.
A `drive_worker`'s id names its host and process (as a lease holder's does), so a running drive whose worker on
this machine is a dead process is a dead worker's. A worker elsewhere is judged by the game's lease, which a
live drive renews (the heartbeat): a running drive whose game's lease has lapsed, or whose lease holder is dead,
is a dead worker's. Either way its row is marked failed with why, and the game is queued again (a new drive
waits for any live holder's lease). A drive that has not yet taken its lease is left alone while it is young.

Every worker process sweeps when it starts and every half lease: the external workers (`manage.py drive_worker`)
and the embedded server (`embedded`), whose worker ids name their process in the same way.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connections
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from simulations.driving.tasks import drive_game_task, enqueue_drive
from simulations.models import Game
from simulations.services.play.lease import holder_is_dead

logger = logging.getLogger("mercury")


class WorkerStopped(Exception):
    """Recorded on a drive whose worker stopped while running it (the game is queued again)."""


def requeue_dead_drives() -> list[int]:
    """Mark the running drives of dead workers failed and queue their games again; return those games."""
    running = DBTaskResult.objects.filter(
        status=TaskResultStatus.RUNNING, task_path=drive_game_task.module_path
    )
    requeued = []
    for row in running:
        game_id = row.args_kwargs["kwargs"]["game_id"]
        who = row.worker_ids[-1] if row.worker_ids else "?"
        # A worker on this machine whose process is gone is dead, whatever its game's lease says.
        if not holder_is_dead(who) and not _lease_says_dead(row, game_id):
            continue
        row.set_failed(WorkerStopped(f"worker {who} stopped during this drive"))
        enqueue_drive(game_id=game_id)
        logger.warning("game %s: the drive of worker %s was left running; queued again", game_id, who)
        requeued.append(game_id)
    return requeued


def _lease_says_dead(row: DBTaskResult, game_id: int) -> bool:
    """For a worker that may run elsewhere: its drive is old enough to hold the lease, and the game's lease has
    lapsed or its holder is dead. (Once a live drive took the game over, the old row is marked when it is idle.)"""
    lease = timedelta(seconds=settings.MERCURY_DRIVER_LEASE_SECONDS)
    now = timezone.now()
    if row.started_at is None or row.started_at > now - lease:
        return False  # young: it may not have taken its lease yet
    lease_row = Game.objects.filter(pk=game_id).values_list("driver", "driver_until").first()
    if lease_row is None:
        return False
    driver, until = lease_row
    if driver and until is not None and until > now and not holder_is_dead(driver):
        return False  # a live holder renews it
    # No lease held: maybe just finishing, so give it another lease's time.
    return bool(driver) or row.started_at <= now - 2 * lease


class Sweeper(threading.Thread):
    """A daemon thread of every worker process, external or the embedded server: `requeue_dead_drives` when it
    starts and every half lease."""

    def __init__(self) -> None:
        super().__init__(name="mercury-drive-sweeper", daemon=True)
        self.stopped = threading.Event()

    def run(self) -> None:
        interval = max(0.5, settings.MERCURY_DRIVER_LEASE_SECONDS / 2)
        while (
            True
        ):  # at once (what a process that stopped before this one started left running), then every interval
            try:
                requeue_dead_drives()
            except DatabaseError:
                logger.exception("drive sweep failed; trying again in %.1f s", interval)
            finally:
                connections.close_all()
            if self.stopped.wait(interval):
                return
