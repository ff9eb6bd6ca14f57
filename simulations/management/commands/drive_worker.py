"""`manage.py drive_worker`: django-tasks-db's `db_worker`, plus the sweep that queues again the games of workers
that died mid-drive (simulations/drive_recovery.py). The scaled set-up's worker process (Procfile)."""

from __future__ import annotations

from typing import Any

from django_tasks_db.management.commands import db_worker

from simulations.drive_recovery import Sweeper
from simulations.services.lease import new_holder


class Command(db_worker.Command):
    help = (
        "Run a background worker that drives games (django-tasks-db's db_worker), and every half lease queue "
        "again the games whose drive was left running by a worker that died."
    )

    def add_arguments(self, parser: Any) -> None:
        super().add_arguments(parser)
        # Default: an id naming this host and process, so a sweep on this machine sees at once that it died.
        parser.set_defaults(worker_id=None)

    def handle(self, *args: Any, **options: Any) -> None:
        options["worker_id"] = options["worker_id"] or new_holder()
        sweeper = Sweeper()
        sweeper.start()
        try:
            super().handle(*args, **options)
        finally:
            sweeper.stopped.set()
