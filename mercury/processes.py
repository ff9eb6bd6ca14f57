"""What /proc says about a process on this machine, without Django: whether a pid still names the process it
named (the driver lease's holders, `simulations/services/play/lease.py`; the CPU placement's, `cpu_placement.py`)."""

from __future__ import annotations

from functools import cache
from pathlib import Path


def read_quietly(path: str) -> str:
    """A small /proc or /sys file's text, stripped; "" when it cannot be read."""
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


@cache
def has_proc() -> bool:
    return Path("/proc/self/stat").exists()


def started(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (tells a reused pid apart); None if it is gone or a
    zombie; "" where /proc is not there to ask."""
    if not has_proc():
        return ""
    stat = read_quietly(f"/proc/{pid}/stat")
    if not stat:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # after the command name, which may hold spaces
    if fields[0] in ("Z", "X"):
        return None
    return fields[19]
