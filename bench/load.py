"""Load benchmark (issue #16): K students at once, each a real HTTP + websocket client playing a game against the
offline model streaming about 30 words a second, on one machine.

    .venv/bin/python bench/load.py --setup embedded|scaled [--levels 10,50,100,200] [--window 60] [--ramp 20]
                                   [--token-rate 30] [--worker-threads 150] [--database-url URL]
                                   [--redis-url URL] [--think T] [--json FILE] [--note TEXT]
                                   [--web N] [--workers M] [--profile-web] [--profile-workers]
                                   [--moves socket|post]

Set-ups:
- **embedded**: the embedded defaults in one process (`daphne mercury.asgi:application`: SQLite, the in-memory
  channel layer, the server's own worker: MERCURY_EMBEDDED_WORKERS games at once, default 64).
- **scaled**: `make serve-scaled`'s processes: gunicorn with 2 uvicorn processes (--web) on one port and 2
  `manage.py drive_worker` processes (--workers) of --worker-threads threads each, on PostgreSQL (--database-url, a database of
  the benchmark's own: dropped and created again) and Redis (--redis-url, flushed).

Per level K, from scratch (a fresh database and fresh processes): K users, each with a session made directly in
the database (a log-in is not what is measured); then K clients start over --ramp seconds. A client opens the
lobby, starts a game, takes a seat (the nine seats in turn), loads the game page, opens its websocket and plays as
bench/http_games.py's student does (first choices, a short message in talks, yes votes; each move sent over the
game's websocket as the page's script sends it, or with --moves post as an HTMX post), answering at once or, with
--think T, after reading and typing for between T/2 and 3T/2 seconds (seeded per student; frames keep arriving
meanwhile, and that wait is the student's, not a stall). Ten
seconds after the last client started, a window of --window seconds is measured:

- chunk to frame: for every streamed frame a client receives, the time from the model's words to the frame's
  arrival, from the newest words in the frame (transport: worker, channel layer, server, socket) and from the
  oldest (adds the relay's coalescing: at most 5 frames a second on average, by design); the server stamps each streamed
  frame with both times (MERCURY_STREAM_TIMESTAMPS; all processes share this machine's clock);
- a frame's way, hop by hop (p50/p99): the server stamps it again as the worker hands it to the channel layer,
  as the page's consumer gets it and as it is written to the socket, so the delay splits into worker, layer,
  consumer and socket (the client's read); with MERCURY_CHANNEL_LAYER=bench.layers.StampedRedisChannelLayer
  the layer hop splits further into Redis (up to the serving process taking the message off Redis) and the
  consumer's own queue, and with bench.layers.StampedBatchedRedisChannelLayer (the default layer, stamped) the
  sender's own send comes apart from Redis too; the client's event loop is watched too (a late client is not a
  slow server), and the clients collect no garbage cycles while they play (a full collection paused them for up
  to a quarter of a second, and every frame read meanwhile looked late);
- HTTP: every request's time (pages; moves too with --moves post), p50/p99; a move over the socket: from sending
  it to the notice that answers it, p50/p99; errors (a status other than 200/409, a socket closed, an exception)
  by kind;
- games sustained: games with no error whose longest wait for anything new (a frame or a move's answer) stayed
  under STALL_LIMIT seconds (a student's own time over a move is not a wait); games streamed: games that got a
  streamed frame in the window, and frames a second in all (what the streaming load was);
- lost and duplicated frames: after the window, every entry the student may see up to the newest one a client was
  shown must have reached it (lost otherwise), each once (duplicated otherwise);
- CPU and memory: CPU seconds of every process of the set-up (and PostgreSQL's backends) in the window, per game
  and second (as a share of one core), and per committed turn by role (web, worker or the embedded server;
  PostgreSQL's backends and the machine's Redis, upper bounds on a shared machine; this process's clients);
  resident memory of the set-up's processes at the window's end, per game;
- commits per second (turns committed: the games' versions; on PostgreSQL also its transaction count) and the
  database's growth per game and minute.

MERCURY_CHANNEL_LAYER (the scaled set-up's channel layer class), MERCURY_DB_MAX_CONNECTIONS,
MERCURY_WORKER_DB_MAX_CONNECTIONS, MERCURY_EMBEDDED_WORKERS, MERCURY_PIN_CPU and
MERCURY_SWITCH_INTERVAL_MS, when set, are passed to the set-up's processes (a control run sets one of them).
Raw results go to --json (one line per run); docs/benchmarks.md keeps the method and current figures.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import random
import re
import secrets
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlparse

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.http_games import (  # noqa: E402
    CSRF,
    HIDDEN,
    HX_CSRF,
    NOT_A_MOVE,
    Panels,
    PgProbe,
    SetUp,
    _choose,
    _entries,
    _newer,
    _panels,
    _radios,
    fresh_postgres,
    percentile,
    redis_cpu,
    revision,
    stop_on_sigterm,
)

ROOT = Path(__file__).resolve().parent.parent
SEATS = ("BRA", "CAN", "CHN", "EU", "TZA", "USA", "AMAP", "MFF", "WCPA")
STALL_LIMIT = 5.0  # seconds without anything new before a game counts as not sustained
SETTLE = 10.0  # seconds after the last client started before the window opens (default of --settle)
NOTICE = re.compile(
    r'<div id="notice"[^>]*data-answers="([^"]*)"'
)  # the answer to a move sent over the socket
CHUNK_AT = re.compile(r'data-chunk-at="([\d. ]+)"')
# A streamed frame's way, stamped as it goes: words from the model (newest) → the channel layer took the
# message (worker) → the page's consumer got it (channel layer, server loop) → written to the socket (the
# consumer: a waiting render, the session check, its send lock) → the client read it (socket, client loop).
HOPS = ("worker", "layer", "consumer", "socket")
# With bench/layers.py's layer, the process that serves the page stamps the message as it takes it off Redis:
# the layer hop splits in two (Redis and the receive loop; then waiting in the consumer's own queue).
HOPS_SPLIT = ("worker", "redis", "queue", "consumer", "socket")
# With bench/layers.py's batched layer, also as the sender writes it for Redis: the sender's own send, then Redis.
HOPS_SEND = ("worker", "send", "redis", "queue", "consumer", "socket")
DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/bench_load"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/7"


# --- the processes under test -----------------------------------------------------------------------------------


# --- the database (this process) --------------------------------------------------------------------------------


PASSED_ON = (
    "MERCURY_BENCH_LIBRARY_WAY",
    "MERCURY_CHANNEL_LAYER",
    "MERCURY_DB_MAX_CONNECTIONS",
    "MERCURY_EMBEDDED_WORKERS",
    "MERCURY_WORKER_DB_MAX_CONNECTIONS",
    "MERCURY_PIN_CPU",
    "MERCURY_SWITCH_INTERVAL_MS",
)


def configure(args: argparse.Namespace, tmp: Path) -> dict[str, str]:
    env = {
        # MERCURY_BENCH_LIBRARY_WAY: the library's way in place of the modules it names (bench/library_way.py).
        "DJANGO_SETTINGS_MODULE": (
            "bench.library_way" if os.environ.get("MERCURY_BENCH_LIBRARY_WAY") else "mercury.settings"
        ),
        "MERCURY_OFFLINE_TOKEN_DELAY": f"{1 / args.token_rate:.4f}",
        "MERCURY_DEBUG": "0",
        "MERCURY_SECRET_KEY": "bench-" + secrets.token_hex(32),
        "MERCURY_RATE_MOVES_PER_MINUTE": "0",
        "MERCURY_RATE_GAMES_PER_HOUR": "0",
        "MERCURY_LOG_LEVEL": "WARNING",
        "MERCURY_STREAM_TIMESTAMPS": "1",
        # The layer to measure, the embedded server's drives at once, and the processes' own settings to compare.
        **{k: v for k, v in os.environ.items() if k in PASSED_ON},
        "PYTHONPATH": str(ROOT),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    for name in ("DATABASE_URL", "REDIS_URL", "MERCURY_SQLITE_PATH", "MERCURY_WORKERS"):
        os.environ.pop(name, None)
    if args.setup == "scaled":
        env |= {"DATABASE_URL": args.database_url, "REDIS_URL": args.redis_url, "MERCURY_WORKERS": "external"}
    else:
        env["MERCURY_SQLITE_PATH"] = str(tmp / "load.sqlite3")
    os.environ.update(env)
    return env


def fresh_database(args: argparse.Namespace, tmp: Path, clients: int) -> list[str]:
    """A new database with the scenario and `clients` users; returns their session keys."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore
    from django.core.management import call_command
    from django.db import connections

    from mercury.db.pool import close_idle

    connections.close_all()
    close_idle()  # really closed: the pool would hand back a connection to the database dropped below
    if args.setup == "scaled":
        fresh_postgres(args.database_url)
        subprocess.run(["redis-cli", "-u", args.redis_url, "flushdb"], check=True, capture_output=True)
    else:
        for path in tmp.glob("load.sqlite3*"):
            path.unlink()
    call_command("migrate", verbosity=0)
    from simulations.services.content.scenarios import load_scenario

    load_scenario(folder=ROOT / "scenarios" / "mercury")
    keys = []
    for n in range(clients):
        user = User.objects.create_user(f"student{n}", password=None)
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        keys.append(str(session.session_key))
    connections.close_all()
    return keys


def database_figures(args: argparse.Namespace, tmp: Path) -> dict[str, float]:
    from django.db import connection, connections

    from simulations.models import Game

    versions = sum(Game.objects.values_list("version", flat=True))
    if args.setup == "scaled":
        with connection.cursor() as cursor:
            cursor.execute("select pg_database_size(current_database())")
            size = float(cursor.fetchone()[0])
    else:
        size = float(sum(p.stat().st_size for p in tmp.glob("load.sqlite3*")))
    connections.close_all()
    return {"versions": float(versions), "bytes": size}


def visible_entries(game_id: int, seat: str) -> list[int]:
    from simulations.models import TranscriptEntry

    rows = TranscriptEntry.objects.filter(game_id=game_id).values_list("seq", "audience")
    return sorted(seq for seq, audience in rows if not audience or seat in audience)


# --- one student ------------------------------------------------------------------------------------------------


@dataclass
class Student:
    base: str
    session_key: str
    seat: str
    game: int = 0
    seen: set[int] = field(default_factory=set)
    duplicates: int = 0
    errors: list[tuple[float, str]] = field(default_factory=list)  # (at, what)
    http: list[tuple[float, float]] = field(default_factory=list)  # (at, seconds)
    moves: list[tuple[float, float]] = field(
        default_factory=list
    )  # over the socket: (at, seconds to its answer)
    sent: tuple[str, float] | None = None  # a move sent over the socket, not answered yet: (its key, when)
    lags: list[tuple[float, float, float]] = field(default_factory=list)  # (at, newest lag, oldest lag)
    hops: list[tuple[float, tuple[float, ...]]] = field(default_factory=list)  # (at, seconds in each of HOPS)
    gaps: list[tuple[float, float]] = field(default_factory=list)  # (at, seconds without anything new)
    # (at, the newest transcript entry seen then): where in the game a stall began (`stalls`)
    newest: list[tuple[float, int]] = field(default_factory=list)
    last_news: float = 0.0
    think: float = 0.0  # mean seconds the student takes over each move (--think; 0: answers at once)
    rng: random.Random = field(default_factory=random.Random)
    move_at: float = 0.0  # when the student makes the move they are over (--think); 0: not over one
    doing: str = "starting"  # what the client was doing, named in an error (paths without their numbers)
    # "socket": moves go over the game's open websocket, as the page's script sends them; "post": HTMX posts.
    move_by: ClassVar[str] = "socket"

    @property
    def thinking(self) -> bool:
        """Over a move: waiting on oneself, not on the server."""
        return self.move_at > 0

    def _news(self) -> None:
        now = time.time()
        if self.last_news and not self.thinking:  # a student over a move waits on nobody (--think)
            self.gaps.append((now, now - self.last_news))
        self.last_news = now
        self.newest.append((now, max(self.seen, default=0)))

    def _take(self, text: str) -> None:
        new, full = _entries(text)
        if not full:
            self.duplicates += sum(1 for s in new if s in self.seen)
        self.seen.update(new)

    async def _request(
        self, session: aiohttp.ClientSession, method: str, path: str, **kw: Any
    ) -> tuple[int, str, str]:
        started = time.time()
        self.doing = f"{method} {re.sub(r'[0-9]+', 'N', path.split('?')[0])}"
        async with session.request(method, self.base + path, **kw) as r:
            text = await r.text()
        self.http.append((started, time.time() - started))
        self._news()
        return r.status, text, str(r.url)

    async def play(self, stop: asyncio.Event) -> None:
        jar = aiohttp.CookieJar(unsafe=True)
        jar.update_cookies({"sessionid": self.session_key})
        timeout = aiohttp.ClientTimeout(total=120)
        try:
            async with aiohttp.ClientSession(cookie_jar=jar, timeout=timeout) as session:
                await self._play(session, stop)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is a figure
            self.errors.append((time.time(), f"{type(exc).__name__} ({self.doing}): {str(exc)[:120]}"))

    async def _post_from_lobby(
        self, session: aiohttp.ClientSession, path: str, data: dict[str, str]
    ) -> tuple[int, str, str]:
        """Open the lobby (logged in) and post `data` to `path` with its CSRF token, as its form does."""
        _, lobby, _ = await self._request(session, "GET", "/")
        token = CSRF.search(lobby)
        if token is None:
            raise RuntimeError("the lobby has no form: not logged in?")
        return await self._request(session, "POST", path, headers={"Referer": self.base + "/"},
                                   data={"csrfmiddlewaretoken": token.group(1), **data})  # fmt: skip

    async def _play(self, session: aiohttp.ClientSession, stop: asyncio.Event) -> None:
        referer = {"Referer": self.base + "/"}
        status, _, url = await self._post_from_lobby(session, "/games/new/", {"scenario": "mercury"})
        found = re.search(r"/games/(\d+)/", url)
        if status != 200 or found is None:
            raise RuntimeError(f"new game answered {status} at {url}")
        self.game = int(found.group(1))
        _, setup, _ = await self._request(session, "GET", f"/games/{self.game}/?role={self.seat}")
        # The setup's post redirects to the game page, which the client then has, as a browser does.
        status, page, url = await self._request(session, "POST", f"/games/{self.game}/move/", headers=referer,
                                                data=dict(HIDDEN.findall(setup)) | _radios(setup))  # fmt: skip
        if status != 200 or urlparse(url).path != f"/games/{self.game}/":
            raise RuntimeError(f"setup answered {status} at {url}")
        self._take(page)
        hx_token = HX_CSRF.search(page).group(1)  # type: ignore[union-attr]
        latest = _panels(page)
        headers = {"HX-Request": "true", "HX-Target": "panels", "X-CSRFToken": hx_token, **referer}
        self.doing = "websocket connect"
        async with session.ws_connect(f"{self.base}/ws/games/{self.game}/", headers={"Origin": self.base},
                                      max_msg_size=0) as ws:  # fmt: skip
            inbox: asyncio.Queue[tuple[float, aiohttp.WSMessage | Exception]] = asyncio.Queue()
            reader = asyncio.create_task(self._read(ws, inbox))
            try:
                await self._answer(session, ws, stop, inbox, latest, headers)
            finally:
                reader.cancel()

    @staticmethod
    async def _read(
        ws: aiohttp.ClientWebSocketResponse, inbox: asyncio.Queue[tuple[float, aiohttp.WSMessage | Exception]]
    ) -> None:
        """Read the page's websocket all the time, as a browser does, stamping each frame as it arrives. aiohttp
        answers the server's keepalive pings only inside receive(): a client that read the socket only between
        its moves lets a slow move outlast the server's ping time-out (uvicorn's 20 s) and loses the socket."""
        try:
            while True:
                message = await ws.receive()
                await inbox.put((time.time(), message))
                if message.type != aiohttp.WSMsgType.TEXT:
                    return
        except Exception as exc:  # noqa: BLE001 - handed to the student's loop, which records it
            await inbox.put((time.time(), exc))

    async def _answer(
        self,
        session: aiohttp.ClientSession,
        ws: aiohttp.ClientWebSocketResponse,
        stop: asyncio.Event,
        inbox: asyncio.Queue[tuple[float, aiohttp.WSMessage | Exception]],
        latest: Panels | None,
        headers: dict[str, str],
    ) -> None:
        answered = -1
        while not stop.is_set():
            if latest and latest[0] == "review":
                return
            ours = bool(latest and latest[2] > answered and latest[0] not in NOT_A_MOVE)
            if self.thinking and not ours:
                self.move_at = (
                    0.0  # the floor passed on while they thought (a class group's other student moved)
                )
            if ours and latest:
                # The move is the student's: with --think they read and type first, while frames keep coming.
                self.move_at = self.move_at or time.time() + self.think * self.rng.uniform(0.5, 1.5)
                if time.time() >= self.move_at:
                    if self.think:  # the student's own wait is not the server's: a stall counts from the move
                        self.last_news = time.time()
                    answered, self.move_at = latest[2], 0.0
                    if self.move_by == "socket":  # answered by a notice naming its key (timed below)
                        data = _choose(latest[0], latest[3])
                        self.sent = (data["idem"], time.time())
                        await ws.send_str(json.dumps({"move": data}))
                        continue
                    status, html, _ = await self._request(session, "POST", f"/games/{self.game}/move/",
                                                          headers=headers, data=_choose(latest[0], latest[3]))  # fmt: skip
                    if status not in (200, 409):
                        self.errors.append((time.time(), f"move answered {status}"))
                        return
                    self._take(html)
                    latest = _newer(latest, _panels(html))
                    continue
            wait = min(1.0, self.move_at - time.time()) if self.thinking else 1.0
            try:
                self.doing = "websocket receive"
                now, message = await asyncio.wait_for(inbox.get(), timeout=max(0.0, wait))
            except TimeoutError:
                continue
            if isinstance(message, Exception):
                raise message
            if message.type != aiohttp.WSMsgType.TEXT:
                self.errors.append((time.time(), f"websocket closed ({message.type.name})"))
                return
            text = str(message.data)
            self._news()
            answer = NOTICE.search(text)
            if answer and self.sent and answer.group(1) == self.sent[0]:
                self.moves.append((self.sent[1], now - self.sent[1]))
                self.sent = None
            stamp = CHUNK_AT.search(text)
            times = [float(t) for t in stamp.group(1).split()] if stamp else []
            if len(times) >= 2 and times[1] > 0:
                self.lags.append((now, now - times[1], now - times[0]))
            if len(times) in (5, 6, 7) and times[2] > 0:
                way = (*times[1:], now)
                self.hops.append((now, tuple(b - a for a, b in zip(way, way[1:], strict=False))))
            self._take(text)
            latest = _newer(latest, _panels(text))


# --- one level --------------------------------------------------------------------------------------------------


async def run_clients(
    students: list[Student], ramp: float, settle: float, window: float
) -> tuple[float, float]:
    """Start the clients over `ramp` seconds; return the window (start, end) once it has passed."""
    stop = asyncio.Event()
    tasks = []
    for student in students:
        tasks.append(asyncio.create_task(student.play(stop)))
        await asyncio.sleep(ramp / max(1, len(students)))
    await asyncio.sleep(settle)
    opened = time.time()
    await asyncio.sleep(window)
    closed = time.time()
    stop.set()
    await asyncio.wait(tasks, timeout=30)
    for task in tasks:
        task.cancel()
    return opened, closed


LOOP_TICK = 0.05


async def watch_loop(lags: list[tuple[float, float]]) -> None:
    """How late the clients' own event loop wakes (a busy client delays every frame it reads: not the server's)."""
    while True:
        asked = time.perf_counter()
        await asyncio.sleep(LOOP_TICK)
        lags.append((time.time(), time.perf_counter() - asked - LOOP_TICK))


def client_lag(lags: list[tuple[float, float]], inside: Any) -> dict[str, float]:
    late = [lag for at, lag in lags if inside(at)]
    if not late:
        return {}
    return {"p50": 1000 * percentile(late, 50), "p99": 1000 * percentile(late, 99), "max": 1000 * max(late)}


class CollectorPauses:
    """The clients' own garbage collections of the older generations (time, generation, seconds): a pause of the
    clients' loop delays every frame it reads meanwhile, which is not the server's delay."""

    def __init__(self) -> None:
        self.pauses: list[tuple[float, int, float]] = []
        self._began = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if info["generation"] < 1:
            return
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.pauses.append((time.time(), info["generation"], time.perf_counter() - self._began))

    def within(self, inside: Any) -> dict[str, float]:
        taken = [(gen, s) for at, gen, s in self.pauses if inside(at)]
        return {"collections": len(taken), "full": sum(1 for gen, _ in taken if gen == 2),
                "max_ms": 1000 * max((s for _, s in taken), default=0.0)}  # fmt: skip


def longest_wait(student: Student, opened: float, closed: float) -> float:
    """The longest the student waited in the window for anything new, the wait still open at its end included
    (a game that never moved waited the whole window) unless the student was over a move then (--think)."""
    news = sorted(at for at, _ in student.gaps if at <= closed)
    waits = [gap for at, gap in student.gaps if opened <= at <= closed]
    last = news[-1] if news else opened - SETTLE
    return max([*waits, 0.0 if student.thinking else closed - max(last, opened)])


def stalls(students: list[Student], opened: float, closed: float) -> list[dict[str, Any]]:
    """The students not sustained for a wait (not an error): their seat, the longest wait, when it ended (seconds
    into the window; the window's end for a wait still open) and the phase of the newest entry they had seen as it
    began, so that a stall can be told from a phase that shows a seat nothing for a while."""
    from simulations.models import TranscriptEntry

    found = []
    for s in students:
        wait = longest_wait(s, opened, closed)
        if s.errors or not s.game or wait < STALL_LIMIT:
            continue
        ended = next((at for at, gap in s.gaps if opened <= at <= closed and gap == wait), closed)
        seq = max((n for at, n in s.newest if at <= ended - wait + 1e-3), default=0)
        phase = (
            TranscriptEntry.objects.filter(game_id=s.game, seq=seq).values_list("phase", flat=True).first()
        )
        found.append({"seat": s.seat, "game": s.game, "wait_s": round(wait, 2),
                      "ended_s": round(ended - opened, 1), "after_entry": seq, "phase": phase or "",
                      "doing": s.doing})  # fmt: skip
    return found


def _timers_folder(args: argparse.Namespace, tmp: Path, clients: int) -> Path | None:
    """Where the processes' timers report (`--profile-web`, `--profile-workers`; scaled set-up only), emptied for
    this level."""
    if not ((args.profile_web or args.profile_workers) and args.setup == "scaled"):
        return None
    folder = tmp / f"timers-{clients}"
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    return folder


def _process_timers(folder: Path) -> dict[str, dict[str, Any]]:
    """The timed processes' CPU over the window (bench/process_timers.py), summed by role ("web", "worker"):
    seconds by thread kind, and (seconds, calls) by code path. Each process that reported as the window opened
    reports as it closes."""
    (folder / "snap-close").touch()
    processes = len(list(folder.glob("snap-open.*.json")))
    deadline = time.monotonic() + 5
    while len(list(folder.glob("snap-close.*.json"))) < processes and time.monotonic() < deadline:
        time.sleep(0.1)
    roles: dict[str, dict[str, Any]] = {}
    for report in folder.glob("snap-close.*.json"):
        role = report.name.split(".")[1].split("-")[0]
        found = json.loads(report.read_text())
        summed = roles.setdefault(role, {"threads": {}, "paths": {}})
        threads: dict[str, float] = summed["threads"]
        paths: dict[str, tuple[float, int]] = summed["paths"]
        for name, seconds in found["threads"].items():
            threads[name] = threads.get(name, 0.0) + seconds
        for name, (seconds, calls) in found["paths"].items():
            was = paths.get(name, (0.0, 0))
            paths[name] = (was[0] + seconds, was[1] + calls)
    return {
        role: {
            "threads": dict(sorted(summed["threads"].items(), key=lambda kv: -kv[1])),
            "paths": dict(sorted(summed["paths"].items(), key=lambda kv: -kv[1][0])),
        }
        for role, summed in roles.items()
    }


def _per_turn(timers: dict[str, Any] | None, turns: int) -> dict[str, Any] | None:
    """One role's timers in milliseconds a committed turn (code paths with their calls in the window)."""
    if not timers or not turns:
        return None
    return {
        "threads": {name: round(1000 * sec / turns, 2) for name, sec in timers["threads"].items()},
        "paths": {
            name: [round(1000 * sec / turns, 2), calls] for name, (sec, calls) in timers["paths"].items()
        },
    }


def measure(args: argparse.Namespace, env: dict[str, str], tmp: Path, clients: int) -> dict[str, Any]:
    keys = fresh_database(args, tmp, clients)
    timers = _timers_folder(args, tmp, clients)
    if timers is not None:
        env = env | {"MERCURY_BENCH_TIMERS_DIR": str(timers)}
    setup = SetUp(
        args.setup, env, tmp, args.worker_threads, web=args.web, workers=args.workers,
        gunicorn_config=ROOT / "bench" / "gunicorn_timers.py" if timers is not None and args.profile_web else None,
        worker_launcher=ROOT / "bench" / "process_timers.py" if timers is not None and args.profile_workers else None,
    )  # fmt: skip
    pg = PgProbe(args.database_url) if args.setup == "scaled" else None
    pauses = CollectorPauses()
    gc.callbacks.append(pauses)
    try:
        students = [
            Student(setup.base, key, SEATS[n % len(SEATS)], think=args.think, rng=random.Random(n))
            for n, key in enumerate(keys)
        ]
        before: dict[str, Any] = {}
        loop_lags: list[tuple[float, float]] = []

        async def main() -> tuple[float, float]:
            loop = asyncio.get_running_loop()
            watch = asyncio.create_task(watch_loop(loop_lags))

            async def snapshot_at_open() -> None:  # taken when the window opens
                await asyncio.sleep(args.ramp + args.settle)
                if timers is not None:
                    (timers / "snap-open").touch()
                before.update(cpu=setup.cpu(), pg=pg.snapshot() if pg else None, client=time.process_time(),
                              roles=setup.cpu_by_role(), redis=redis_cpu(),
                              db=await loop.run_in_executor(None, database_figures, args, tmp))  # fmt: skip

            snap = asyncio.create_task(snapshot_at_open())
            window = await run_clients(students, args.ramp, args.settle, args.window)
            await snap
            watch.cancel()
            return window

        # The clients collect no garbage cycles while they play: their process's full collections would pause its
        # event loop, and every frame read meanwhile would count as late, though the server had sent it in time. Their cycles are few; they are collected after the run.
        gc.collect()
        gc.disable()
        try:
            opened, closed = asyncio.run(main())
        finally:
            gc.enable()
        cpu, rss, client_cpu = setup.cpu(), setup.rss(), time.process_time()
        roles, redis_after = setup.cpu_by_role(), redis_cpu()
        timed = _process_timers(timers) if timers is not None else {}
        pg_after = pg.snapshot() if pg else None
        after = database_figures(args, tmp)
    finally:
        gc.callbacks.remove(pauses)
        setup.stop()
    span = closed - opened
    inside = lambda at: opened <= at <= closed  # noqa: E731
    lags = [(new, old) for s in students for at, new, old in s.lags if inside(at)]
    hops = [way for s in students for at, way in s.hops if inside(at)]
    if args.frames:  # when in the run the tail came: each frame's level, time into the window and hops
        with args.frames.open("a") as out:  # emptied once, as the run starts: every level's frames are kept
            for s in students:
                for at, way in s.hops:
                    line = [len(students), s.game, round(at - opened, 3), *(round(w, 4) for w in way)]
                    out.write(json.dumps(line) + "\n")
    http = [sec for s in students for at, sec in s.http if inside(at)]
    moves = [sec for s in students for at, sec in s.moves if inside(at)]
    lost = 0
    for s in students:
        if s.game and s.seen:
            lost += sum(
                1 for seq in visible_entries(s.game, s.seat) if seq <= max(s.seen) and seq not in s.seen
            )
    sustained = sum(
        1 for s in students if not s.errors and s.game and longest_wait(s, opened, closed) < STALL_LIMIT
    )
    errors: dict[str, int] = {}  # every error of the run, ramp included, by kind
    for s in students:
        for _, e in s.errors:
            errors[e.split(":")[0]] = errors.get(e.split(":")[0], 0) + 1
    server_cpu = cpu - before["cpu"]
    pg_cpu = (pg_after["cpu"] - before["pg"]["cpu"]) if pg and pg_after else 0.0
    turns = after["versions"] - before["db"]["versions"]
    # Where a turn's CPU goes: each role's processes, PostgreSQL's backends and the machine's Redis (upper bounds
    # on a shared machine), and this process's clients; per committed turn, which is what the aim is short of.
    spent = {role: seconds - before["roles"].get(role, 0.0) for role, seconds in roles.items()}
    if pg:
        spent["postgres"] = pg_cpu
    if redis_after is not None and before["redis"] is not None and args.setup == "scaled":
        spent["redis"] = redis_after - before["redis"]
    spent["clients"] = client_cpu - before["client"]
    return {
        "clients": clients,
        "window_s": span,
        "games_sustained": sustained,
        "stalls": stalls(students, opened, closed),
        "games_streamed": sum(1 for s in students if any(inside(at) for at, _, _ in s.lags)),
        "chunk_to_frame_ms": {
            "newest_p50": 1000 * percentile([n for n, _ in lags], 50),
            "newest_p99": 1000 * percentile([n for n, _ in lags], 99),
            "oldest_p50": 1000 * percentile([o for _, o in lags], 50),
            "oldest_p99": 1000 * percentile([o for _, o in lags], 99),
            "frames": len(lags),
        },
        "hops_ms": {
            hop: {
                "p50": 1000 * percentile([w[n] for w in hops], 50),
                "p99": 1000 * percentile([w[n] for w in hops], 99),
            }
            for n, hop in enumerate(next(h for h in (HOPS, HOPS_SPLIT, HOPS_SEND) if len(h) == len(hops[0])))
        }
        if hops
        else {},
        "client_loop_lag_ms": client_lag(loop_lags, inside),
        "client_gc": pauses.within(inside),
        "http_ms": {
            "p50": 1000 * percentile(http, 50),
            "p99": 1000 * percentile(http, 99),
            "requests": len(http),
        },
        "socket_move_ms": {
            "p50": 1000 * percentile(moves, 50),
            "p99": 1000 * percentile(moves, 99),
            "moves": len(moves),
        }
        if moves
        else {},
        "errors": errors,
        "lost": lost,
        "duplicated": sum(s.duplicates for s in students),
        "cpu_share_per_game": (server_cpu + pg_cpu) / span / clients,
        "cpu_cores_used": (server_cpu + pg_cpu) / span,
        "cpu_postgres_s": pg_cpu,
        "client_cpu_cores": (client_cpu - before["client"]) / span,
        "rss_mb_per_game": rss / clients / 2**20,
        "rss_mb": rss / 2**20,
        "turns_per_s": turns / span,
        "cpu_ms_per_turn": {role: 1000 * seconds / turns for role, seconds in spent.items()} if turns else {},
        "web_ms_per_turn": _per_turn(timed.get("web"), turns),
        "worker_ms_per_turn": _per_turn(timed.get("worker"), turns),
        "pg_commits_per_s": ((pg_after["commits"] - before["pg"]["commits"]) / span)
        if pg and pg_after
        else None,
        "db_kb_per_game_minute": (after["bytes"] - before["db"]["bytes"]) / 1024 / clients / (span / 60),
    }


def render(report: dict[str, Any]) -> str:
    think = (
        f", students take ~{report['think']:g} s a move"
        if report.get("think")
        else ", students answer at once"
    )
    processes = (
        f" ({report.get('web', 2)} web, {report.get('workers', 2)} worker processes)"
        if report["setup"] == "scaled"
        else ""
    )
    lines = [f"{report['setup']} set-up{processes}, {report['token_rate']} words/s{think}, window {report['window']} s, "
             f"revision {report['revision']}, load before {report['loadavg']}",
             "K | sustained | streamed | frames/s | chunk→frame newest p50/p99 ms | oldest p50/p99 ms | HTTP p50/p99 ms | errors | lost/dup |"
             " CPU/game | cores | RSS MB/game | turns/s | PG commits/s | DB KB/game·min"]  # fmt: skip
    for r in report["levels"]:
        c, h = r["chunk_to_frame_ms"], r["http_ms"]
        pg = f"{r['pg_commits_per_s']:.0f}" if r["pg_commits_per_s"] is not None else "—"
        lines.append(
            f"{r['clients']} | {r['games_sustained']} | {r.get('games_streamed', '–')} | "
            f"{c['frames'] / r['window_s']:.0f} | {c['newest_p50']:.0f} / {c['newest_p99']:.0f} | "
            f"{c['oldest_p50']:.0f} / {c['oldest_p99']:.0f} | {h['p50']:.0f} / {h['p99']:.0f} | "
            f"{sum(r['errors'].values())} {r['errors'] or ''} | {r['lost']}/{r['duplicated']} | "
            f"{100 * r['cpu_share_per_game']:.1f} % | {r['cpu_cores_used']:.2f} | {r['rss_mb_per_game']:.1f} | "
            f"{r['turns_per_s']:.1f} | {pg} | {r['db_kb_per_game_minute']:.1f}"
        )
        if r.get("socket_move_ms"):
            m = r["socket_move_ms"]
            lines.append(
                f"  K={r['clients']} a move over the socket to its answer, p50 / p99 ms: {m['p50']:.0f} / {m['p99']:.0f}"
            )
        if r.get("hops_ms"):
            hops = ", ".join(f"{hop} {v['p50']:.0f} / {v['p99']:.0f}" for hop, v in r["hops_ms"].items())
            lag = r.get("client_loop_lag_ms") or {}
            lines.append(
                f"  K={r['clients']} a frame's way, p50 / p99 ms: {hops}; the client's loop late "
                f"{lag.get('p50', 0):.0f} / {lag.get('p99', 0):.0f} (max {lag.get('max', 0):.0f}); its collections "
                f"of older objects {(r.get('client_gc') or {}).get('collections', 0)}, longest "
                f"{(r.get('client_gc') or {}).get('max_ms', 0):.0f} ms"
            )
        for stall in r.get("stalls") or ():
            lines.append(
                f"  K={r['clients']} not sustained: {stall['seat']} (game {stall['game']}) waited "
                f"{stall['wait_s']:.1f} s, to {stall['ended_s']:.0f} s into the window, after entry "
                f"{stall['after_entry']} ({stall['phase'] or 'none'}), while {stall['doing']}"
            )
        if r.get("cpu_ms_per_turn"):
            split = ", ".join(f"{role} {ms:.1f}" for role, ms in r["cpu_ms_per_turn"].items())
            lines.append(f"  K={r['clients']} CPU a committed turn, ms: {split}")
        for role in ("web", "worker"):
            timers = r.get(f"{role}_ms_per_turn")
            if timers:
                threads = ", ".join(f"{name} {ms:.2f}" for name, ms in timers["threads"].items())
                paths = ", ".join(
                    f"{name} {ms:.2f} ({calls})" for name, (ms, calls) in timers["paths"].items()
                )
                lines.append(f"  K={r['clients']} {role} processes' threads, ms a turn: {threads}")
                lines.append(
                    f"  K={r['clients']} {role} processes' code paths, ms a turn (calls in the window): {paths}"
                )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--setup", choices=("embedded", "scaled"), required=True)
    parser.add_argument("--levels", default="10,50,100,200")
    parser.add_argument("--window", type=float, default=60.0)
    parser.add_argument("--ramp", type=float, default=20.0)
    parser.add_argument("--token-rate", type=float, default=30.0, help="the offline model's words a second")
    parser.add_argument(
        "--worker-threads", type=int, default=150, help="scaled: threads of each drive_worker"
    )
    parser.add_argument(
        "--web", type=int, default=2, help="scaled: web (uvicorn) processes, as MERCURY_WEB_PROCESSES"
    )
    parser.add_argument("--workers", type=int, default=2, help="scaled: drive_worker processes")
    parser.add_argument("--database-url", default=DEFAULT_PG_URL)
    parser.add_argument("--redis-url", default=DEFAULT_REDIS_URL)
    parser.add_argument(
        "--settle", type=float, default=SETTLE,
        help="seconds from the last client's start to the window (students who --think reach the streamed "
        "rounds later)",
    )  # fmt: skip
    parser.add_argument(
        "--think", type=float, default=0.0,
        help="mean seconds a student takes over each move (each between half and one and a half times it; "
        "0, the default: answers at once)",
    )  # fmt: skip
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--frames", type=Path, help="write every streamed frame as a JSON line: [students at the level, game, "
        "seconds into the window, each hop's seconds] (the ramp's frames too, at negative times; every level's)"
    )  # fmt: skip
    parser.add_argument(
        "--moves", choices=("socket", "post"), default="socket",
        help="how each page sends its moves: over its open websocket (as it does) or as HTMX posts",
    )  # fmt: skip
    parser.add_argument("--note", default="")
    parser.add_argument(
        "--profile-web",
        action="store_true",
        help="scaled: the web processes' CPU a turn by thread kind and code path (bench/gunicorn_timers.py)",
    )
    parser.add_argument(
        "--profile-workers",
        action="store_true",
        help="scaled: the drive workers' CPU a turn by thread kind and code path (bench/process_timers.py)",
    )
    args = parser.parse_args()
    Student.move_by = args.moves
    stop_on_sigterm()
    tmp = Path(tempfile.mkdtemp(prefix="mercury-load-"))
    env = configure(args, tmp)
    os.chdir(ROOT)
    import django

    django.setup()
    report: dict[str, Any] = {
        "setup": args.setup, "web": args.web, "workers": args.workers, "token_rate": args.token_rate, "think": args.think, "window": args.window,
        "revision": revision(), "moves": args.moves,
        "loadavg": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(), "python": platform.python_version(),
        "note": args.note, "levels": [],
    }  # fmt: skip
    if args.frames:
        args.frames.write_text("")
    for level in (int(x) for x in args.levels.split(",")):
        report["levels"].append(measure(args, env, tmp, level))
        print(render(report).splitlines()[-1], flush=True)
    print(render(report))
    if args.json:
        with args.json.open("a") as out:
            out.write(json.dumps(report) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
