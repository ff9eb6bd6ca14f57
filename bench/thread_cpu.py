"""CPU seconds by kind of thread in this process (bench/http_server.py --profile): which part of the server
spends the CPU. A thread's CPU is read from /proc/self/task when asked (live threads) and when it ends (a wrapper
around Thread._bootstrap_inner), so short-lived threads (one per request, per model call) are counted too."""

from __future__ import annotations

import os
import re
import threading
import time
from collections import defaultdict
from pathlib import Path

_lock = threading.Lock()
_done: dict[str, float] = defaultdict(float)  # CPU of threads that ended since the last report
_reported: dict[int, float] = {}  # native id -> CPU already reported for a live thread
CLK_TCK = 100.0


def kind(name: str) -> str:
    return re.sub(r"[\d_-]+$", "", re.sub(r"-\d+_\d+$", "", name)) or name


def _cpu(native_id: int) -> float:
    fields = Path(f"/proc/self/task/{native_id}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def install() -> None:
    original = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]

    def timed(self: threading.Thread) -> None:
        started = time.thread_time()
        try:
            original(self)
        finally:
            spent = time.thread_time() - started
            with _lock:
                already = _reported.pop(threading.get_native_id(), 0.0)
                _done[kind(self.name)] += max(0.0, spent - already)

    threading.Thread._bootstrap_inner = timed  # type: ignore[attr-defined]


def report() -> dict[str, float]:
    """CPU seconds by thread kind since the last report."""
    with _lock:
        out: dict[str, float] = defaultdict(float, _done)
        _done.clear()
        for thread in threading.enumerate():
            # On Linux the main thread's id is the process's; a forked child (a gunicorn worker) keeps its
            # parent's in `native_id` (Python 3.11).
            native = os.getpid() if thread is threading.main_thread() else thread.native_id
            if native is None:
                continue
            try:
                now = _cpu(native)
            except (OSError, ValueError, IndexError):
                continue
            out[kind(thread.name)] += now - _reported.get(native, 0.0)
            _reported[native] = now
    return {k: round(v, 3) for k, v in sorted(out.items(), key=lambda kv: -kv[1]) if v >= 0.005}


# --- CPU by code path ------------------------------------------------------------------------------------------

_spans: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])  # label -> [CPU seconds, calls]


def time_calls(owner: object, attribute: str, label: str) -> None:
    """Add the calling thread's CPU spent inside `owner.attribute` (a function or method, looked up when called)
    to `label`. Spans may nest: each counts everything under it, so they are read side by side, not summed."""
    import functools

    original = getattr(owner, attribute)

    @functools.wraps(original)
    def timed(*args: object, **kwargs: object) -> object:
        started = time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            spent = time.thread_time() - started
            with _lock:
                span = _spans[label]
                span[0] += spent
                span[1] += 1

    setattr(owner, attribute, timed)


def spans_report() -> dict[str, tuple[float, int]]:
    """CPU seconds and calls by span since the last report."""
    with _lock:
        out = {k: (round(v[0], 3), int(v[1])) for k, v in sorted(_spans.items(), key=lambda kv: -kv[1][0])}
        _spans.clear()
    return out
