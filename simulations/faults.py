"""Instrumented crash points for fault-injection tests: `point(name)` kills this process (SIGKILL) at the n-th
hit of an armed point, exactly where a real crash could happen. Unarmed (always, outside those tests) it only
counts, which costs a dictionary increment.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

POINTS = ("before_model_call", "mid_stream", "inside_commit", "after_commit")
hits: Counter[str] = Counter()
armed: tuple[str, int] | None = None  # (point, n): die at the n-th hit of that point


def point(name: str) -> None:
    hits[name] += 1
    if armed is not None and armed[0] == name and hits[name] == armed[1]:
        os.kill(os.getpid(), signal.SIGKILL)


def arm(name: str, nth: int) -> None:
    global armed
    hits.clear()
    armed = (name, nth)


def disarm() -> None:
    global armed
    armed = None
    hits.clear()
