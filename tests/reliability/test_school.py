"""Issue #16's done-when: the scaled set-up survives a worker and a server being killed mid-game.

Two server processes (gunicorn with one uvicorn process each, as `make serve-scaled` runs them, on two ports) and
two `manage.py drive_worker` processes, on PostgreSQL and Redis (`MERCURY_WORKERS=external`). A student (a real
HTTP + websocket client) logs in on server A and plays a whole game there; the same student's second tab watches
it from server B. Mid-game the worker holding the game's lease is killed (SIGKILL) in the middle of an AI turn:
the other worker takes the game over once the lease lapses and its sweep records the dead worker's drive as
failed (the sweep alone, with no other drive queued, is tested in tests/web/test_background_driver.py). Later server A is killed: the student's page loads
again from B (what a load balancer does) and plays on. The watcher on B sees every turn, each once, though
every turn is driven by a worker and the worker is another process. At the end the game's export equals that of
the same game (seed, student moves) played without interruption, in this process.

Runs where DATABASE_URL names PostgreSQL and REDIS_URL is set (CI's second leg); skipped on the embedded default.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import aiohttp
import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.contrib.auth.models import User
from django.db import connections
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from bench.http_games import (
    HIDDEN,
    HX_CSRF,
    STREAMING,
    _choose,
    _csrf,
    _entries,
    _newer,
    _panels,
    _radios,
)
from simulations.kinds.negotiation.events import Event as EventName
from simulations.kinds.negotiation.headless import play_game
from simulations.models import Event, Game, TranscriptEntry
from simulations.services.ledger.turns import create_game
from tests.helpers import mercury_version, normalised

ROOT = Path(__file__).resolve().parents[2]
SCALED = os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")) and bool(
    os.environ.get("REDIS_URL")
)
pytestmark = [
    pytest.mark.skipif(not SCALED, reason="needs PostgreSQL (DATABASE_URL) and Redis (REDIS_URL)"),
    pytest.mark.django_db(transaction=True),
]
PASSWORD = secrets.token_urlsafe(12)
LEASE_SECONDS = 3
ROLE = "EU"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _environment(tmp: Path) -> dict[str, str]:
    """The processes' settings: this test's database, Redis, external workers, a short lease, production-like."""
    database = connections["default"].settings_dict
    url = urlparse(os.environ["DATABASE_URL"])._replace(path="/" + database["NAME"]).geturl()
    return os.environ | {
        "DATABASE_URL": url,
        "MERCURY_WORKERS": "external",
        "MERCURY_DEBUG": "false",
        "MERCURY_SECRET_KEY": "school-test-" + secrets.token_urlsafe(48),
        "MERCURY_DRIVER_LEASE_SECONDS": str(LEASE_SECONDS),
        "MERCURY_OFFLINE_TOKEN_DELAY": "0.004",  # streamed words: a worker can be killed mid-turn
        "MERCURY_RATE_MOVES_PER_MINUTE": "0",
        "MERCURY_RATE_GAMES_PER_HOUR": "0",
        "PYTHONPATH": str(ROOT),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }


class Processes:
    """The scaled set-up's processes, each in its own process group (a server is gunicorn and its worker)."""

    def __init__(self, env: dict[str, str], tmp: Path) -> None:
        self.env, self.tmp = env, tmp
        self.servers: dict[str, tuple[int, subprocess.Popen[bytes]]] = {}
        self.workers: list[subprocess.Popen[bytes]] = []

    def _start(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        with (self.tmp / f"{name}.log").open("wb") as log:  # the child keeps its own copy of the file
            return subprocess.Popen(
                argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    def server(self, name: str) -> None:
        port = _free_port()
        argv = [
            "gunicorn", "mercury.asgi:application", "-k", "mercury.asgi_worker.MercuryUvicornWorker",
            "--workers", "1", "--bind", f"127.0.0.1:{port}", "--no-control-socket", "--graceful-timeout", "3",
        ]  # fmt: skip
        self.servers[name] = (port, self._start(f"server-{name}", argv))

    def worker(self, n: int) -> None:
        argv = [
            sys.executable,
            "manage.py",
            "drive_worker",
            "--no-reload",
            "--interval",
            "0.1",
            "--threads",
            "2",
        ]
        self.workers.append(self._start(f"worker-{n}", argv))

    def base(self, name: str) -> str:
        return f"http://127.0.0.1:{self.servers[name][0]}"

    def wait_until_serving(self) -> None:
        deadline = time.monotonic() + 60
        for name, (port, proc) in self.servers.items():
            while True:
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                assert proc.poll() is None, self.log(f"server-{name}")
                assert time.monotonic() < deadline, f"server {name} did not start"
                time.sleep(0.1)

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)

    def log(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        for proc in [*(p for _, p in self.servers.values()), *self.workers]:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in [*(p for _, p in self.servers.values()), *self.workers]:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)


@dataclass
class Tab:
    """What one open page saw over its websocket(s): transcript entries, and any entry added twice."""

    seen: set[int] = field(default_factory=set)
    duplicates: list[int] = field(default_factory=list)
    streamed: int = 0
    reviewed: bool = False

    def take(self, text: str) -> None:
        new, full = _entries(text)
        if not full:  # an addition must bring only entries this page has not shown
            self.duplicates += [s for s in new if s in self.seen]
        self.seen.update(new)
        self.streamed += STREAMING in text
        panels = _panels(text)
        self.reviewed = self.reviewed or bool(panels and panels[0] == "review")


async def _watch(session: aiohttp.ClientSession, base: str, game: int, tab: Tab) -> None:
    """A second tab of the student's, on another server, until the review shows."""
    page = await (await session.get(f"{base}/games/{game}/")).text()
    tab.take(page)
    async with session.ws_connect(f"{base}/ws/games/{game}/", headers={"Origin": base}, max_msg_size=0) as ws:
        while not tab.reviewed:
            message = await ws.receive(timeout=300)
            assert message.type == aiohttp.WSMsgType.TEXT, f"the watcher's socket closed: {message}"
            tab.take(str(message.data))


Hook = tuple[Callable[[Tab], bool], Callable[[], Awaitable[bool]]]


async def _play(
    session: aiohttp.ClientSession, base: str, game: int, tab: Tab, *, hooks: Sequence[Hook] = ()
) -> bool:
    """Play from a freshly loaded page on `base` until the review (True). Each hook's action runs once, in order,
    as soon as its condition holds of what the page has shown; an action that returns True leaves the page there
    (False). Moves as bench/http_games.py's student makes them: the first choices, a short message, yes votes."""
    pending = list(hooks)
    page = await (await session.get(f"{base}/games/{game}/")).text()
    tab.take(page)
    token = HX_CSRF.search(page).group(1)  # type: ignore[union-attr]
    latest, answered = _panels(page), -1
    async with session.ws_connect(f"{base}/ws/games/{game}/", headers={"Origin": base}, max_msg_size=0) as ws:
        while True:
            if latest and latest[0] == "review":
                return True
            if pending and pending[0][0](tab):
                if await pending.pop(0)[1]():
                    return False
                continue
            if latest and latest[2] > answered and latest[0] not in ("waiting", "roles", ""):
                answered = latest[2]
                headers = {"HX-Request": "true", "HX-Target": "panels", "X-CSRFToken": token}
                headers["Referer"] = f"{base}/games/{game}/"
                async with session.post(
                    f"{base}/games/{game}/move/", data=_choose(latest[0], latest[3]), headers=headers
                ) as r:
                    html = await r.text()
                    assert r.status in (200, 409), f"a move answered {r.status}: {html[:300]}"
                latest = _newer(latest, _panels(html))
                tab.take(html)
                continue
            message = await ws.receive(timeout=120)
            assert message.type == aiohttp.WSMsgType.TEXT, f"the player's socket closed: {message}"
            tab.take(str(message.data))
            latest = _newer(latest, _panels(str(message.data)))


def _driving_worker(procs: Processes, game_id: int) -> subprocess.Popen[bytes] | None:
    driver = Game.objects.filter(pk=game_id).values_list("driver", flat=True).get()
    pid = driver.rsplit(":", 4)[2] if driver.count(":") >= 4 else ""
    return next((p for p in procs.workers if str(p.pid) == pid), None)


class Recorded:
    """The student of the interrupted game, move for move: its own events, in order, with their payloads. (An
    opening is presented by whoever's turn it is, the student included: the ledger names no seat for it.)"""

    name = "recorded"

    def __init__(self, game_id: int) -> None:
        rows = Event.objects.filter(game_id=game_id, actor__startswith="human").order_by("seq")
        self.moves = [(EventName(e.name), dict(e.payload)) for e in rows]

    def decide(self, scenario: Any, state: Any, step: Any) -> tuple[EventName, dict[str, Any]]:
        if step.purpose == "opening":
            return EventName.OPENING_PRESENTED, {}
        return self.moves.pop(0)


def _comparable(game: Game) -> dict[str, Any]:
    data = normalised(game)
    data["game"].pop("human_policy", None)  # the replay's student is a recording of the same moves
    return data


def _student() -> None:
    """The student, whose password the servers check in processes of their own, with Django's default hashers
    (not the fast one the tests' own process uses: tests/conftest.py)."""
    hasher = PBKDF2PasswordHasher()
    User.objects.create(username="student", password=hasher.encode(PASSWORD, hasher.salt()))


async def test_a_game_survives_a_killed_worker_and_a_killed_server(tmp_path: Path) -> None:
    version = await database_sync_to_async(mercury_version)()
    await database_sync_to_async(_student)()
    procs = Processes(_environment(tmp_path), tmp_path)
    procs.server("A")
    procs.server("B")
    procs.worker(1)
    procs.worker(2)
    try:
        await asyncio.to_thread(procs.wait_until_serving)
        a, b = procs.base("A"), procs.base("B")
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
            login = await (await session.get(f"{a}/accounts/login/")).text()
            form = {"csrfmiddlewaretoken": _csrf(login), "username": "student", "password": PASSWORD}
            async with session.post(f"{a}/accounts/login/", data=form, headers={"Referer": a}) as r:
                assert r.status == 200 and urlparse(str(r.url)).path == "/", await r.text()
            lobby = await (await session.get(f"{a}/")).text()
            async with session.post(
                f"{a}/games/new/",
                data={"csrfmiddlewaretoken": _csrf(lobby), "scenario": version.slug},
                headers={"Referer": a},
            ) as r:
                game_id = int(re.search(r"/games/(\d+)/", str(r.url)).group(1))  # type: ignore[union-attr]
            setup = await (await session.get(f"{a}/games/{game_id}/?role={ROLE}")).text()
            async with session.post(
                f"{a}/games/{game_id}/move/",
                data=dict(HIDDEN.findall(setup)) | _radios(setup),
                headers={"Referer": a},
            ) as r:
                assert r.status == 200

            player, watcher = Tab(), Tab()
            watching = asyncio.create_task(_watch(session, b, game_id, watcher))

            # 1. Once an AI turn streams, a dozen entries in, the worker driving it is killed; the pages stay open
            #    and nobody reconnects. The other worker takes the game over once the lease lapses (a drive the
            #    watcher's connect queued waits for it), and its sweep marks the dead worker's drive failed.
            # 2. Once six more entries came from that worker, server A is killed under the page.
            at_kill: list[int] = []

            async def kill_the_driving_worker() -> bool:
                victim = await database_sync_to_async(_driving_worker)(procs, game_id)
                assert victim is not None, "no worker holds the game's lease while its turn streams"
                at_kill.append(await database_sync_to_async(_stored)(game_id))
                procs.kill(victim)
                return False

            async def kill_server_a() -> bool:
                procs.kill(procs.servers["A"][1])
                return True

            hooks: list[Hook] = [
                (lambda tab: len(tab.seen) >= 12 and tab.streamed > 0, kill_the_driving_worker),
                (lambda tab: bool(at_kill) and len(tab.seen) >= at_kill[0] + 6, kill_server_a),
            ]
            assert not await _play(session, a, game_id, player, hooks=hooks)

            # 3. The page loads again from B (as a load balancer sends it) and plays to the review.
            assert await _play(session, b, game_id, player)
            await asyncio.wait_for(watching, timeout=120)
    finally:
        await asyncio.to_thread(procs.stop)

    game = await database_sync_to_async(Game.objects.get)(pk=game_id)
    assert game.status == Game.Status.FINISHED
    stored = await database_sync_to_async(_seqs)(game_id)
    assert stored == list(range(1, len(stored) + 1))  # every turn stored once, in order
    assert not player.duplicates and not watcher.duplicates
    visible = await database_sync_to_async(_visible_to_student)(game_id)
    assert watcher.seen == visible and player.seen == visible  # all the student may see, on both servers
    assert watcher.streamed > 0  # turns streamed by worker processes reached the page on B
    recovered = await database_sync_to_async(_drives_failed_by_a_dead_worker)(game_id)
    assert recovered == 1, "the killed worker's drive was not found and queued again by a live worker"

    def replay() -> tuple[dict[str, Any], dict[str, Any]]:
        reference = create_game(scenario_version=game.scenario, seed=game.seed, model=None)
        reference = play_game(game_id=reference.pk, policy=Recorded(game_id), stream=True)
        return _comparable(game), _comparable(reference)

    interrupted, uninterrupted = await database_sync_to_async(replay)()
    assert interrupted == uninterrupted


def _stored(game_id: int) -> int:
    return TranscriptEntry.objects.filter(game_id=game_id).count()


def _drives_failed_by_a_dead_worker(game_id: int) -> int:
    return DBTaskResult.objects.filter(
        args_kwargs__kwargs__game_id=game_id,
        status=TaskResultStatus.FAILED,
        exception_class_path="simulations.driving.recovery.WorkerStopped",
    ).count()


def _visible_to_student(game_id: int) -> set[int]:
    """Public entries and the student's own talks (other seats' private talks never reach the page)."""
    rows = TranscriptEntry.objects.filter(game_id=game_id).values_list("seq", "audience")
    return {seq for seq, audience in rows if not audience or ROLE in audience}


def _seqs(game_id: int) -> list[int]:
    return list(TranscriptEntry.objects.filter(game_id=game_id).order_by("seq").values_list("seq", flat=True))
