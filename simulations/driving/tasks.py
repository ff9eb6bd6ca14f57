"""Background driving with django-tasks (database backend): "drive game N" is a queued task.

The consumer enqueues it when a page connects, and a student's move right after its answer (the consumer's render
of the move queues it too, should that have failed); the task drives the game until a human must act.

A task that finds the game's lease held by another queued drive leaves the game to it: that drive's row says
"running" while it drives, and should its worker die, the workers' sweep (`recovery`) queues the game again.
A lease held by another driver (the `play` command, a kind's own loop) is watched instead: the task queues itself
again for when that lease lapses, so a dead driver's game is taken over without anyone watching. (Only such
drives watch: every queued drive watching would run a task every few seconds for each game being driven.)
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

from django.utils import timezone
from django_tasks import TaskResultStatus, task
from django_tasks_db.models import DBTaskResult

from simulations.driving import statements as task_statements
from simulations.models import Game
from simulations.services.ledger.rows import columns_by_pk
from simulations.services.play.drive import Outcome, drive_game
from simulations.services.play.lease import held_by_queued_drive, new_holder

logger = logging.getLogger("mercury")
stopping = (
    threading.Event()
)  # the process is asked to stop: drives pause between steps (their task is queued again)
STEPS_PER_TASK = 20  # then the task queues itself again, so one long game does not hold a worker for ever
TAKEOVER_MARGIN = 0.5  # seconds after the holder's lease lapses before a waiting task looks again


# A drive that broke on an unexpected error (a lost database connection…) released its lease with AI turns left:
# it queues the game again after this many seconds, unless that many drives of the game failed in the last window.
RETRY_AFTER_ERROR_SECONDS = 2.0
FAILED_DRIVES_BEFORE_GIVING_UP, FAILURE_WINDOW = 3, timedelta(minutes=10)


@task()
def drive_game_task(game_id: int) -> str:
    """Drive one game in the background (see `simulations.services.play.drive`)."""
    try:
        drive = drive_game(
            game_id=game_id, holder=new_holder(queued_drive=True), max_steps=STEPS_PER_TASK,
            should_stop=stopping.is_set,
        )  # fmt: skip
    except Game.DoesNotExist:
        return "gone"
    except Exception:
        _queue_again_after_error(game_id)
        raise  # recorded on this drive's row
    if drive.outcome is Outcome.HELD:
        lease = columns_by_pk(Game, ("driver", "driver_until"), game_id)
        # Gone, or the holder's worker carries on (or, should it die, the workers' sweep queues the game again).
        if lease is None or held_by_queued_drive(*lease):
            return drive.outcome.value
        enqueue_drive(game_id=game_id, delay=drive.retry_in + TAKEOVER_MARGIN)
    elif drive.outcome is Outcome.PAUSED:
        enqueue_drive(game_id=game_id)
    return drive.outcome.value


def enqueue_drive(*, game_id: int, delay: float = 0.0) -> bool:
    """Queue "drive game N" to run after `delay` seconds, unless one is already queued to run by then.
    False when it was already queued (a second task would only find the lease held)."""
    due = timezone.now() + timedelta(seconds=delay)
    if task_statements.drive_queued(DBTaskResult.objects.db, drive_game_task.module_path, game_id, due):
        return False
    task_statements.enqueue(drive_game_task.using(run_after=due if delay > 0 else None), game_id=game_id)
    logger.debug("game %s: drive queued (in %.1f s)", game_id, delay)
    return True


def _queue_again_after_error(game_id: int) -> None:
    """Nobody else would pick the game up until a page connects or a move is made: queue it again, unless its
    drives keep failing (a fault a retry does not mend; the failed rows say why)."""
    failed = DBTaskResult.objects.filter(
        status=TaskResultStatus.FAILED,
        task_path=drive_game_task.module_path,
        args_kwargs__kwargs__game_id=game_id,
        finished_at__gte=timezone.now() - FAILURE_WINDOW,
    ).count()
    if failed < FAILED_DRIVES_BEFORE_GIVING_UP:
        enqueue_drive(game_id=game_id, delay=RETRY_AFTER_ERROR_SECONDS)
    else:
        logger.error("game %s: %d drives failed in a row; not queued again", game_id, failed + 1)
