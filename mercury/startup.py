"""What a long-running process (a web server, a drive worker) does once it has loaded everything."""

from __future__ import annotations

import gc
import sys

# Objects allocated (net) before the collector looks at its youngest generation; CPython's default is 700. A
# turn allocates tens of thousands of short-lived objects (a state's copy, a prompt, a page's render), so at 700
# the young collections ran hundreds of times a turn and each promoted that turn's live objects a generation up,
# which the older collections then walked again. At 10,000 a turn's garbage dies young and full passes are rare
# (bench/http_games.py reports the collector's time a game).
YOUNG_GENERATION_THRESHOLD = 10_000


def keep_startup_objects_out_of_gc(*, drives_games: bool) -> None:
    """Everything loaded at start-up (Django, the app's modules and views, the URL patterns) lives as long as the
    process: `gc.freeze()` moves it out of the collector's generations, so a full collection walks only what
    requests and turns made since: under load a full collection pauses the event loop, and every page's frames
    wait for it.

    `drives_games`: this process calls models (a drive worker, or a server with the embedded workers), so the
    model library is loaded now rather than at the first turn. litellm's modules are about 340,000 objects, three
    times the rest of the process: left to load at the first model call, they stayed in the collector's oldest
    generation and every full collection walked them."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imports the views and everything they use
    if drives_games:
        from simulations.ai.gateway import load_model_library

        load_model_library()
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, older, oldest)


def hand_the_lock_over_sooner(milliseconds: float) -> None:
    """A server process's event loop does a little at a time and lets Python's lock go at every read and write of
    a socket; a request or page thread that takes it then holds it for the whole switch interval (5 ms by
    CPython's default) before the loop gets it back, so each of the loop's system calls could wait that long
    behind a render or a commit, and the loop makes hundreds a second (the "convoy effect"). A shorter interval
    shortens the latency tails for the same CPU (bench/load.py measures them). 0 leaves CPython's default.

    Server processes only: a `drive_worker` has no event loop to wait, only a hundred drive threads, and handing
    the lock around five times as often cost it CPU and the set-up its latency (same runs)."""
    if milliseconds > 0:
        sys.setswitchinterval(milliseconds / 1000)
