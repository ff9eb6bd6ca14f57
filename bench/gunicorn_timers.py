"""gunicorn settings for `bench/load.py --profile-web`: each web process of the scaled set-up times its code paths.

    gunicorn -c bench/gunicorn_timers.py mercury.asgi:application ...   (MERCURY_BENCH_TIMERS_DIR=DIR)

Once its application is loaded, a web process counts its threads' CPU by kind and its main code paths' CPU as
`bench/http_server.py --profile-threads` does for the one-process server (`bench.thread_cpu`; the same spans). A
thread of its own looks in DIR for trigger files every 0.2 s: for each new `snap-NAME` (no dot) it writes what it counted
since the previous one to `snap-NAME.PID.json`. load.py makes one as its window opens and one as it closes.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def post_worker_init(worker: Any) -> None:
    from bench import thread_cpu
    from bench.http_server import time_code_paths

    thread_cpu.install()
    time_code_paths()
    folder = Path(os.environ["MERCURY_BENCH_TIMERS_DIR"])

    def watch() -> None:
        done: set[str] = set()
        while True:
            for trigger in sorted(folder.glob("snap-*")):
                if "." not in trigger.name and trigger.name not in done:  # not a report
                    done.add(trigger.name)
                    report = {"threads": thread_cpu.report(), "paths": thread_cpu.spans_report()}
                    target = folder / f"{trigger.name}.{os.getpid()}.json"
                    target.with_suffix(".tmp").write_text(json.dumps(report))
                    target.with_suffix(".tmp").replace(target)
            time.sleep(0.2)

    threading.Thread(target=watch, name="bench-timers", daemon=True).start()
