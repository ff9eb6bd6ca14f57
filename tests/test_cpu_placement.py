"""Long-running processes pin themselves to one CPU each, spread over the machine (mercury/cpu_placement.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mercury.cpu_placement import least_used
from mercury.processes import started

ROOT = Path(__file__).resolve().parent.parent

# A process as a server starts: a thread already running, then the pin; it prints its CPU and the CPUs its
# threads may use (the main thread's, the earlier thread's and a later one's), then waits to be told to end.
CHILD = """
import json, os, sys, threading
from mercury.cpu_placement import pin_to_one_cpu
hold = threading.Event()
earlier = threading.Thread(target=hold.wait); earlier.start()
cpu = pin_to_one_cpu()
later = threading.Thread(target=hold.wait); later.start()
def allowed(tid):
    for line in open(f"/proc/self/task/{tid}/status"):
        if line.startswith("Cpus_allowed_list"):
            return line.split(":", 1)[1].strip()
print(json.dumps({"cpu": cpu, "threads": [allowed(t.native_id) for t in (threading.main_thread(), earlier, later)]}), flush=True)
sys.stdin.readline()
hold.set()
"""

CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
needs_two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="pinning needs at least two allowed CPUs")


def start(placement: Path, setting: str = "auto") -> tuple[subprocess.Popen[str], dict]:
    env = os.environ | {"MERCURY_PIN_CPU": setting, "MERCURY_CPU_PLACEMENT_FILE": str(placement)}
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, json.loads(proc.stdout.readline())


def end(proc: subprocess.Popen[str]) -> None:
    proc.communicate("\n", timeout=10)


def placed(placement: Path) -> dict[int, int]:
    """pid -> CPU as the file holds them; each entry's start time is its process's."""
    entries = json.loads(placement.read_text())
    assert all(start == started(int(pid)) for pid, (_, start) in entries.items())
    return {int(pid): cpu for pid, (cpu, _) in entries.items()}


def test_the_least_used_cpu_is_taken_and_ties_go_to_the_lowest() -> None:
    assert least_used([0, 1, 2], [0, 0, 1]) == 2
    assert least_used([0, 1, 2], [0, 1, 2]) == 0
    assert least_used([2, 3], [0, 2]) == 3  # a process on a CPU no longer allowed counts for nothing
    assert least_used([5], []) == 5


@needs_two_cpus
def test_processes_spread_over_the_cpus_and_pin_every_thread(tmp_path: Path) -> None:
    placement = tmp_path / "cpus.json"
    first, a = start(placement)
    second, b = start(placement)
    try:
        assert a["cpu"] == CPUS[0] and b["cpu"] == CPUS[1]
        for seen in (a, b):
            assert seen["threads"] == [str(seen["cpu"])] * 3  # the main thread, one started before, one after
        assert placed(placement) == {first.pid: CPUS[0], second.pid: CPUS[1]}
    finally:
        end(first)
    # The first process ended: the next one to start takes its CPU, and the file forgets it.
    third, c = start(placement)
    try:
        assert c["cpu"] == CPUS[0]
        assert placed(placement) == {second.pid: CPUS[1], third.pid: CPUS[0]}
    finally:
        end(second)
        end(third)


@needs_two_cpus
def test_off_pins_nothing_and_a_broken_file_is_read_as_empty(tmp_path: Path) -> None:
    placement = tmp_path / "cpus.json"
    proc, seen = start(placement, "off")
    end(proc)
    assert seen["cpu"] is None and not placement.exists()
    assert len(set(seen["threads"])) == 1 and seen["threads"][0] != str(CPUS[0])  # the whole allowed set

    placement.write_text('{"12": ')  # cut short
    proc, seen = start(placement)
    end(proc)
    assert seen["cpu"] == CPUS[0]

    placement.write_text(json.dumps({"0": [CPUS[0], "1"], "-1": [CPUS[0], "1"]}))  # a group, "every process"
    proc, seen = start(placement)
    end(proc)
    assert seen["cpu"] == CPUS[0]  # neither counted as a process on that CPU


@needs_two_cpus
def test_a_pid_counts_only_while_it_names_the_process_that_took_the_cpu(tmp_path: Path) -> None:
    """A pid the kernel gave to another process since (its start time differs) holds no CPU."""
    placement = tmp_path / "cpus.json"
    me, mine = os.getpid(), started(os.getpid())
    placement.write_text(json.dumps({str(me): [CPUS[0], str(int(mine or 0) + 1)]}))  # this pid, another start
    proc, seen = start(placement)
    end(proc)
    assert seen["cpu"] == CPUS[0]
    assert str(me) not in json.loads(placement.read_text())  # dropped

    placement.write_text(json.dumps({str(me): [CPUS[0], mine]}))  # this very process
    proc, seen = start(placement)
    end(proc)
    assert seen["cpu"] == CPUS[1]


@needs_two_cpus
def test_a_placement_file_that_names_another_file_is_refused_and_that_file_left_alone(tmp_path: Path) -> None:
    """The file's name is predictable in a shared directory: another user could point it at a file of ours."""
    target = tmp_path / "notes.txt"
    target.write_text("keep me\n")
    placement = tmp_path / "cpus.json"
    placement.symlink_to(target)
    proc, seen = start(placement)
    end(proc)
    assert seen["cpu"] is None and target.read_text() == "keep me\n"

    placement.unlink()
    os.link(target, placement)  # a second name for the same file
    proc, seen = start(placement)
    end(proc)
    assert seen["cpu"] is None and target.read_text() == "keep me\n"
    assert len(set(seen["threads"])) == 1 and seen["threads"][0] != str(CPUS[0])  # left unpinned
