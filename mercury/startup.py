"""What a long-running process (a web server, a drive worker) does once it has loaded everything."""

from __future__ import annotations

import gc


def keep_startup_objects_out_of_gc() -> None:
    """Everything loaded at start-up (Django, the app's modules and views, the URL patterns) lives as long as the
    process: `gc.freeze()` moves it out of the collector's generations, so a full collection walks only what
    requests and turns made since. Measured under load (bench/load.py, 100 students, scaled set-up): each web
    process paused its event loop for a full collection about every two seconds, 230–380 ms each, and every
    page's frames waited; frozen after start-up, 50–150 ms."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imports the views and everything they use
    gc.collect()
    gc.freeze()
