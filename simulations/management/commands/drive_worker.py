"""`manage.py drive_worker`: django-tasks-db's `db_worker`, plus the sweep that queues again the games of workers
that died mid-drive (simulations/drive_recovery.py), and `--threads N` to drive N games at once in one process.
The scaled set-up's worker process (Procfile).

A drive spends most of its time waiting for the model's words, so one process can drive several games: each
thread runs django-tasks-db's own worker loop (as `db_worker` does in its one thread) under its own id. SIGINT or
SIGTERM stops them after their current step: a drive pauses there and its game is queued again.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

from django.db import connections
from django_tasks_db.management.commands import db_worker

from simulations import embedded_worker
from simulations.drive_recovery import Sweeper
from simulations.services.lease import new_holder


class Command(db_worker.Command):
    help = (
        "Run a background worker that drives games (django-tasks-db's db_worker), in --threads threads, and "
        "every half lease queue again the games whose drive was left running by a worker that died."
    )

    def add_arguments(self, parser: Any) -> None:
        super().add_arguments(parser)
        # Default: an id naming this host and process, so a sweep on this machine sees at once that it died.
        parser.set_defaults(worker_id=None)
        parser.add_argument(
            "--threads",
            type=int,
            default=int(os.environ.get("MERCURY_WORKER_THREADS", "1")),
            help="games this process drives at once (default: MERCURY_WORKER_THREADS or 1)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        threads = int(options.pop("threads"))
        sweeper = Sweeper()
        sweeper.start()
        try:
            if threads <= 1:
                options["worker_id"] = options["worker_id"] or new_holder()
                super().handle(*args, **options)
            else:
                self.configure_logging(options["verbosity"])
                self._run_threads(threads, options)
        finally:
            sweeper.stopped.set()

    def _run_threads(self, count: int, options: dict[str, Any]) -> None:
        workers = [
            db_worker.Worker(
                queue_names=options["queue_name"].split(","), interval=options["interval"],
                batch=options["batch"], backend_name=options["backend_name"],
                startup_delay=options["startup_delay"], max_tasks=options["max_tasks"],
                worker_id=f"{options['worker_id']}-{n}" if options["worker_id"] else new_holder(),
                excluded_queue_names=options["exclude_queues"].split(",") if options["exclude_queues"] else [],
            )
            for n in range(count)
        ]  # fmt: skip

        def stop(signum: int, frame: Any) -> None:
            embedded_worker.stopping.set()  # drives pause after their current step; their games are queued again
            for worker in workers:
                worker.running = False

        for name in ("SIGINT", "SIGTERM", "SIGQUIT"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), stop)
        running = [
            threading.Thread(target=_run, args=(worker,), name=f"mercury-drive-{n}", daemon=True)
            for n, worker in enumerate(workers)
        ]
        for thread in running:
            thread.start()
        for thread in running:
            while thread.is_alive():
                thread.join(0.5)  # wakes for signals


def _run(worker: db_worker.Worker) -> None:
    try:
        worker.run()
    finally:
        connections.close_all()  # this thread's own connections
