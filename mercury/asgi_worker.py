"""The gunicorn worker class of the scaled set-up: uvicorn serving `mercury.asgi` (HTTP and websockets).

    gunicorn mercury.asgi:application -k mercury.asgi_worker.MercuryUvicornWorker -w 2 -b 127.0.0.1:8000

gunicorn forks the processes, shares the port among them and restarts one that dies; each runs uvicorn. Mercury's
application has no startup or shutdown hooks (the `lifespan` protocol): uvicorn is told not to send them, rather
than log each start that the application "appears not to support" them. Websocket frames are capped where
uvicorn reads them as well as in the consumer's own guard (`MERCURY_WS_MAX_MOVE_BYTES`).
"""

from __future__ import annotations

import os
from typing import Any

from uvicorn_worker import UvicornWorker


class MercuryUvicornWorker(UvicornWorker):
    CONFIG_KWARGS: dict[str, Any] = {
        "loop": "auto",
        "http": "auto",
        "ws": "websockets-sansio",
        "lifespan": "off",
        # A little above the consumer's own cap (a move's), so an oversized frame reaches the guard and gets its
        # clean close.
        "ws_max_size": 2 * int(os.environ.get("MERCURY_WS_MAX_MOVE_BYTES", "32768")),
    }
