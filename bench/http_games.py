"""Whole games played exactly as a browser plays them (HTTP + HTMX posts + the game's websocket), side by side with
the same game played headless in the same run.

    .venv/bin/python bench/http_games.py [--db sqlite|postgres] [--database-url URL] [--levels 1,4,16]
                                         [--rounds N] [--headless N] [--workers N] [--json FILE]
                                         [--server daphne|uvicorn] [--profile FILE] [--note TEXT]

1. Set-up, in this process: a fresh database (a temporary SQLite file, or the PostgreSQL database named by
   --database-url, dropped and created again: never `test`), `migrate`, `load_scenario`, one user per concurrent
   client. DEBUG off, the offline model at zero token delay, rate limits off.
2. Headless: one uncounted warm-up game, then --headless games played by `play_game` (passive EU, seeds 1..N) in
   this process, on the same database, before the server starts: the figure the HTTP games are compared with. They
   run on the CPU the server process will pin itself to (mercury/cpu_placement.py; none with MERCURY_PIN_CPU=off),
   and the report names it and the CPUs each server process may use.
3. HTTP: `bench/http_server.py` (daphne on a free port, the embedded workers) is started as a child process. For
   each level c, c clients (aiohttp) play --rounds games each at the same time. A client logs in once (not timed:
   a student logs in once, not per game), then per game: GET the lobby, POST its new-game form (to the setup page),
   GET the setup page with ?role=EU, POST its form (plain post, to the game page), open the game's websocket
   (session cookie, Origin) and
   play: whenever the newest panels (from a post's response or a websocket frame, the highest data-version wins)
   offer the student a move, send that form's fields, its version and its idempotency key included, over the
   game's websocket as the page's script does (`--moves post`: post them with HX-Request, as the page does while
   its socket is not open) (Next; the first partner, the student starting; a short message in talks; first place
   in debates, then pass; yes in votes), until the panels offer the review. One uncounted warm-up game runs before
   the first level.
   --workers N: the scaled set-up instead (`make serve-scaled`'s processes): gunicorn with --web uvicorn
   processes (default 2) on one port, N `manage.py drive_worker` processes of WORKER_THREADS threads driving the
   games, streamed words and turns reaching the pages through Redis (--redis-url, a database of the benchmark's
   own: flushed). CPU is every process's of the set-up; what only the daphne server counts (transactions,
   connections opened, its collector) is unknown there.
   --server uvicorn: the one process is uvicorn as a process of the scaled set-up runs it, instead of daphne.
   --profile FILE: CPU by thread kind, a sampling profile and cProfiles of the embedded worker threads, the requests,
   the pages' renders of committed turns and the event loop per level;
   with --profile-threads only the CPU by thread kind and by code path, which the others inflate (the report's
   first block is the warm-up game with the log-ins, the next ones the levels). Each block's `overhead` line: the
   server's CPU outside the game's own work (its AI turns and the moves' commits, as a headless game does them)
   per unit of that work, the steadiest reading of what playing over HTTP adds (printed at the end too).

Reported per level: wall time per game (new-game post to review panel), games per minute, server CPU per game
(/proc utime+stime of the server process, all threads), the clients' CPU per game (this process: it shares the
machine), database CPU per game on PostgreSQL (see `PgProbe`),
transaction p50/p99 (every commit inside the server, timed there), a move's p50/p99 (its post's answer, or over
the socket from sending it to the notice that answers it) and the time between
committed turns as the client sees them (consecutive websocket frames bringing new transcript entries),
connections opened per game (Django's `connection_created` in the server; on PostgreSQL also the database's own
session count), transactions per game (PostgreSQL's xact_commit), streamed frames, renders (websocket frames
bringing the panels, whole or the regions that changed) and websocket kilobytes per game, and the server
process's garbage-collector pauses per game (time, and full collections; not the scaled set-up's workers'). A client checks
that it saw every transcript entry exactly once. The ratio HTTP/headless compares the median game at level 1
with the median headless game of the same run.

--json FILE appends the run's figures as one line (the raw file of a table in docs/benchmarks.md is kept in
bench/runs/); docs/benchmarks.md keeps the method and the current table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
SCENARIO_FOLDER = "scenarios/mercury"
ROLE = "EU"
PASSWORD = "bench-" + secrets.token_hex(8)
GAME_TIMEOUT = 600.0
TALK_TEXT = "We have listened carefully and will reflect on what you said before the plenary."
DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/bench_speed"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/7"  # a Redis database of this benchmark's own (it is flushed)
WORKER_THREADS = 150  # a scaled set-up's drive_worker threads, as the Procfile's default
DRIVE_WORKER_READY = "drive_worker ready:"  # what a drive_worker prints once it takes drives (its READY)
# What a scaled set-up's processes do not count (see ScaledServer): no transactions timed, connections unknown.
UNCOUNTED: dict[str, Any] = {
    "transactions_s": [], "connections": None, "gc_s": None, "gc_full": None, "connections_by_thread": {},
    "queries_by_site": {},
}  # fmt: skip
CLK_TCK = os.sysconf("SC_CLK_TCK")

# The panels' state: on the panels whole, or on the move's section when an update sends only the regions that
# changed (the move's section comes last and holds the forms).
PANELS = re.compile(
    r'(?:<div id="panels"|<section class="card actions" id="actions"[^>]*?) '
    r'data-action="(\w*)" data-status="(\w*)" data-version="(\d+)"'
)
# The answer to a move sent over the socket.
NOTICE = re.compile(r'<div id="notice"[^>]*data-answers="([^"]*)"')
FORM = re.compile(r'<form method="post" action="([^"]+)"[^>]*>(.*?)</form>', re.S)
HIDDEN = re.compile(r'<input type="hidden" name="(\w+)" value="([^"]*)">')
RADIO = re.compile(r'<input type="radio" name="(\w+)" value="([^"]*)"( checked)?')
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
HX_CSRF = re.compile(
    r'"X-CSRFToken": "([^"]+)"'
)  # the page's <body hx-headers>: htmx sends it with every post
MODEL_KEY = re.compile(r'name="model" value="([^"]*)"|<option value="([^"]*)" selected')
ENTRY = re.compile(r'<li id="entry-(\d+)"')
# Where a message puts transcript entries: the whole transcript (page, full render) or entries added at its end.
# (The panels repeat earlier talks' entries in a dialog: those are not new.)
TRANSCRIPT = re.compile(
    r'<ol id="transcript"[^>]*>(.*?)</ol>|<div hx-swap-oob="beforeend:#transcript">(.*?)</div>', re.S
)
STREAMING = 'class="entry streaming"'


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile, as in bench/games.py."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[max(1, math.ceil(pct / 100 * len(ordered))) - 1]


def stop_on_sigterm() -> None:
    """A benchmark stopped with SIGTERM (`kill`, `timeout`) unwinds as on Ctrl-C, so its `finally` stops the
    processes it started: each runs in a process group of its own, and they outlived it, busy, into later runs."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- set-up (this process) --------------------------------------------------------------------------------------


def configure(args: argparse.Namespace, tmp: Path) -> dict[str, str]:
    """The environment shared by this process and the server; returns it for the child."""
    env = {
        # MERCURY_BENCH_LIBRARY_WAY: the library's way in place of the modules it names (bench/library_way.py).
        "DJANGO_SETTINGS_MODULE": (
            "bench.library_way" if os.environ.get("MERCURY_BENCH_LIBRARY_WAY") else "mercury.settings"
        ),
        "MERCURY_OFFLINE_TOKEN_DELAY": "0",
        "MERCURY_DEBUG": "0",
        "MERCURY_SECRET_KEY": "bench-" + secrets.token_hex(32),
        "MERCURY_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "MERCURY_RATE_MOVES_PER_MINUTE": "0",
        "MERCURY_RATE_GAMES_PER_HOUR": "0",
        "MERCURY_RATE_LOGINS_PER_15_MINUTES": "0",
        "MERCURY_RATE_LOGIN_FAILURES_PER_ADDRESS": "0",
        "MERCURY_RATE_SIGNUPS_PER_HOUR": "0",
        "MERCURY_LOG_LEVEL": "WARNING",
    }
    os.environ.pop("REDIS_URL", None)
    if args.workers:
        env |= {"MERCURY_WORKERS": "external", "REDIS_URL": args.redis_url,
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}  # gunicorn  # fmt: skip
        subprocess.run(["redis-cli", "-u", args.redis_url, "flushdb"], check=True, capture_output=True)
    if args.db == "postgres":
        env["DATABASE_URL"] = args.database_url
    else:
        os.environ.pop("DATABASE_URL", None)
        env["MERCURY_SQLITE_PATH"] = str(tmp / "bench.sqlite3")
    os.environ.update(env)
    return env


def fresh_postgres(url: str) -> None:
    parts = urlparse(url)
    name = parts.path.lstrip("/")
    if name in ("", "test", "postgres", "template0", "template1"):
        raise SystemExit(f"refusing to drop the database {name!r}: name one of this benchmark's own")
    common = [
        "-h",
        parts.hostname or "127.0.0.1",
        "-p",
        str(parts.port or 5432),
        "-U",
        parts.username or "postgres",
    ]
    subprocess.run(["dropdb", *common, "--if-exists", "--force", name], check=True)
    subprocess.run(["createdb", *common, name], check=True)


def prepare(clients: int) -> Any:
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from simulations.services.content.scenarios import latest_version, load_scenario

    call_command("migrate", verbosity=0)
    load_scenario(folder=SCENARIO_FOLDER)
    for n in range(clients):
        User.objects.create_user(f"bench{n}", password=PASSWORD)
    return latest_version(slug="mercury")


def headless(
    version: Any, games: int, *, cpu: int | None, warm_up: bool = True, seed: int = 1
) -> list[float]:
    """Wall seconds of each headless game (after one uncounted warm-up), played on `cpu`: the one the server
    process pins itself to (mercury/cpu_placement.py's `next_cpu` before it starts), so that the ratio compares
    like with like; None where the server does not pin itself (MERCURY_PIN_CPU=off, one CPU). `seed`: the first
    game's."""
    from django.db import connections

    from simulations.kinds.negotiation.bots import make_policy
    from simulations.kinds.negotiation.headless import play_game
    from simulations.services.ledger import turns

    walls = []
    allowed = os.sched_getaffinity(0)
    if cpu is not None:  # this thread, and the model-call threads it starts; the clients later run anywhere
        os.sched_setaffinity(0, {cpu})
    try:
        for n in range(games + warm_up):
            started = time.perf_counter()
            game = turns.create_game(scenario_version=version, seed=seed + n)
            game = play_game(game_id=game.pk, policy=make_policy("passive", ROLE))
            assert game.phase == "REVIEW", game.phase
            if n or not warm_up:
                walls.append(time.perf_counter() - started)
    finally:
        os.sched_setaffinity(0, allowed)
    connections.close_all()
    return walls


def paired(
    server: Server | ScaledServer, version: Any, pairs: int, cpu: int | None
) -> list[tuple[float, float]]:
    """(headless, HTTP) wall seconds of `pairs` pairs, each two headless games then two over HTTP, the second of
    each counted (the first finds the CPU's caches full of the other's): a ratio read from runs a minute apart
    moves with these machines' speed, which changes within minutes; a pair's games see nearly the same machine."""
    out = []
    for n in range(pairs):
        _, alone = headless(version, 2, cpu=cpu, warm_up=False, seed=1000 + 2 * n)
        _, run = asyncio.run(play_level(server, 1, 2))
        out.append((alone, run.wall_s))
    return out


def cpus_of(pids: Sequence[int]) -> list[str]:
    """Each process's allowed CPUs as /proc shows them ("1", "0-1")."""
    return [cpus for pid in pids if (cpus := _status(pid, "Cpus_allowed_list"))]


# --- probes -----------------------------------------------------------------------------------------------------


def proc_cpu(pid: int) -> tuple[float, float]:
    """(own CPU, CPU of waited-for children) in seconds, all threads, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return (utime + stime) / CLK_TCK, (cutime + cstime) / CLK_TCK


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants, from /proc."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
    return out


def _rss_bytes(pid: int) -> int:
    rss = _status(pid, "VmRSS")  # "123456 kB"
    return int(rss.split()[0]) * 1024 if rss else 0


def _status(pid: int, field: str) -> str:
    """One field of /proc/PID/status; "" when the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name == field:
                return value.strip()
    except OSError:
        pass
    return ""


class SetUp:
    """The processes of one set-up, each in its own process group: `embedded`, one daphne process; `scaled`,
    `make serve-scaled`'s processes (gunicorn with `web` uvicorn processes on one port, `workers` drive_worker
    processes of `worker_threads` threads)."""

    def __init__(
        self,
        name: str,
        env: dict[str, str],
        tmp: Path,
        worker_threads: int,
        *,
        web: int = 2,
        workers: int = 2,
        gunicorn_config: Path | None = None,
        worker_launcher: Path | None = None,
    ) -> None:
        self.name, self.env, self.tmp = name, env, tmp
        self.port = free_port()
        self.procs: list[subprocess.Popen[bytes]] = []
        self.roles: list[str] = []  # each process's role ("server", "web", "worker"), as `procs`
        if name == "embedded":
            self._start("server", ["daphne", "-b", "127.0.0.1", "-p", str(self.port),
                                   "mercury.asgi:application"])  # fmt: skip
        else:
            config = ["-c", str(gunicorn_config)] if gunicorn_config else []
            self._start("web", ["gunicorn", *config, "mercury.asgi:application", "-k", "mercury.asgi_worker.MercuryUvicornWorker",
                                "--workers", str(web), "--bind", f"127.0.0.1:{self.port}", "--no-control-socket",
                                "--graceful-timeout", "5", "--keep-alive", "30"])  # fmt: skip
            launcher = str(worker_launcher or "manage.py")  # bench/process_timers.py runs it with its timers
            for n in range(workers):
                self._start(f"worker-{n}", [sys.executable, launcher, "drive_worker", "--no-reload",
                                            "--interval", "0.1", "--threads", str(worker_threads)])  # fmt: skip
        deadline = time.monotonic() + 120
        while not self._ready(web, workers):
            if time.monotonic() > deadline or any(p.poll() is not None for p in self.procs):
                raise SystemExit(f"the {name} set-up did not start; see {tmp}")
            time.sleep(0.1)

    def _ready(self, web: int, workers: int) -> bool:
        """The port answers and, scaled, every process has said it is ready: each uvicorn process started and each
        drive_worker loaded (tens of seconds on a busy machine): clients that came earlier would find one worker
        taking every drive and the other none."""
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", self.port)) != 0:
                return False
        if self.name == "embedded":
            return True
        started = (self.tmp / "web.log").read_text(errors="replace").count("Started server process")
        loaded = sum(
            DRIVE_WORKER_READY in (self.tmp / f"worker-{n}.log").read_text(errors="replace")
            for n in range(workers)
        )
        return started >= web and loaded == workers

    def _start(self, name: str, argv: list[str]) -> None:
        self.roles.append(name.split("-")[0])
        with (self.tmp / f"{name}.log").open("wb") as log:
            self.procs.append(subprocess.Popen(argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                               start_new_session=True))  # fmt: skip

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def pids(self) -> list[int]:
        return [pid for proc in self.procs for pid in _tree(proc.pid)]

    def cpu(self) -> float:
        total = 0.0
        for pid in self.pids():
            try:
                total += proc_cpu(pid)[0]
            except (OSError, ValueError):
                continue
        return total

    def cpu_by_role(self) -> dict[str, float]:
        """CPU seconds so far of each role's processes (gunicorn's and its uvicorn processes are "web")."""
        totals: dict[str, float] = {}
        for role, proc in zip(self.roles, self.procs, strict=True):
            for pid in _tree(proc.pid):
                try:
                    totals[role] = totals.get(role, 0.0) + proc_cpu(pid)[0]
                except (OSError, ValueError):
                    continue
        return totals

    def rss(self) -> int:
        return sum(_rss_bytes(pid) for pid in self.pids())

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)


class PgProbe:
    """The database's side on PostgreSQL, for this benchmark's database only where PostgreSQL can tell:
    sessions opened and transactions committed (pg_stat_database), and CPU. CPU is read from /proc: the live
    backends of this database, plus the postmaster's reaped children (backends that exited), which on a shared
    machine also holds other databases' short-lived backends: an upper bound."""

    def __init__(self, url: str) -> None:
        self.url, self.name = url, urlparse(url).path.lstrip("/")

    def _query(self, sql: str) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(
            self.url.replace("postgres://", "postgresql://", 1).rsplit("/", 1)[0] + "/postgres"
        ) as c:
            return list(c.execute(sql, prepare=False).fetchall())  # type: ignore[call-overload]

    def snapshot(self) -> dict[str, float]:
        (sessions, commits), *_ = self._query(
            f"select sessions, xact_commit from pg_stat_database where datname = '{self.name}'"  # noqa: S608
        )
        pids = [
            int(r[0]) for r in self._query(f"select pid from pg_stat_activity where datname = '{self.name}'")
        ]  # noqa: S608
        live = 0.0
        for pid in pids:
            try:
                live += proc_cpu(pid)[0]
            except (OSError, ValueError):
                continue
        master = _postmaster_pid()
        reaped = proc_cpu(master)[1] if master else 0.0
        return {"sessions": sessions, "commits": commits, "cpu": live + reaped}


def redis_cpu() -> float | None:
    """CPU seconds so far of the machine's Redis server (every database of it: an upper bound for one set-up's
    share on a shared machine), or None without one."""
    for path in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            # Redis rewrites its process title with spaces: "redis-server 127.0.0.1:6379".
            program = path.read_bytes().split(b"\x00")[0].split(b" ")[0]
            if program.endswith(b"redis-server"):
                return proc_cpu(int(path.parent.name))[0]
        except (OSError, ValueError):
            continue
    return None


def _postmaster_pid() -> int | None:
    for path in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            cmd = path.read_bytes()
        except OSError:
            continue
        if cmd.startswith(b"/usr/lib/postgresql/") and b"/bin/postgres\x00" in cmd:
            return int(path.parent.name)
    return None


# --- the server -------------------------------------------------------------------------------------------------


class Server:
    """One daphne process with its embedded workers (`bench/http_server.py`), which counts what it did."""

    def __init__(
        self,
        env: dict[str, str],
        tmp: Path,
        profile: Path | None = None,
        kind: str = "daphne",
        *,
        threads_only: bool = False,
    ) -> None:
        self.port = free_port()
        self.stats = tmp / "server-stats.json"
        self.serial = 0
        self.log = (tmp / "server.log").open("w")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "bench" / "http_server.py"),
                "--port",
                str(self.port),
                "--stats",
                str(self.stats),
                *(["--profile", str(profile.resolve()), "--count-queries"] if profile else []),
                *(["--threads-only"] if profile and threads_only else []),
                "--server",
                kind,
            ],
            env=os.environ | env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise SystemExit(f"the server did not start; see {tmp / 'server.log'}")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cpu(self) -> float:
        return proc_cpu(self.proc.pid)[0]

    def pids(self) -> list[int]:
        return [self.proc.pid]

    def collect(self) -> dict[str, Any]:
        """What the server counted since the last call."""
        self.serial += 1
        self.proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + 120  # a --profile report takes a while
        while time.monotonic() < deadline:
            try:
                data: dict[str, Any] = json.loads(self.stats.read_text())
                if data["serial"] == self.serial:
                    return data
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        raise SystemExit("the server did not report its counters")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


class ScaledServer:
    """The scaled set-up as `make serve-scaled` runs it (`SetUp("scaled")`: gunicorn with `web` uvicorn processes,
    `workers` drive_worker processes of WORKER_THREADS threads, PostgreSQL or SQLite, Redis). Its processes count
    nothing for this benchmark: what only the daphne server counts (transactions, connections opened, the
    collector) is reported as unknown; PostgreSQL's own counts remain."""

    def __init__(self, env: dict[str, str], tmp: Path, *, web: int, workers: int) -> None:
        self.setup = SetUp("scaled", os.environ | env, tmp, WORKER_THREADS, web=web, workers=workers)
        self.base = self.setup.base

    def cpu(self) -> float:
        return self.setup.cpu()

    def pids(self) -> list[int]:
        return self.setup.pids()

    def collect(self) -> dict[str, Any] | None:
        return None

    def stop(self) -> None:
        self.setup.stop()


# --- one browser ------------------------------------------------------------------------------------------------


@dataclass
class GameRun:
    wall_s: float = 0.0
    posts_s: list[float] = field(default_factory=list)
    turn_gaps_s: list[float] = field(default_factory=list)
    entries: int = 0
    frames: int = 0
    renders: int = 0  # websocket frames bringing the panels (a render of the game), as against streamed words
    ws_bytes: int = 0  # every websocket frame's text, streamed words and renders
    duplicates: int = 0


class Browser:
    """One student: a cookie jar, a log-in, then whole games. `moves`: "socket" sends each move over the game's
    open websocket, as the page's script does (static/mercury/app.js); "post" posts it with HTMX, as the page does
    while its socket is not open (and did before moves took the socket)."""

    moves = "socket"

    def __init__(self, base: str, username: str) -> None:
        self.base, self.username = base, username
        self.session = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))

    async def close(self) -> None:
        await self.session.close()

    async def get(self, path: str) -> str:
        async with self.session.get(self.base + path) as r:
            r.raise_for_status()
            return await r.text()

    async def post(self, path: str, data: dict[str, str], *, htmx: str = "") -> tuple[int, str, str]:
        """`htmx`: the page's CSRF token, sent as htmx does (a header; forms rendered over the websocket have none)."""
        headers = {"HX-Request": "true", "HX-Target": "panels", "X-CSRFToken": htmx} if htmx else {}
        headers["Referer"] = self.base + path
        async with self.session.post(self.base + path, data=data, headers=headers) as r:
            return r.status, await r.text(), str(r.url)

    async def log_in(self) -> None:
        page = await self.get("/accounts/login/")
        data = {
            "csrfmiddlewaretoken": _csrf(page),
            "username": self.username,
            "password": PASSWORD,
            "next": "/",
        }
        status, _, url = await self.post("/accounts/login/", data)
        if status != 200 or urlparse(url).path != "/":
            raise RuntimeError(f"log-in failed: {status} {url}")

    async def play(self) -> GameRun:
        run = GameRun()
        started = time.perf_counter()
        lobby = await self.get("/")
        match = MODEL_KEY.search(lobby)
        model = (match.group(1) or match.group(2)) if match else ""
        _, _, url = await self.post(
            "/games/new/", {"csrfmiddlewaretoken": _csrf(lobby), "scenario": "mercury", "model": model}
        )
        game = int(re.search(r"/games/(\d+)/", url).group(1))  # type: ignore[union-attr]
        setup = await self.get(f"/games/{game}/?role={ROLE}")
        form = dict(HIDDEN.findall(setup)) | _radios(setup)
        # The setup's post redirects to the game page, which the client has then (as a browser does): reading it
        # again would cost a full render of the page each game.
        status, page, url = await self.post(f"/games/{game}/move/", form)
        if status != 200 or urlparse(url).path != f"/games/{game}/":
            raise RuntimeError(f"setup answered {status} at {url}")
        await self._play_page(game, page, run)
        run.wall_s = time.perf_counter() - started
        return run

    async def _play_page(self, game: int, page: str, run: GameRun) -> None:
        seen = set(_entries(page)[0])
        token = HX_CSRF.search(page).group(1)  # type: ignore[union-attr]
        latest = _panels(page)
        answered = -1
        sent: tuple[str, float] | None = None  # a move sent over the socket, not answered yet: its key, when
        last_turn = time.perf_counter()
        origin = {"Origin": self.base}
        async with self.session.ws_connect(
            f"{self.base}/ws/games/{game}/", headers=origin, max_msg_size=0
        ) as ws:
            deadline = time.monotonic() + GAME_TIMEOUT
            while True:
                if latest and latest[0] == "review":
                    return
                if latest and latest[2] > answered and latest[0] not in NOT_A_MOVE:
                    answered = latest[2]
                    data = _choose(latest[0], latest[3])
                    posted = time.perf_counter()
                    if self.moves == "socket":  # answered by a notice naming its key (timed below)
                        await ws.send_str(json.dumps({"move": data}))
                        sent = (data["idem"], posted)
                        continue
                    status, html, _ = await self.post(f"/games/{game}/move/", data, htmx=token)
                    run.posts_s.append(time.perf_counter() - posted)
                    if status not in (200, 409):
                        raise RuntimeError(f"move {data.get('event')} answered {status}: {html[:300]}")
                    latest = _newer(latest, _panels(html))
                    continue
                message = await ws.receive(timeout=max(0.0, deadline - time.monotonic()))
                if message.type != aiohttp.WSMsgType.TEXT:
                    raise RuntimeError(f"websocket closed: {message.type} {message.data}")
                text = str(message.data)
                answer = NOTICE.search(text)
                if answer and sent and answer.group(1) == sent[0]:
                    run.posts_s.append(time.perf_counter() - sent[1])
                    sent = None
                if STREAMING in text:
                    run.frames += 1
                run.ws_bytes += len(text.encode())
                if 'id="actions"' in text:  # the panels whole, or the regions that changed and the move
                    run.renders += 1
                new, full = _entries(text)
                fresh = [s for s in new if s not in seen]
                if not full:  # a full render repeats every entry; an addition must bring only new ones
                    run.duplicates += len(new) - len(fresh)
                if fresh:
                    now = time.perf_counter()
                    run.turn_gaps_s.append(now - last_turn)
                    last_turn = now
                    seen.update(fresh)
                latest = _newer(latest, _panels(text))
            run.entries = len(seen)


def _entries(html: str) -> tuple[list[int], bool]:
    """Transcript entries in a page or message, and whether it is the whole transcript."""
    ids: list[int] = []
    full = False
    for whole, added in TRANSCRIPT.findall(html):
        full = full or bool(whole)
        ids += [int(s) for s in ENTRY.findall(whole or added)]
    return ids, full


def _csrf(html: str) -> str:
    match = CSRF.search(html)
    if not match:
        raise RuntimeError("no CSRF token on the page")
    return match.group(1)


def _radios(html: str) -> dict[str, str]:
    """Each radio group's checked value, else its first (what a student picking the first choice sends)."""
    out: dict[str, str] = {}
    for name, value, checked in RADIO.findall(html):
        if name not in out or checked:
            out[name] = value
    return out


Panels = tuple[str, str, int, str]  # action, status, version, html


# Panels that ask the student for nothing: another seat's turn, the role screen (answered by the page's start), and
# a class group's Round 2 lane that is over while the group's other students still talk.
NOT_A_MOVE = ("waiting", "roles", "", "talks_over")


def _panels(html: str) -> Panels | None:
    match = PANELS.search(html)
    if not match:
        return None
    return match.group(1), match.group(2), int(match.group(3)), html[match.start() :]


def _newer(old: Panels | None, new: Panels | None) -> Panels | None:
    if new is None:
        return old
    if old is None or new[2] >= old[2]:
        return new
    return old


def _choose(action: str, html: str) -> dict[str, str]:
    """The form a student submits for this action, filled in as described in the module's docstring."""
    forms = [(url, body) for url, body in FORM.findall(html) if "/move/" in url]
    if not forms:
        raise RuntimeError(f"action {action} offers no move form")
    body = forms[0][1]
    if action == "speech":
        body = next(b for _, b in forms if 'value="HUMAN_TURN_SKIP"' in b)
    data = dict(HIDDEN.findall(body)) | _radios(body)
    if action == "talk":
        data["text"] = TALK_TEXT
    if action == "vote":
        data["ballot"] = "yes"
    return data


# --- levels -----------------------------------------------------------------------------------------------------


@dataclass
class Level:
    clients: int
    games: int
    wall_s: float
    games_per_minute: float
    game_p50_s: float
    game_max_s: float
    server_cpu_per_game_s: float
    client_cpu_per_game_s: float  # this process's: the clients parsing pages and frames
    db_cpu_per_game_s: float | None
    transaction_p50_ms: float | None
    transaction_p99_ms: float | None
    transactions_per_game: float
    post_p50_ms: float
    post_p99_ms: float
    turn_gap_p50_ms: float
    turn_gap_p99_ms: float
    connections_per_game: float | None
    db_sessions_per_game: float | None
    db_commits_per_game: float | None
    frames_per_game: float
    renders_per_game: float
    ws_kb_per_game: float
    entries_per_game: float
    duplicates: int
    gc_ms_per_game: float | None
    gc_full_per_game: float | None
    connections_by_thread: dict[str, float]
    queries_by_site: dict[str, float]


async def play_level(
    server: Server | ScaledServer, clients: int, rounds: int, logged_in: Callable[[], None] = lambda: None
) -> list[GameRun]:
    """`logged_in` is called once every client has logged in (log-ins are not part of a game)."""
    browsers = [Browser(server.base, f"bench{n}") for n in range(clients)]
    try:
        await asyncio.gather(*(b.log_in() for b in browsers))
        logged_in()

        async def games(b: Browser) -> list[GameRun]:
            return [await b.play() for _ in range(rounds)]

        runs = await asyncio.gather(*(games(b) for b in browsers))
    finally:
        await asyncio.gather(*(b.close() for b in browsers))
    return [r for rs in runs for r in rs]


def measure(server: Server | ScaledServer, pg: PgProbe | None, clients: int, rounds: int) -> Level:
    before: dict[str, Any] = {}

    def start() -> None:
        server.collect()
        before.update(
            cpu=server.cpu(),
            db=pg.snapshot() if pg else None,
            at=time.perf_counter(),
            client=time.process_time(),
        )

    runs = asyncio.run(play_level(server, clients, rounds, start))
    wall = time.perf_counter() - before["at"]
    client_cpu = time.process_time() - before["client"]
    cpu0, db0 = before["cpu"], before["db"]
    cpu1, db1 = server.cpu(), pg.snapshot() if pg else None
    counts = server.collect() or UNCOUNTED
    n = len(runs)

    def per_game(total: float | None, scale: float = 1.0) -> float | None:
        return None if total is None else scale * total / n

    tx_ms = [t * 1000 for t in counts["transactions_s"]]
    posts = [p * 1000 for r in runs for p in r.posts_s]
    gaps = [g * 1000 for r in runs for g in r.turn_gaps_s]
    walls = [r.wall_s for r in runs]
    per = (lambda key: (db1[key] - db0[key]) / n) if db0 and db1 else None  # noqa: E731
    return Level(
        clients=clients, games=n, wall_s=wall, games_per_minute=60 * n / wall,
        game_p50_s=statistics.median(walls), game_max_s=max(walls),
        server_cpu_per_game_s=(cpu1 - cpu0) / n, client_cpu_per_game_s=client_cpu / n,
        db_cpu_per_game_s=per("cpu") if per else None,
        transaction_p50_ms=percentile(tx_ms, 50) if tx_ms else None,
        transaction_p99_ms=percentile(tx_ms, 99) if tx_ms else None,
        transactions_per_game=len(tx_ms) / n,
        post_p50_ms=percentile(posts, 50), post_p99_ms=percentile(posts, 99),
        turn_gap_p50_ms=percentile(gaps, 50), turn_gap_p99_ms=percentile(gaps, 99),
        connections_per_game=per_game(counts["connections"]),
        db_sessions_per_game=per("sessions") if per else None,  # the probe itself connects to "postgres"
        db_commits_per_game=per("commits") if per else None,
        frames_per_game=sum(r.frames for r in runs) / n,
        renders_per_game=sum(r.renders for r in runs) / n,
        ws_kb_per_game=sum(r.ws_bytes for r in runs) / n / 1000,
        entries_per_game=sum(r.entries for r in runs) / n,
        duplicates=sum(r.duplicates for r in runs),
        gc_ms_per_game=per_game(counts["gc_s"], 1000), gc_full_per_game=per_game(counts["gc_full"]),
        connections_by_thread={k: v / n for k, v in counts["connections_by_thread"].items()},
        queries_by_site={k: v / n for k, v in counts["queries_by_site"].items()},
    )  # fmt: skip


# --- report -----------------------------------------------------------------------------------------------------


def revision() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "-uno"], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def render(report: dict[str, Any]) -> str:
    h = report["headless_s"]
    lines = [
        f"# http_games {report['db']} workers {report.get('workers', 'embedded')} server {report.get('server', 'daphne')} moves {report.get('moves', 'post')} @ {report['revision']} load {report['load'][0]:.2f} {report['note']}",
        f"headless: {len(h)} games, median {statistics.median(h):.2f} s (min {min(h):.2f}); on CPU "
        f"{report.get('headless_cpu')}; the server's processes on CPUs {report.get('server_cpus')}",
    ]
    cols = [
        ("c", "clients", "{:d}"), ("games", "games", "{:d}"), ("s/game p50", "game_p50_s", "{:.2f}"),
        ("games/min", "games_per_minute", "{:.1f}"), ("cpu s/game", "server_cpu_per_game_s", "{:.2f}"),
        ("client cpu s/game", "client_cpu_per_game_s", "{:.2f}"),
        ("db cpu s/game", "db_cpu_per_game_s", "{:.2f}"), ("tx p50/p99 ms", None, ""),
        ("post p50/p99 ms", None, ""), ("turn gap p50/p99 ms", None, ""),
        ("conn/game", "connections_per_game", "{:.1f}"), ("pg sessions/game", "db_sessions_per_game", "{:.1f}"),
        ("tx/game", "transactions_per_game", "{:.0f}"), ("pg commits/game", "db_commits_per_game", "{:.0f}"),
        ("frames/game", "frames_per_game", "{:.0f}"), ("renders/game", "renders_per_game", "{:.0f}"),
        ("ws KB/game", "ws_kb_per_game", "{:.0f}"),
        ("gc ms/game", "gc_ms_per_game", "{:.0f}"),
        ("full gc/game", "gc_full_per_game", "{:.1f}"),
    ]  # fmt: skip
    lines.append("| " + " | ".join(c for c, _, _ in cols) + " |")
    lines.append("|" + "---|" * len(cols))
    for lv in report["levels"]:
        cells = []
        for title, key, fmt in cols:
            if key is None:
                prefix = {"tx": "transaction", "post": "post", "turn": "turn_gap"}[title.split()[0]]
                low, high = lv[prefix + "_p50_ms"], lv[prefix + "_p99_ms"]
                cells.append("–" if low is None else f"{low:.1f} / {high:.1f}")
            else:
                cells.append("–" if lv[key] is None else fmt.format(lv[key]))
        lines.append("| " + " | ".join(cells) + " |")
    for lv in report["levels"]:
        opened = ", ".join(
            f"{k} {v:.1f}" for k, v in sorted(lv["connections_by_thread"].items(), key=lambda kv: -kv[1])
        )
        lines.append(f"connections per game at {lv['clients']} by thread: {opened}")
    for lv in report["levels"]:
        if lv["queries_by_site"]:
            top = sorted(lv["queries_by_site"].items(), key=lambda kv: -kv[1])[:25]
            total = sum(lv["queries_by_site"].values())
            lines.append(
                f"statements per game at {lv['clients']}: {total:.0f}; "
                + ", ".join(f"{k} {v:.0f}" for k, v in top)
            )
    if report["levels"]:
        first = report["levels"][0]
        lines.append(
            f"ratio HTTP/headless (level {first['clients']} median): {first['game_p50_s'] / statistics.median(h):.2f}; "
            f"duplicates seen: {sum(lv['duplicates'] for lv in report['levels'])}"
        )
    if report.get("pairs"):
        ratios = [http / alone for alone, http in report["pairs"]]
        lines.append(
            f"pairs (headless, then over HTTP), s: {', '.join(f'{a:.2f}/{b:.2f}' for a, b in report['pairs'])}; "
            f"ratios {', '.join(f'{r:.2f}' for r in ratios)}; median {statistics.median(ratios):.2f}"
        )
    if report.get("overhead"):  # the warm-up's block first (log-ins, first renders), then each level's
        lines.append(
            "overhead (server CPU outside the game's work, per unit of it), warm-up then levels: "
            + ", ".join(f"{o:.3f}" for o in report["overhead"])
        )
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--database-url", default=DEFAULT_PG_URL, help="PostgreSQL only; dropped and created")
    parser.add_argument("--levels", default="1,4,16", help="concurrent games, comma-separated")
    parser.add_argument("--rounds", type=int, default=1, help="games each client plays per level")
    parser.add_argument("--headless", type=int, default=3, help="headless games (after a warm-up)")
    parser.add_argument("--json", type=Path, help="append the raw report (one JSON line) to this file")
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="scaled set-up: N `drive_worker` processes, Redis channel layer",
    )
    parser.add_argument("--web", type=int, default=2, help="with --workers: the set-up's uvicorn processes")
    parser.add_argument(
        "--redis-url", default=DEFAULT_REDIS_URL, help="with --workers; this database is flushed"
    )
    parser.add_argument("--profile", type=Path, help="sample the server's threads; a report per level here")
    parser.add_argument(
        "--profile-threads", action="store_true",
        help="with --profile: CPU by thread kind and code path only (the sampler and cProfile inflate them)",
    )  # fmt: skip
    parser.add_argument(
        "--server", choices=("daphne", "uvicorn"), default="daphne",
        help="without --workers: the one server process (uvicorn as the scaled set-up runs it)",
    )  # fmt: skip
    parser.add_argument(
        "--paired", type=int, default=0,
        help="then N pairs, each a headless game right before one over HTTP: the ratio of each pair (--levels 0 "
        "for these alone)",
    )  # fmt: skip
    parser.add_argument(
        "--moves", choices=("socket", "post"), default="socket",
        help="how the page sends its moves: over its open websocket (as it does) or as HTMX posts (no socket yet)",
    )  # fmt: skip
    parser.add_argument("--note", default="", help="a label for this run (e.g. what changed)")
    return parser.parse_args(argv)


def overheads(profile: Path, start: int) -> list[float]:
    """The `overhead` of each block the server wrote to the profile in this run (the warm-up's first, then each
    level's; bench/http_server.py)."""
    if not profile.exists():
        return []
    with profile.open("rb") as f:
        f.seek(start)
        text = f.read().decode(errors="replace")
    return [float(m) for m in re.findall(r"^overhead: ([\d.]+) of the game's work", text, re.M)]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    Browser.moves = args.moves
    stop_on_sigterm()
    levels = [int(x) for x in args.levels.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="mercury-http-bench-"))
    server: Server | ScaledServer | None = None
    try:
        env = configure(args, tmp)
        if args.db == "postgres":
            fresh_postgres(args.database_url)
        version = prepare(max(levels + [1]))
        # The headless games' process treats the collector as a server process does (mercury/startup.py): with
        # CPython's defaults a full pass over litellm's modules (~0.2 s) fell into some headless games at
        # random, and their time, the ratio's denominator, moved by a third from one game to the next.
        from mercury.cpu_placement import next_cpu
        from mercury.startup import keep_startup_objects_out_of_gc

        keep_startup_objects_out_of_gc(drives_games=True)
        headless_cpu = next_cpu()
        headless_s = headless(version, args.headless, cpu=headless_cpu)
        server = (
            ScaledServer(env, tmp, web=args.web, workers=args.workers)
            if args.workers
            else Server(env, tmp, args.profile, args.server, threads_only=args.profile_threads)
        )
        pg = PgProbe(args.database_url) if args.db == "postgres" else None
        profiled_from = args.profile.stat().st_size if args.profile and args.profile.exists() else 0
        asyncio.run(play_level(server, 1, 1))  # warm-up: imports, first renders, the workers start
        results = [asdict(measure(server, pg, c, args.rounds)) for c in levels if c]
        pairs = paired(server, version, args.paired, headless_cpu) if args.paired else []
        report = {
            "db": args.db, "workers": args.workers or "embedded", "web": args.web if args.workers else 1, "server": "gunicorn" if args.workers else args.server, "revision": revision(), "moves": args.moves, "note": args.note, "load": os.getloadavg(),
            "python": platform.python_version(), "headless_s": headless_s, "levels": results,
            "headless_cpu": headless_cpu, "server_cpus": cpus_of(server.pids()), "pairs": pairs,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "overhead": overheads(args.profile, profiled_from) if args.profile else [],
        }  # fmt: skip
        print(render(report))
        if args.json:
            with args.json.open("a") as out:
                out.write(json.dumps(report) + "\n")
    except BaseException:
        for log in sorted(tmp.glob("*.log")):  # what the server and workers said before it went wrong
            print(
                f"--- {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-40:]),
                file=sys.stderr,
            )
        raise
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
