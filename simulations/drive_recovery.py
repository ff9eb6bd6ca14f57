"""Drives whose worker process died: their queue rows say "running" for ever; queue their games again.

django-tasks-db marks a task running when a worker claims it and finished when the worker returns; a worker
killed in between leaves the row running and nobody picks the game up until a page connects or a move is made.
A live drive holds its game's lease and renews it (the heartbeat), so a running drive whose game's lease has
lapsed, or whose holder on this machine is a dead process, is a dead worker's: its row is marked failed with
why, and the game is queued again. A drive that has not yet taken its lease is left alone while it is young.

The external workers (`manage.py drive_worker`) sweep every half lease; the embedded server recovers what an
earlier server process left running at start-up (`embedded_worker`).
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

from simulations.models import Game
from simulations.services.lease import holder_is_dead

logger = logging.getLogger("mercury")


class WorkerStopped(Exception):
    """Recorded on a drive whose worker stopped while running it (the game is queued again)."""


def requeue_dead_drives() -> list[int]:
    """Mark the running drives of dead workers failed and queue their games again; return those games."""
    from simulations.tasks import drive_game_task, enqueue_drive

    lease = timedelta(seconds=settings.MERCURY_DRIVER_LEASE_SECONDS)
    now = timezone.now()
    running = DBTaskResult.objects.filter(
        status=TaskResultStatus.RUNNING, task_path=drive_game_task.module_path, started_at__lt=now - lease
    )
    requeued = []
    for row in running:
        game_id = row.args_kwargs["kwargs"]["game_id"]
        lease_row = Game.objects.filter(pk=game_id).values_list("driver", "driver_until").first()
        if lease_row is None:
            continue
        driver, until = lease_row
        if driver and until is not None and until > now and not holder_is_dead(driver):
            continue  # alive: it renewed its lease
        if not driver and row.started_at and row.started_at > now - 2 * lease:
            continue  # no lease taken: maybe just finishing; give it another lease's time
        who = row.worker_ids[-1] if row.worker_ids else "?"
        row.set_failed(WorkerStopped(f"worker {who} stopped during this drive (its lease lapsed)"))
        enqueue_drive(game_id=game_id)
        logger.warning("game %s: the drive of worker %s was left running; queued again", game_id, who)
        requeued.append(game_id)
    return requeued


class Sweeper(threading.Thread):
    """A daemon thread of an external worker process: `requeue_dead_drives` every half lease."""

    def __init__(self) -> None:
        super().__init__(name="mercury-drive-sweeper", daemon=True)
        self.stopped = threading.Event()

    def run(self) -> None:
        interval = max(0.5, settings.MERCURY_DRIVER_LEASE_SECONDS / 2)
        while not self.stopped.wait(interval):
            try:
                requeue_dead_drives()
            except DatabaseError:
                logger.exception("drive sweep failed; trying again in %.1f s", interval)
            finally:
                connections.close_all()
