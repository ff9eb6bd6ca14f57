"""Model calls run in kept threads (simulations/ai/call_threads.py): a finished call's thread takes the next call,
a call still running is never handed another, and a forked child starts threads of its own."""

from __future__ import annotations

import os
import threading
import time

import pytest

from simulations.ai import call_threads


def _ran_in() -> tuple[threading.Event, list[threading.Thread]]:
    return threading.Event(), []


def _call(done: threading.Event, seen: list[threading.Thread], hold: threading.Event | None = None) -> None:
    seen.append(threading.current_thread())  # the thread itself: an ended thread's ident may be reused
    if hold is not None:
        hold.wait(10)
    done.set()


def _until_idle(thread: threading.Thread) -> None:
    """Until this very thread waits for a call: it gives itself back just after its call returns, and threads of
    earlier tests' model calls may be idle already."""
    deadline = time.monotonic() + 5
    while thread not in call_threads.idle() and time.monotonic() < deadline:
        time.sleep(0.001)
    assert thread in call_threads.idle()


def test_a_finished_calls_thread_takes_the_next_call_and_a_running_one_does_not() -> None:
    (first, in_first), (second, in_second), (third, in_third) = _ran_in(), _ran_in(), _ran_in()
    call_threads.run(_call, first, in_first)
    assert first.wait(5)
    _until_idle(in_first[0])
    held = threading.Event()
    call_threads.run(_call, second, in_second, held)  # takes the idle thread, and keeps it while held
    call_threads.run(_call, third, in_third)
    assert third.wait(5)
    held.set()
    assert second.wait(5)
    assert in_second == in_first  # the finished call's thread
    assert in_third != in_second  # not the one still running its call
    assert [threading.current_thread()] not in (in_first, in_second, in_third)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks")
def test_a_forked_child_runs_its_calls_in_threads_of_its_own() -> None:
    done, seen = _ran_in()
    call_threads.run(_call, done, seen)
    assert done.wait(5)
    _until_idle(seen[0])  # the parent has an idle thread, which does not exist in the child
    pid = os.fork()
    if pid == 0:  # the child: a call must run here, not be queued to a thread it does not have
        ok = False
        try:
            ran, _ = _ran_in()
            call_threads.run(_call, ran, [])
            ok = ran.wait(5)
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
