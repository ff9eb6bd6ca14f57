"""A small sampling profiler for every thread of a process (no package needed): where a server's CPU goes.

Every `interval` seconds a daemon thread reads `sys._current_frames()` and counts, for each thread that is on a
CPU (state R in /proc/self/task) and not parked (its innermost frame is not a known wait: a lock, a selector, a
queue, a sleep), every function on its stack once (inclusive) and its innermost function (exclusive). The GIL decides when the sampler runs, so the
shares are rough; they are read side by side, before and after a change, never as absolute times.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from types import FrameType

PARKED = {
    ("threading.py", "wait"), ("threading.py", "_wait_for_tstate_lock"), ("selectors.py", "select"),
    ("queue.py", "get"), ("socket.py", "accept"), ("epollreactor.py", "doPoll"), ("thread.py", "_worker"),
    ("sampler.py", "_run"), ("db_worker.py", "run"), ("base_events.py", "_run_once"), ("subprocess.py", "_wait"),
}  # fmt: skip


class Sampler:
    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        self.inclusive: Counter[str] = Counter()
        self.exclusive: Counter[str] = Counter()
        self.samples = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._run, name="bench-sampler", daemon=True).start()

    def _run(self) -> None:
        me = threading.get_ident()
        while True:
            time.sleep(self.interval)
            frames = sys._current_frames()
            native = {t.ident: t.native_id for t in threading.enumerate()}
            with self._lock:
                for ident, frame in frames.items():
                    if ident != me and not _parked(frame) and _on_cpu(native.get(ident)):
                        self._count(frame)

    def _count(self, frame: FrameType | None) -> None:
        self.samples += 1
        seen: set[str] = set()
        first = True
        while frame is not None:
            code = frame.f_code
            name = f"{code.co_filename.rsplit('site-packages/', 1)[-1]}:{code.co_name}"
            if first:
                self.exclusive[name] += 1
                first = False
            if name not in seen:
                seen.add(name)
                self.inclusive[name] += 1
            frame = frame.f_back

    def report(self, top: int = 60) -> str:
        """The top functions by inclusive and exclusive share of busy samples; then starts afresh."""
        with self._lock:
            n = max(self.samples, 1)
            lines = [f"busy samples: {self.samples}", "inclusive:"]
            lines += [f"{100 * c / n:6.1f}% {name}" for name, c in self.inclusive.most_common(top)]
            lines.append("exclusive:")
            lines += [f"{100 * c / n:6.1f}% {name}" for name, c in self.exclusive.most_common(top // 2)]
            self.inclusive.clear()
            self.exclusive.clear()
            self.samples = 0
        return "\n".join(lines)


def _on_cpu(native_id: int | None) -> bool:
    """The thread is running (state R in /proc), not waiting on a lock, a socket or the disk."""
    if native_id is None:
        return True
    try:
        with open(f"/proc/self/task/{native_id}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "R"
    except OSError:
        return False


def _parked(frame: FrameType) -> bool:
    code = frame.f_code
    return (code.co_filename.rsplit("/", 1)[-1], code.co_name) in PARKED
