"""`manage.py drive_worker`: django-tasks-db's `db_worker`, plus the sweep that queues again the games of workers
that died mid-drive (simulations/driving/recovery.py), and `--threads N` to drive N games at once in one process.
The scaled set-up's worker process (Procfile).

A drive spends most of its time waiting for the model's words, so one process can drive several games: one loop
claims ready tasks as `db_worker` does (one look an interval while idle) and runs each in a pool of N threads
with django-tasks-db's own `run_task`. SIGINT or SIGTERM stops them after their current step: a drive pauses
there and its game is queued again.
"""

from __future__ import annotations

import os
import signal
from typing import Any

from django.conf import settings
from django_tasks_db.management.commands import db_worker

from mercury.cpu_placement import pin_to_one_cpu
from mercury.db.pool import limit_connections
from mercury.startup import keep_startup_objects_out_of_gc
from simulations.driving import tasks
from simulations.driving.pool import PooledWorker
from simulations.driving.recovery import Sweeper
from simulations.services.play.lease import new_holder

READY = "drive_worker ready:"


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
            # A drive waits on its model most of the time: a process drives a class's games, not a core's.
            default=int(os.environ.get("MERCURY_WORKER_THREADS", "150")),
            help="games this process drives at once (default: MERCURY_WORKER_THREADS or 150)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        threads = int(options.pop("threads"))
        # Each drive thread needs a connection for its commits, a web process's threads far fewer (settings.py).
        limit_connections(settings.WORKER_DB_MAX_CONNECTIONS)
        pin_to_one_cpu()  # before its threads start (mercury/cpu_placement.py)
        keep_startup_objects_out_of_gc(drives_games=True)
        sweeper = Sweeper()
        sweeper.start()
        try:
            if threads <= 1:
                options["worker_id"] = options["worker_id"] or new_holder()
                self._say_ready(1)
                super().handle(*args, **options)
            else:
                self.configure_logging(options["verbosity"])
                self._run_threads(threads, options)
        finally:
            sweeper.stopped.set()

    def _run_threads(self, count: int, options: dict[str, Any]) -> None:
        worker = PooledWorker(
            slots=count, queue_names=options["queue_name"].split(","), interval=options["interval"],
            batch=options["batch"], backend_name=options["backend_name"], startup_delay=options["startup_delay"],
            max_tasks=options["max_tasks"], worker_id=options["worker_id"] or new_holder(),
            excluded_queue_names=options["exclude_queues"].split(",") if options["exclude_queues"] else [],
            on_ready=lambda: self._say_ready(count),
        )  # fmt: skip

        def stop(signum: int, frame: Any) -> None:
            tasks.stopping.set()  # drives pause after their current step; their games are queued again
            worker.running = False

        for name in ("SIGINT", "SIGTERM", "SIGQUIT"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), stop)
        worker.run()

    def _say_ready(self, games: int) -> None:
        """Loading Django, the app and the model library, and starting the drive threads, take seconds (tens on
        a busy machine): this line says the worker now takes drives (bench/load.py waits for it)."""
        self.stdout.write(f"{READY} {games} games at once")
        self.stdout.flush()
