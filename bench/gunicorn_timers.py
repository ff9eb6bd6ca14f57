"""gunicorn settings for `bench/load.py --profile-web`: each web process of the scaled set-up times its code paths.

    gunicorn -c bench/gunicorn_timers.py mercury.asgi:application ...   (MERCURY_BENCH_TIMERS_DIR=DIR)

Once its application is loaded, a web process counts its threads' CPU by kind and its main code paths' CPU as
`bench/http_server.py --profile-threads` does for the one-process server (the same spans), and reports them to
load.py as `bench/process_timers.py` describes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def post_worker_init(worker: Any) -> None:
    from bench.http_server import time_code_paths
    from bench.process_timers import start

    start("web")
    time_code_paths()
