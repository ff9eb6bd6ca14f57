"""Instrumented crash points for fault-injection tests: `point(name)` kills this process (SIGKILL) at the n-th
hit of an armed point, exactly where a real crash could happen, or raises `InjectedFault` there (an unexpected
error, such as a lost database connection). Unarmed (always, outside those tests) it only counts, which costs a
dictionary increment.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

POINTS = ("before_model_call", "mid_stream", "inside_commit", "after_commit")
hits: Counter[str] = Counter()
armed: tuple[str, int] | None = None  # (point, n): fail at the n-th hit of that point
raising = False  # raise InjectedFault there instead of dying


class InjectedFault(RuntimeError):
    def __init__(self) -> None:
        super().__init__("injected fault")


def point(name: str) -> None:
    hits[name] += 1
    if armed is not None and armed[0] == name and hits[name] == armed[1]:
        if raising:
            raise InjectedFault()
        os.kill(os.getpid(), signal.SIGKILL)


def arm(name: str, nth: int, *, raise_instead: bool = False) -> None:
    global armed, raising
    hits.clear()
    armed, raising = (name, nth), raise_instead


def disarm() -> None:
    global armed, raising
    armed, raising = None, False
    hits.clear()
