"""Each long-running Mercury process on one CPU of its own, spread over the machine's (`MERCURY_PIN_CPU`).

A process runs Python on one core at a time (the GIL), but its threads (the event loop, the page threads, the
drives, the model calls) hand the GIL to each other hundreds of times a turn. Left to the kernel, the thread that
takes it over wakes on another core: on these virtual machines a wake-up across cores is an interrupt that leaves
the guest, and the interpreter's hot data then moves between the cores' caches. Pinned to one CPU, the one-process
server spends less CPU a game and varies less (bench/http_games.py compares `MERCURY_PIN_CPU=off`).

The processes that pin themselves (a server process: daphne, runserver's, each gunicorn/uvicorn process; each
`drive_worker`) take the allowed CPU with the fewest Mercury processes on it, so that two web processes and two
workers on two cores are one of each per core. They find each other through a small file of live pids (under
the system's temporary directory, per user; MERCURY_CPU_PLACEMENT_FILE names another), read and written under a
lock; a process that ended (or whose pid now names another process: each entry keeps its start time) is dropped
by the next one to start. PostgreSQL, Redis and everything else keep the
whole machine.

Nothing is pinned when fewer than two CPUs are allowed (the process's own affinity, which an administrator's
`taskset` or a container's cpuset sets, is respected), where the platform has no affinity (macOS), or with
MERCURY_PIN_CPU=off (the test suite sets it: a browser that a test launches would inherit the pin).
"""

from __future__ import annotations

import json
import logging
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from mercury.processes import started

logger = logging.getLogger("mercury")

OFF = ("off", "0", "false", "no")


def placement_file() -> Path:
    return Path(
        os.environ.get("MERCURY_CPU_PLACEMENT_FILE")
        or Path(tempfile.gettempdir()) / f"mercury-cpus-{os.getuid()}.json"
    )


def enabled() -> bool:
    return os.environ.get("MERCURY_PIN_CPU", "auto").strip().lower() not in OFF and hasattr(
        os, "sched_setaffinity"
    )


def allowed_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def least_used(cpus: Iterable[int], placed: Iterable[int]) -> int:
    """The CPU of `cpus` with the fewest of the `placed` processes' CPUs on it (the lowest such number on a tie)."""
    load = {cpu: 0 for cpu in cpus}
    for cpu in placed:
        if cpu in load:
            load[cpu] += 1
    return min(load, key=lambda cpu: (load[cpu], cpu))


def pin_to_one_cpu() -> int | None:
    """Pin this process (every thread it has now, and so every thread it starts) to the least used allowed CPU
    and record it; the CPU, or None when nothing was pinned."""
    if not enabled():
        return None
    cpus = allowed_cpus()
    if len(cpus) < 2:
        return None
    try:
        cpu = _claim(cpus)
        for task in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(task), {cpu})
            except ProcessLookupError:  # a thread that ended meanwhile
                continue
    except OSError as exc:  # an unwritable or refused placement file, a platform without /proc: run unpinned
        logger.warning("not pinned to a CPU: %s", exc)
        return None
    return cpu


def next_cpu() -> int | None:
    """The CPU the next process to pin itself would take now (bench/http_games.py plays its headless games there,
    to compare like with like); None where nothing would be pinned."""
    cpus = allowed_cpus()
    if not enabled() or len(cpus) < 2:
        return None
    try:
        with os.fdopen(_open_placement(placement_file()), "r") as file:
            text = file.read()
    except OSError:
        text = ""
    return least_used(cpus, (cpu for cpu, _ in _live(_read(text)).values()))


def _open_placement(path: Path) -> int:
    """The placement file, opened for reading and writing, refused unless it is a plain file of this user's with
    one name: a predictable name in a shared temporary directory must not let another local user point it at a
    file of ours (a symbolic link, a hard link) and have us overwrite that."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    info = os.fstat(fd)
    if info.st_uid != os.getuid() or info.st_nlink != 1 or not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise OSError(f"{path} is not a plain file of this user's alone: remove it")
    return fd


def _claim(cpus: list[int]) -> int:
    import fcntl  # here: the module is imported on every platform, and only Linux gets this far (`enabled`)

    with os.fdopen(_open_placement(placement_file()), "r+") as file:
        fcntl.flock(file, fcntl.LOCK_EX)
        file.seek(0)
        entries = _live({pid: entry for pid, entry in _read(file.read()).items() if pid != os.getpid()})
        cpu = least_used(cpus, (cpu for cpu, _ in entries.values()))
        entries[os.getpid()] = (cpu, started(os.getpid()) or "")
        file.seek(0)
        file.truncate()
        file.write(json.dumps({str(pid): list(entry) for pid, entry in sorted(entries.items())}))
    return cpu


Entries = dict[int, tuple[int, str]]  # pid -> (its CPU, its start time: /proc's ticks since boot)


def _read(text: str) -> Entries:
    try:
        raw = json.loads(text or "{}")
        entries = {int(pid): (int(cpu), str(start)) for pid, (cpu, start) in raw.items()}
    except (ValueError, TypeError, AttributeError):
        return {}  # a file cut short or written by hand: start again (only the spread suffers)
    return {pid: entry for pid, entry in entries.items() if pid > 0}  # 0 and below name groups, not a process


def _live(entries: Entries) -> Entries:
    """The entries whose process still runs: the same pid, started at the same time."""
    return {pid: (cpu, start) for pid, (cpu, start) in entries.items() if start and started(pid) == start}
