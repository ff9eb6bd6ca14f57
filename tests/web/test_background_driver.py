"""The background driver: queued drives play games with no page open, once each, and take over a dead worker's
game when its lease lapses. Real parts: django-tasks' database queue, its worker loop (the embedded threads),
the offline model, a worker process really killed (SIGKILL) mid-turn."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connections
from django.test import Client
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from simulations import faults
from simulations.driving.embedded import start_embedded_workers
from simulations.driving.tasks import enqueue_drive
from simulations.kinds import get_kind
from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.games import scenario_of_version, state_of, step_of
from simulations.kinds.negotiation.human_turns import submit_human_event
from simulations.models import Game, TranscriptEntry
from simulations.services.ledger.turns import create_game, games_with_scenario
from simulations.services.play.drive import Outcome, drive_game
from simulations.services.play.lease import acquire_lease, new_holder, release_lease
from simulations.services.policy.moves import take_move
from tests.helpers import game_at_first_ai_turn, game_in_private_talk, mercury_version, normalised, played

pytestmark = [pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]


def _wait_for(check: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the background driver did not get there in time"
        time.sleep(0.05)


def _next_kind(game_id: int) -> str:
    return step_of(Game.objects.get(pk=game_id)).kind


def _seqs(game_id: int) -> list[int]:
    return list(TranscriptEntry.objects.filter(game_id=game_id).order_by("seq").values_list("seq", flat=True))


def _queued(game_id: int) -> int:
    return DBTaskResult.objects.filter(
        status=TaskResultStatus.READY, args_kwargs__kwargs__game_id=game_id
    ).count()


def test_queued_drives_play_a_whole_game_with_no_page_open_as_the_cli_does() -> None:
    """The student's moves are made between drives, as a page would; the worker threads play every AI turn.
    The game ends exactly as `play` (the same loop, called in the foreground) plays it: nothing lost or doubled."""
    start_embedded_workers(count=2)
    role, seed = "BRA", 4
    policy = make_policy("passive", role)
    game = create_game(scenario_version=mercury_version(), seed=seed)
    while (kind := _next_kind(game.pk)) != "done":
        if kind == "ai":
            enqueue_drive(game_id=game.pk)
            _wait_for(lambda: _next_kind(game.pk) != "ai")
            continue
        current = games_with_scenario().get(pk=game.pk)
        event, payload = policy.decide(
            scenario_of_version(current.scenario), state_of(current), step_of(current)
        )
        submit_human_event(game=current, event=event, payload=payload)
    reference = played(role, seed=seed)
    queued, headless = normalised(game), normalised(reference)
    # `play` records its scripted student with the game; moves made as a page makes them record none.
    assert queued["game"].pop("human_policy") == {} and headless["game"].pop("human_policy") == {
        "kind": "passive"
    }
    assert queued == headless
    row = Game.objects.get(pk=game.pk)
    assert row.driver == "" and row.driver_until is None


def test_a_drive_is_queued_once_and_a_later_one_does_not_hide_an_earlier() -> None:
    game = create_game(scenario_version=mercury_version(), seed=1)
    assert enqueue_drive(game_id=game.pk, delay=60)  # a takeover waiting for a lease to lapse
    assert enqueue_drive(game_id=game.pk)  # a move now must not wait for it
    assert not enqueue_drive(game_id=game.pk)  # already queued to run now
    assert not enqueue_drive(game_id=game.pk, delay=30)  # the queued one runs before then anyway
    assert _queued(game.pk) == 2


def test_a_driver_finding_the_lease_held_plays_nothing_and_says_when_it_lapses() -> None:
    game = game_at_first_ai_turn(seed=5)
    before = _seqs(game.pk)
    assert acquire_lease(game_id=game.pk, holder="a-live-worker")
    drive = drive_game(game_id=game.pk)
    assert drive.outcome is Outcome.HELD and drive.steps == 0 and drive.retry_in > 0
    assert _seqs(game.pk) == before


def test_a_queued_drive_leaves_a_game_to_another_queued_drive_and_watches_other_holders() -> None:
    """A queued drive (or a page's connect) finding a live queued drive holding the game queues nothing: that
    drive's row says running, and the workers' sweep queues the game again should its worker die. Any other
    holder (the `play` command, a kind's own loop), or a queued drive's lease that lapsed, is watched: a drive is
    queued for when the lease lapses, or at once."""
    from simulations.driving.tasks import drive_game_task
    from simulations.services.play.drive_queue import queue_drive_if_ai_next

    game = game_at_first_ai_turn(seed=5)
    queued_drive = new_holder(queued_drive=True)
    assert acquire_lease(game_id=game.pk, holder=queued_drive)
    assert drive_game_task.call(game_id=game.pk) == "held"
    queue_drive_if_ai_next(Game.objects.get(pk=game.pk), even_if_driven=True)  # a page connecting
    assert _queued(game.pk) == 0

    release_lease(game_id=game.pk, holder=queued_drive)
    other = new_holder()
    assert acquire_lease(game_id=game.pk, holder=other)
    assert drive_game_task.call(game_id=game.pk) == "held"
    watch = DBTaskResult.objects.get(status=TaskResultStatus.READY, args_kwargs__kwargs__game_id=game.pk)
    lapses_at = Game.objects.get(pk=game.pk).driver_until
    assert lapses_at is not None and lapses_at < watch.run_after < lapses_at + timedelta(seconds=2)
    watch.delete()
    queue_drive_if_ai_next(Game.objects.get(pk=game.pk), even_if_driven=True)
    assert _queued(game.pk) == 1  # due at once: it too waits for the lease
    DBTaskResult.objects.filter(args_kwargs__kwargs__game_id=game.pk).delete()

    release_lease(game_id=game.pk, holder=other)
    assert acquire_lease(game_id=game.pk, holder=queued_drive)
    until = Game.objects.get(pk=game.pk).driver_until
    assert until is not None
    lapsed = until - timedelta(hours=1)
    Game.objects.filter(pk=game.pk).update(driver_until=lapsed)
    # Its lease lapsed: no longer live.
    queue_drive_if_ai_next(Game.objects.get(pk=game.pk), even_if_driven=True)
    assert _queued(game.pk) == 1


def _die_mid_turn(game_id: int) -> None:
    """The child: a worker that is killed (SIGKILL) while the model streams, holding the game's lease."""
    try:
        faults.arm("mid_stream", 3)
        drive_game(game_id=game_id, holder="worker-that-dies")
    finally:
        os._exit(0)  # reached only if the armed point was never hit


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a worker to kill it")
def test_a_worker_killed_mid_turn_is_taken_over_when_its_lease_lapses(settings: Any) -> None:
    settings.MERCURY_DRIVER_LEASE_SECONDS = 2
    settings.MERCURY_OFFLINE_TOKEN_DELAY = 0.01
    game = game_at_first_ai_turn(seed=5)
    before = _seqs(game.pk)
    connections.close_all()  # the child opens its own connection
    pid = os.fork()
    if pid == 0:
        _die_mid_turn(game.pk)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    faults.disarm()
    row = Game.objects.get(pk=game.pk)
    assert row.driver == "worker-that-dies" and row.driver_until is not None  # never released
    lapses_at = row.driver_until
    assert _seqs(game.pk) == before  # the half-streamed turn was never stored
    start_embedded_workers(count=1)
    enqueue_drive(game_id=game.pk)  # as the next page's connect does
    _wait_for(lambda: _next_kind(game.pk) != "ai", timeout=30)
    after = _seqs(game.pk)
    assert len(after) == len(before) + 1 and after == sorted(set(after))  # played once, by the new worker
    played_at = TranscriptEntry.objects.get(game=game, seq=after[-1]).created_at
    assert played_at > lapses_at  # not before the dead worker's lease lapsed
    # the worker releases the lease just after its commit: wait for it rather than race it
    _wait_for(lambda: Game.objects.filter(pk=game.pk, driver="", driver_until=None).exists(), timeout=10)


@pytest.mark.skipif(
    bool(os.environ.get("DATABASE_URL")),
    reason="the worker process opens the test database by its SQLite path",
)
async def test_scaled_the_server_only_queues_and_a_db_worker_process_drives(settings: Any) -> None:
    """MERCURY_WORKERS=external: the page's connect queues the drive but the server plays nothing; a separate
    `manage.py db_worker` process (django-tasks-db's own command) drives the game to the student's turn."""
    from channels.db import database_sync_to_async

    from tests.web.test_consumer import _connect, _setup_game

    settings.MERCURY_WORKERS = "external"
    owner, game = await database_sync_to_async(_setup_game)("owner")
    before = await database_sync_to_async(_seqs)(game.pk)
    comm = await _connect(game, owner)
    assert (await comm.connect())[0]
    await comm.receive_from(timeout=10)
    await asyncio.sleep(1.0)
    assert await database_sync_to_async(_seqs)(game.pk) == before  # no worker in the server
    assert await database_sync_to_async(_queued)(game.pk) == 1
    await comm.disconnect()
    database = connections["default"].settings_dict["NAME"]
    env = {**os.environ, "MERCURY_SQLITE_PATH": str(database), "MERCURY_WORKERS": "external",
           "MERCURY_OFFLINE_TOKEN_DELAY": "0", "PYTHONPATH": str(ROOT)}  # fmt: skip
    worker = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "manage.py"), "db_worker", "--batch", "--no-reload", "--no-startup-delay",
        cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(worker.communicate(), timeout=120)
    assert worker.returncode == 0, out.decode()[-2000:]
    after = await database_sync_to_async(_seqs)(game.pk)
    assert len(after) == len(before) + 1 and after == sorted(set(after))
    assert await database_sync_to_async(_next_kind)(game.pk) == "human"
    assert await database_sync_to_async(_queued)(game.pk) == 0


def test_a_drive_left_running_by_a_stopped_server_is_queued_again_when_the_next_server_starts() -> None:
    """The server process died mid-drive: its queue row says "running" for ever, and its lease has lapsed since.
    The next server's workers mark that row failed (with why), queue the game again and play it, no page open."""
    from django.utils import timezone

    game = game_at_first_ai_turn(seed=5)
    before = _seqs(game.pk)
    enqueue_drive(game_id=game.pk)
    row = DBTaskResult.objects.get(status=TaskResultStatus.READY, args_kwargs__kwargs__game_id=game.pk)
    host, machine, pid, _, _ = new_holder().rsplit(":", 4)
    gone = (
        f"{host}:{machine}:{pid}:1:server"  # an earlier server process on this machine, not running any more
    )
    row.claim(gone)
    assert acquire_lease(game_id=game.pk, holder=gone)
    Game.objects.filter(pk=game.pk).update(driver_until=timezone.now() - timedelta(seconds=1))
    start_embedded_workers(count=1)
    _wait_for(lambda: _next_kind(game.pk) != "ai", timeout=30)
    after = _seqs(game.pk)
    assert len(after) == len(before) + 1 and after == sorted(set(after))
    row.refresh_from_db()
    assert row.status == TaskResultStatus.FAILED
    assert row.exception_class_path == "simulations.driving.recovery.WorkerStopped"
    assert f"worker {gone} stopped during this drive" in row.traceback


def test_a_drive_queued_in_this_process_wakes_an_idle_worker_without_waiting_for_its_next_poll(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The embedded threads wait on the queue's enqueue signal: with a poll interval far longer than the test's
    patience, a queued drive is still played (it would sit in the queue for the whole interval otherwise)."""
    from simulations.driving import embedded as embedded_worker

    monkeypatch.setattr(embedded_worker, "POLL_INTERVAL", 600.0)
    game = game_at_first_ai_turn(seed=5)
    start_embedded_workers(count=1)
    time.sleep(0.5)  # the thread has looked at the empty queue and waits
    enqueue_drive(game_id=game.pk)
    _wait_for(lambda: _next_kind(game.pk) != "ai", timeout=30)


def test_a_students_move_queues_the_answer_itself_unless_a_driver_holds_the_game() -> None:
    """No page is connected: the move queues the drive that answers it, in a page thread after its answer (the
    page's render, which queued it before, may wait to share the next turn's and came about 0.1 s later for every
    move). A move that leaves the student to act again queues nothing, nor does one made while a live driver holds
    the game."""
    owner = User.objects.create_user("student", password="a-long-test-passphrase-42")
    client = Client()
    client.force_login(owner)
    game = game_in_private_talk(client, owner)  # every move on the way left the student to act
    assert _queued(game.pk) == 0
    say = {"event": "HUMAN_MESSAGE_SUBMITTED", "text": "We would back 2.1 with financing."}
    client.post(f"/games/{game.pk}/move/", say | {"version": game.version}, HTTP_HX_REQUEST="true")
    assert (
        _next_kind(game.pk) == "ai"
    )  # the partner answers: queued in a page thread, after the move's answer
    _wait_for(lambda: _queued(game.pk) == 1, timeout=10)
    DBTaskResult.objects.filter(args_kwargs__kwargs__game_id=game.pk).delete()
    played_there = game_in_private_talk(client, owner, seed=6)
    assert acquire_lease(game_id=played_there.pk, holder=new_holder())  # a live driver, as if mid-drive
    client.post(
        f"/games/{played_there.pk}/move/", say | {"version": played_there.version}, HTTP_HX_REQUEST="true"
    )
    time.sleep(1.0)  # far longer than the first move's queueing took
    assert _next_kind(played_there.pk) == "ai" and _queued(played_there.pk) == 0


def test_a_move_read_while_a_drive_held_the_game_queues_the_answer_once_that_drive_has_let_go() -> None:
    """The race a fast student met (a bench game stalled on it): a drive stops at the student's turn; the student's
    move reads the game while the drive still holds its lease; the drive lets go and looks for a newer version
    before the move commits. The move must then queue the answer itself: it reads the lease again after its
    commit, not the one it read before."""
    owner = User.objects.create_user("student", password="a-long-test-passphrase-42")
    client = Client()
    client.force_login(owner)
    game = game_in_private_talk(client, owner)
    holder = new_holder()
    assert acquire_lease(game_id=game.pk, holder=holder)
    read_before = games_with_scenario().get(pk=game.pk)  # the move's read: a live driver holds the game
    release_lease(game_id=game.pk, holder=holder)  # ... which then lets go, finding nothing new
    say = {"event": "HUMAN_MESSAGE_SUBMITTED", "version": str(game.version), "idem": "k"}
    fields = say | {"text": "We would back 2.1."}
    outcome = take_move(read_before, user_id=owner.pk, fields=fields, pages=get_kind("negotiation").pages)
    assert not outcome.error and _next_kind(game.pk) == "ai"
    _wait_for(lambda: _queued(game.pk) == 1, timeout=10)


def test_an_external_workers_sweep_queues_again_only_the_drives_of_dead_workers(settings: Any) -> None:
    """`drive_worker`'s sweep (simulations/driving/recovery.py): a running drive whose game's lease lapsed, or whose
    holder on this machine is gone, is marked failed with why and its game queued again; a drive that renews its
    lease, or that started too recently to have taken one, is left alone."""
    from django.utils import timezone

    from simulations.driving.recovery import requeue_dead_drives

    settings.MERCURY_DRIVER_LEASE_SECONDS = 5
    long_ago = timezone.now() - timedelta(seconds=60)
    host, machine, pid, _, _ = new_holder().rsplit(":", 4)
    dead_here = f"{host}:{machine}:{pid}:1:gone"  # this machine, a process that is not running any more
    names = ("lapsed", "alive", "young", "dead here")
    games = {name: game_at_first_ai_turn(seed=n) for n, name in enumerate(names, 1)}
    rows = {}
    for name, game in games.items():
        enqueue_drive(game_id=game.pk)
        row = DBTaskResult.objects.get(status=TaskResultStatus.READY, args_kwargs__kwargs__game_id=game.pk)
        row.claim(dead_here if name == "dead here" else f"worker-{name}")
        rows[name] = row
    DBTaskResult.objects.filter(pk__in=[rows["lapsed"].pk, rows["alive"].pk]).update(started_at=long_ago)
    Game.objects.filter(pk=games["lapsed"].pk).update(driver="other-host:x:1:2:3", driver_until=long_ago)
    for name in ("alive", "dead here"):  # a live holder's lease (for "dead here": another drive took over)
        assert acquire_lease(game_id=games[name].pk, holder=f"other-host:x:1:2:{name}")

    assert sorted(requeue_dead_drives()) == sorted([games["lapsed"].pk, games["dead here"].pk])
    assert requeue_dead_drives() == []  # once
    for name, row in rows.items():
        row.refresh_from_db()
        assert (row.status == TaskResultStatus.FAILED) == (name in ("lapsed", "dead here")), name
    assert rows["lapsed"].exception_class_path == "simulations.driving.recovery.WorkerStopped"
    assert "worker-lapsed stopped during this drive" in rows["lapsed"].traceback
    assert [_queued(g.pk) for g in games.values()] == [1, 0, 0, 1]


@pytest.mark.skipif(
    bool(os.environ.get("DATABASE_URL")),
    reason="the worker process opens the test database by its SQLite path",
)
def test_a_drive_worker_with_threads_drives_several_games_at_once() -> None:
    """`drive_worker --threads 3`: three games queued at their first AI turn are claimed by one process and driven
    at the same time, and each game stops at its student's turn."""
    import subprocess

    from bench.http_games import DRIVE_WORKER_READY
    from simulations.management.commands.drive_worker import READY

    games = [game_at_first_ai_turn(seed=n) for n in (1, 2, 3)]
    for game in games:
        enqueue_drive(game_id=game.pk)
    database = connections["default"].settings_dict["NAME"]
    connections.close_all()
    env = {**os.environ, "MERCURY_SQLITE_PATH": str(database), "MERCURY_WORKERS": "external",
           "MERCURY_OFFLINE_TOKEN_DELAY": "0.01", "PYTHONPATH": str(ROOT)}  # fmt: skip
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "drive_worker", "--threads", "3", "--batch", "--no-reload",
         "--no-startup-delay"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith(f"{READY} 3 games at once")  # what bench/http_games.py waits for
    assert READY == DRIVE_WORKER_READY
    assert [_next_kind(g.pk) for g in games] == ["human"] * 3
    rows = list(DBTaskResult.objects.filter(status=TaskResultStatus.SUCCESSFUL).order_by("started_at"))
    assert len(rows) == 3 and len({r.worker_ids[-1] for r in rows}) == 1  # one process claimed them
    started = [r.started_at for r in rows if r.started_at is not None]
    finished = [r.finished_at for r in rows if r.finished_at is not None]
    assert len(started) == len(finished) == 3 and max(started) < min(finished)  # all three at once


def test_after_a_claim_the_worker_looks_again_at_once_only_when_another_drive_was_ready() -> None:
    """The claim reads two ready rows: with a second one it claims again at once (no game waits a poll), with
    none it waits for the next enqueue or poll instead of an empty look (a statement and an exclusive
    transaction for nothing, each drive)."""
    from django_tasks import DEFAULT_TASK_BACKEND_ALIAS, DEFAULT_TASK_QUEUE_NAME

    from simulations.driving import tasks
    from simulations.driving.pool import PooledWorker

    tasks.stopping.clear()  # an earlier test stopped the embedded workers: drives would pause at once
    games = [game_at_first_ai_turn(seed=seed) for seed in (5, 6)]
    for game in games:
        enqueue_drive(game_id=game.pk)
    calls: list[str] = []

    class Recorded(PooledWorker):
        def _claim(self, *, most: int = 1, look_first: bool = True) -> list[DBTaskResult]:
            claimed = super()._claim(most=1, look_first=look_first)  # one a claim, to see the look again
            calls.append("claimed" if claimed else "nothing")
            return claimed

        def idle(self) -> None:
            calls.append("idle")
            if calls.count("idle") == 2:
                self.running = False
            time.sleep(0.05)

    worker = Recorded(
        slots=2, queue_names=[DEFAULT_TASK_QUEUE_NAME], interval=0.05, batch=False,
        backend_name=DEFAULT_TASK_BACKEND_ALIAS, startup_delay=False, max_tasks=None,
        worker_id=new_holder(), excluded_queue_names=[],
    )  # fmt: skip
    worker.run()  # returns once both drives are done
    connections.close_all()
    assert calls == ["claimed", "claimed", "idle", "nothing", "idle"]
    assert all(_next_kind(game.pk) != "ai" for game in games)  # both played


def test_a_pooled_worker_starts_every_drive_thread_before_it_says_it_is_ready() -> None:
    """Its threads start before the first claim (a thread started at a claim waits its turn among a hundred busy
    ones): when it says it is ready, all are there."""
    from django_tasks import DEFAULT_TASK_BACKEND_ALIAS, DEFAULT_TASK_QUEUE_NAME

    from simulations.driving.pool import PooledWorker

    seen: list[int] = []

    def ready() -> None:
        seen.append(sum(t.name.startswith("mercury-drive") for t in threading.enumerate()))
        worker.running = False

    worker = PooledWorker(
        slots=7, queue_names=[DEFAULT_TASK_QUEUE_NAME], interval=0.05, batch=False, on_ready=ready,
        backend_name=DEFAULT_TASK_BACKEND_ALIAS, startup_delay=False, max_tasks=None,
        worker_id=new_holder(), excluded_queue_names=[],
    )  # fmt: skip
    before = sum(t.name.startswith("mercury-drive") for t in threading.enumerate())
    worker.run()
    connections.close_all()
    assert seen == [before + 7]
