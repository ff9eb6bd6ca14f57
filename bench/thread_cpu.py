"""CPU seconds by kind of thread in this process (bench/http_server.py --profile): which part of the server
spends the CPU. A thread's CPU is read from /proc/self/task when asked (live threads) and when it ends (a wrapper
around Thread._bootstrap_inner), so short-lived threads (one per request, per model call) are counted too."""

from __future__ import annotations

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
            if thread.native_id is None:
                continue
            try:
                now = _cpu(thread.native_id)
            except (OSError, ValueError, IndexError):
                continue
            out[kind(thread.name)] += now - _reported.get(thread.native_id, 0.0)
            _reported[thread.native_id] = now
    return {k: round(v, 3) for k, v in sorted(out.items(), key=lambda kv: -kv[1]) if v >= 0.005}
