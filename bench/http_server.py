"""The server process of bench/http_games.py: daphne serving `mercury.asgi` exactly as `daphne` would, plus timers
(`--server uvicorn`: uvicorn as a process of the scaled set-up runs it, on the embedded workers).

    .venv/bin/python bench/http_server.py --port PORT --stats FILE

The environment (database, settings) comes from the parent. Inside the process it counts what only the server
sees: every committed transaction (`commit_event` and `create_game`, timed with bench/games.py's hooks, which also
time the model calls and AI turn preparation) and every database connection Django opens (`connection_created`, not counting those the pool
hands over again, in any thread). With --profile it also samples every thread (bench/sampler.py). On SIGUSR1 it writes what it collected since the previous signal to FILE (atomically, with a serial
number the parent waits for) and starts afresh, so the parent reads one concurrency level at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


# cProfiles of the drives the embedded worker runs, of the requests the views answer and of the pages' renders of
# committed turns, each in its own thread, and of the server's event loop in the main thread (deterministic, unlike
# the sampler, which the GIL biases; their times are wall times, a thread's wait for the GIL included); reported
# and emptied once a level is done.
_profiles: dict[str, list[Any]] = {"worker threads": [], "requests": [], "page renders": [], "event loop": []}


def _profiled(method: Any, into: list[Any]) -> Any:
    import cProfile

    def profiled(*args: Any, **kwargs: Any) -> Any:
        profile = cProfile.Profile()
        into.append(profile)
        return profile.runcall(method, *args, **kwargs)

    return profiled


def profile_threads() -> None:
    """cProfile every drive in its pool thread, every request in the thread that runs its view and every render of
    a committed turn in its page thread."""
    from django.core.handlers.base import BaseHandler

    from simulations import consumers
    from simulations.driving import embedded as embedded_worker

    worker = embedded_worker.EmbeddedWorker
    worker.run_task = _profiled(worker.run_task, _profiles["worker threads"])  # type: ignore[method-assign]
    BaseHandler.get_response = _profiled(BaseHandler.get_response, _profiles["requests"])  # type: ignore[method-assign]
    consumers.GameConsumer._advanced = _profiled(consumers.GameConsumer._advanced, _profiles["page renders"])  # type: ignore[method-assign]


def profile_event_loop() -> None:
    """cProfile the calling thread (the main thread, where the server's event loop runs) from now until the next
    call, which files it with the level's profiles and starts the next (signal handlers run in this thread)."""
    import cProfile

    global _loop_profile
    if _loop_profile is not None:
        _loop_profile.disable()
        _profiles["event loop"].append(_loop_profile)
    _loop_profile = cProfile.Profile()
    _loop_profile.enable()


_loop_profile: Any = None  # the event loop's profile of the level being played


def time_code_paths() -> None:
    """The server's main code paths, timed in CPU seconds of the thread that runs them (bench/thread_cpu.py)."""
    from django.conf import settings
    from django.contrib import auth
    from django.core.handlers.base import BaseHandler
    from django.template import loader
    from django.utils.module_loading import import_string

    from bench.thread_cpu import time_calls
    from simulations import consumers
    from simulations.kinds.negotiation import pages, presenters
    from simulations.services.pages import broadcast

    time_calls(BaseHandler, "get_response", "request (a view and its middleware)")
    time_calls(pages, "move", "request: the move view")
    time_calls(pages, "submit_human_event", "request: the move's commit")
    time_calls(pages, "render_panels", "request: the move's panels")
    time_calls(auth, "get_user", "request: the log-in's user")
    time_calls(import_string(settings.SESSION_ENGINE + ".SessionStore"), "load", "session read")
    time_calls(import_string(settings.AUTHENTICATION_BACKENDS[0]), "get_user", "request: the user's row")
    time_calls(consumers.GameConsumer, "_advanced", "consumer: turn committed (load, render, queue)")
    time_calls(consumers.GameConsumer, "_render", "consumer: render")
    time_calls(presenters, "game_context", "render: panels' context")
    time_calls(presenters, "transcript", "render: new entries")
    time_calls(loader, "render_to_string", "render: templates")
    time_calls(broadcast, "session_still_valid", "consumer: session check")
    time_drive_paths()


def time_drive_paths() -> None:
    """A drive's turn and its main parts (the embedded workers here; bench/process_timers.py adds more for a
    drive_worker)."""
    from bench.thread_cpu import time_calls
    from simulations.kinds.negotiation import platform, prompts
    from simulations.kinds.negotiation import turns as ai_turns
    from simulations.services.play import drive

    time_calls(platform.Negotiation, "play_ai_step", "drive: AI turn (prompt, model, commit)")
    time_calls(prompts, "build_prompt", "drive: build_prompt")
    time_calls(ai_turns, "seen_entries", "drive: seen_entries")
    time_calls(drive, "_load", "drive: load the game")
    time_calls(drive.StreamRelay, "chunk", "drive: relay chunks")
    time_calls(drive.StreamRelay, "close", "drive: relay close")


GAME_WORK = (
    "drive: AI turn (prompt, model, commit)",
    "request: the move's commit",
)  # what a headless game does too


def overhead(threads: dict[str, float], spans: dict[str, tuple[float, int]]) -> str:
    """The server's CPU outside the game's own work (its AI turns and the moves' commits, which cost what they
    cost headless), per unit of that work: what the HTTP game adds to the headless one, read from CPU rather than
    from wall times, which these machines' changing speed makes noisy (docs/benchmarks.md)."""
    work = sum(spans.get(label, (0.0, 0))[0] for label in GAME_WORK)
    total = sum(cpu for kind, cpu in threads.items() if not kind.startswith("bench"))
    if work <= 0:
        return "overhead: no game work timed"
    return f"overhead: {(total - work) / work:.3f} of the game's work ({total - work:.2f} s outside {work:.2f} s)"


def profile_report(kind: str, top: int = 45) -> str:
    import io
    import pstats

    done = list(_profiles[kind])  # a level is collected once its games (and their drives) have ended
    _profiles[kind].clear()
    for p in done:
        p.snapshot_stats()
    done = [p for p in done if p.stats]  # type: ignore[attr-defined]  # a drive that ran no Python is empty
    if not done:
        return "(none)"
    out = io.StringIO()
    stats = pstats.Stats(done[0], stream=out)
    for p in done[1:]:
        stats.add(p)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(25)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--stats", type=Path, required=True)
    parser.add_argument(
        "--profile", type=Path, help="sample every thread (bench/sampler.py); report to this file"
    )
    parser.add_argument(
        "--count-queries", action="store_true", help="count SQL statements by calling function"
    )
    parser.add_argument(
        "--threads-only",
        action="store_true",
        help="with --profile: only CPU by thread kind and by code path (no sampler, no cProfile, which distort them)",
    )
    parser.add_argument("--server", choices=("daphne", "uvicorn"), default="daphne")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mercury.settings")

    from django.db.backends.signals import connection_created

    if "asgi" in os.environ.get("MERCURY_BENCH_LIBRARY_WAY", "").split(","):  # bench/library_way.py
        from django.core.handlers.asgi import ASGIHandler

        import mercury.asgi_handler

        mercury.asgi_handler.OneHopASGIHandler = ASGIHandler  # type: ignore[misc,assignment]
    import mercury.asgi  # noqa: F401 - sets Django up and imports every module the hooks patch

    if os.environ.get("MERCURY_BENCH_LIBRARY_WAY"):
        from bench import library_way

        library_way.apply()
    from bench.games import COMMIT, CREATE, Clock, gc_watched, instrumented

    clock = Clock()
    sampler = None
    if args.profile:
        from bench import thread_cpu
        from bench.sampler import Sampler

        thread_cpu.install()
        thread_cpu.report()
        time_code_paths()
        if not args.threads_only:
            sampler = Sampler()
            profile_threads()
    lock = threading.Lock()
    opened = {"n": 0, "serial": 0}
    by_thread: Counter[str] = Counter()  # who opens them: thread names without their numbers

    queries: Counter[str] = Counter()  # statements by the project's function that ran them

    def count_query(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        frame = sys._getframe(1)
        site = "?"
        while frame is not None:
            path = frame.f_code.co_filename
            if "/simulations/" in path and "site-packages" not in path:
                site = f"{path.rsplit('/simulations/', 1)[1]}:{frame.f_code.co_name}"
                break
            frame = frame.f_back  # type: ignore[assignment]
        queries[site] += 1
        return execute(sql, params, many, context)

    def on_connection(connection: Any, **_: Any) -> None:
        if args.count_queries and count_query not in connection.execute_wrappers:
            connection.execute_wrappers.append(count_query)
        if getattr(connection, "reused_connection", False) or connection.settings_dict["OPTIONS"].get("pool"):
            # Handed over by the pool (mercury/db/pool.py): not a new connection. Django's pool (PostgreSQL) says
            # nothing of which it opened: PostgreSQL's own session count tells (bench/http_games.py).
            return
        with lock:
            opened["n"] += 1
            by_thread[re.sub(r"[\d_-]+$", "", threading.current_thread().name)] += 1

    connection_created.connect(on_connection, weak=False)

    def dump(*_: Any) -> None:
        with lock:
            opened["serial"] += 1
            data = {
                "serial": opened["serial"],
                "connections": opened["n"],
                "connections_by_thread": dict(by_thread),
                "queries_by_site": dict(queries),
                "transactions_s": clock.samples[COMMIT] + clock.samples[CREATE],
                "model_calls": len(clock.samples["model"]),
                "gc_s": sum(sum(clock.samples[f"gc{g}"]) for g in range(3)),
                "gc_full": len(clock.samples["gc2"]),
            }
            opened["n"] = 0
            by_thread.clear()
            queries.clear()
            clock.clear()
        if args.profile:
            from bench import thread_cpu

            if sampler:
                profile_event_loop()  # the level's loop profile is filed; the next level's starts
            threads, spans = thread_cpu.report(), thread_cpu.spans_report()
            with args.profile.open("a") as out:
                out.write(
                    f"--- level {data['serial']}\ncpu by thread: {threads}\n"
                    f"cpu by code path (s, calls): {spans}\n{overhead(threads, spans)}\n"
                    f"{sampler.report() if sampler else ''}\n"
                )
                for kind in _profiles:
                    out.write(f"{kind} (cProfile):\n{profile_report(kind)}\n")
        tmp = args.stats.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(args.stats)

    signal.signal(signal.SIGUSR1, dump)
    if sampler:
        profile_event_loop()
    with instrumented(clock), gc_watched(clock):
        if args.server == "uvicorn":  # as one process of the scaled set-up runs it, without gunicorn
            import uvicorn

            from mercury.asgi_worker import MercuryUvicornWorker

            config = MercuryUvicornWorker.CONFIG_KWARGS
            uvicorn.run(
                "mercury.asgi:application", host="127.0.0.1", port=args.port, log_level="warning", **config
            )
        else:
            from daphne.cli import CommandLineInterface

            CommandLineInterface().run(["-b", "127.0.0.1", "-p", str(args.port), "mercury.asgi:application"])


if __name__ == "__main__":
    main()
