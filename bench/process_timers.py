"""Timers inside the scaled set-up's processes for `bench/load.py --profile-web` / `--profile-workers`.

A process counts its threads' CPU by kind and its main code paths' CPU (`bench.thread_cpu`), and a thread of its
own looks in MERCURY_BENCH_TIMERS_DIR for trigger files every 0.2 s: for each new `snap-NAME` (no dot) it writes
what it counted since the previous one to `snap-NAME.ROLE-PID.json`. load.py makes one as its window opens and one
as it closes, and sums the reports by role.

- web processes: `bench/gunicorn_timers.py` (a gunicorn settings file) calls `start("web")` in each forked process,
  with the one-process server's spans (`bench/http_server.py --profile-threads`);
- workers: this file runs a management command with the drive's spans instead of `manage.py`:

    .venv/bin/python bench/process_timers.py drive_worker --no-reload ...   (MERCURY_BENCH_TIMERS_DIR=DIR)
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def start(role: str) -> None:
    """Count this process's threads from now on and answer load.py's triggers (see the module's docstring)."""
    from bench import thread_cpu

    thread_cpu.install()
    folder = Path(os.environ["MERCURY_BENCH_TIMERS_DIR"])

    def watch() -> None:
        done: set[str] = set()
        while True:
            for trigger in sorted(folder.glob("snap-*")):
                if "." not in trigger.name and trigger.name not in done:  # not a report
                    done.add(trigger.name)
                    report = {"threads": thread_cpu.report(), "paths": thread_cpu.spans_report()}
                    target = folder / f"{trigger.name}.{role}-{os.getpid()}.json"
                    target.with_suffix(".tmp").write_text(json.dumps(report))
                    target.with_suffix(".tmp").replace(target)
            time.sleep(0.2)

    threading.Thread(target=watch, name="bench-timers", daemon=True).start()


def time_worker_paths() -> None:
    """A drive's main code paths, in CPU seconds of the thread that runs them: the turn and its parts (the prompt,
    the offline model writing and streaming its words, the screen and relay of those words, the commit, the
    group sends to Redis) and the pool's look for queued drives."""
    from bench.http_server import time_drive_paths
    from bench.thread_cpu import time_calls
    from simulations.ai import gateway, offline
    from simulations.driving import pool as worker_pool
    from simulations.kinds.negotiation import output_guard, platform
    from simulations.services.ledger import turns
    from simulations.services.pages import broadcast
    from simulations.services.play import lease

    time_drive_paths()  # the turn, its prompt, the game's load and the relay, as the one-process server's
    time_calls(gateway, "complete", "drive: model call (the offline model's words, screened and relayed)")
    time_calls(offline, "write", "drive: the offline model writes its answer")
    time_calls(output_guard.ScreenedStream, "feed", "drive: screen streamed words")
    time_calls(broadcast, "_send", "drive: group send (streamed frame or committed turn)")
    time_calls(turns, "commit_event", "drive: commit")
    time_calls(platform.Negotiation, "advance", "commit: the machine's step (advance)")
    time_calls(turns, "_write", "commit: write the rows")
    time_calls(turns, "_announce", "commit: announce the turn")
    time_calls(turns, "stored_version", "commit: lock and compare the version")
    time_calls(turns, "insert_rows", "commit: an insert")
    time_calls(turns, "update_row", "commit: the game's update")
    time_calls(lease._Heartbeats, "_beat", "lease: heartbeat")
    time_calls(worker_pool.PooledWorker, "_claim", "pool: claim a queued drive")
    time_calls(worker_pool.PooledWorker, "_any_ready", "pool: look for queued drives")


def main() -> None:
    os.chdir(ROOT)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mercury.settings")
    import django
    from django.core.management import execute_from_command_line

    django.setup()
    start("worker")
    time_worker_paths()
    execute_from_command_line(["manage.py", *sys.argv[1:]])


if __name__ == "__main__":
    main()
