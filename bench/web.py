"""Browser benchmark: server time to render each page of a game, and the overhead of the streaming relay.

    .venv/bin/python bench/web.py [--repeat N] [--relay-turns N] [--token-delay S] [--keep-connection]
                                  [--gc-freeze] [--json]

Django is set up standalone, as in bench/games.py: a fresh SQLite file in a temporary directory, DEBUG off,
`migrate`, `load_scenario`. One user owns every game. Games are brought to each phase by headless play
(`play_game` with the passive policy for EU, stopped by an `on_progress` callback at the first moment the phase is
reached and the student is to act), so each page shows what a student would see there.

1. Pages. Each page is requested with `django.test.Client` after `force_login` of the owner, in this process:
   the lobby, the setup page (no role, and ?role=EU), the game page in Round 1, a Round 2 talk, a Round 3 debate,
   the Round 3 vote (first and last issue), the review of a finished game, and the HTMX move post (Round 1
   OPENING_PRESENTED with HX-Request; each post advances a game, so fresh Round 1 games are prepared beforehand).
   Two timers per request:
   * request: `time.perf_counter()` around `client.get` / `client.post`, i.e. the whole middleware stack (session
     and user lookups included) and the view, plus the test client's own small cost of building the request;
   * view: a timer swapped into every URL pattern's callback, i.e. the view and its decorators only.
   What a real server adds is not measured: HTTP parsing, daphne's ASGI hop, and the thread hand-off of a sync
   view. By default the database connection is closed before each request (outside the timers), so each request
   opens its own, as Django does with CONN_MAX_AGE=0 (this project's SQLite setting); --keep-connection reuses it.
   Pages are requested round-robin after three warm-up rounds (not counted; the first request's time is shown).
2. Relay. `channels.testing.WebsocketCommunicator` on `mercury.asgi.application` (origin http://localhost and the
   owner's session cookie), connected to a game whose next step is an AI seat opening a Round 2 talk, with
   MERCURY_OFFLINE_TOKEN_DELAY small. The consumer drives the AI turns; the benchmark plays the student's moves
   (passive policy) whenever the game waits for them, until --relay-turns streamed AI turns have been played.
   Timestamps: every model chunk as it reaches the consumer's on_chunk (a wrapper around the on_chunk argument of
   `gateway.complete`), every game.stream message handed to the channel layer (`group_send`), and every frame
   as it leaves (`GameConsumer.game_stream` returning, i.e. after its `send`). Per frame:
   * relay delay = frame out minus arrival of the newest chunk it contains (split at the group_send);
   * server overhead = frame out minus the later of the newest chunk's arrival and the end of the frame interval
     since the turn's previous frame: the relay delay with the coalescing taken out;
   * coalescing wait = frame out minus arrival of the oldest chunk it contains (not in the previous frame).
   A probe also times a no-op `database_sync_to_async` call every 100 ms: consumers share one database thread,
   which a streaming model call must not hold.

Garbage-collector pauses are recorded in both parts (`gc.callbacks`): a full collection of this process takes
hundreds of milliseconds and lands in whichever request or frame is running. --gc-freeze calls gc.freeze() once
everything is set up, to show the figures without those pauses.

See docs/benchmarks.md for the current figures and how they compare with the aims.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import json
import math
import os
import platform
import secrets
import sqlite3
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.test import Client

    from simulations.kinds.negotiation.machine import Step
    from simulations.kinds.negotiation.state import GameState
    from simulations.models import Game, ScenarioVersion

ROOT = Path(__file__).resolve().parent.parent
SCENARIO_FOLDER = "scenarios/mercury"
SCENARIO_SLUG = "mercury"
ROLE = "EU"  # the student's seat in every game
SEED = 5
HOST = "localhost"
AIM_PAGE_MS = 100.0
AIM_RELAY_P99_MS = 20.0
WARMUP = 3


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (no interpolation), as in bench/games.py. With 30 values, p99 is the maximum."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[max(1, math.ceil(pct / 100 * len(ordered))) - 1]


def stats(values_s: Sequence[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values_s]
    return {
        "n": len(ms),
        "p50": percentile(ms, 50),
        "p99": percentile(ms, 99),
        "max": max(ms, default=0.0),
        "mean": sum(ms) / len(ms) if ms else 0.0,
    }


# --- setup ------------------------------------------------------------------------------------------------------


def configure(db: Path, token_delay: float) -> None:
    """Environment first, then Django: settings read these variables at import."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "mercury.settings"
    os.environ["MERCURY_OFFLINE_TOKEN_DELAY"] = str(token_delay)  # only streamed calls wait (the relay part)
    os.environ["MERCURY_SQLITE_PATH"] = str(db)
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("REDIS_URL", None)  # the in-memory channel layer: one process
    os.environ["MERCURY_DEBUG"] = "0"
    os.environ["MERCURY_BROADCAST"] = "1"
    os.environ["MERCURY_ALLOWED_HOSTS"] = f"127.0.0.1,{HOST}"
    # One user posts hundreds of moves a minute here: keep the per-user rate check (its cost is part of a move)
    # but with a limit this benchmark cannot reach.
    os.environ["MERCURY_RATE_MOVES_PER_MINUTE"] = "1000000"
    os.environ.setdefault("MERCURY_SECRET_KEY", "bench-" + secrets.token_hex(16))
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)

    import django

    django.setup()


def prepare() -> tuple[ScenarioVersion, User]:
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from simulations.services.content.scenarios import latest_version, load_scenario

    call_command("migrate", verbosity=0)
    load_scenario(folder=SCENARIO_FOLDER)
    version = latest_version(slug=SCENARIO_SLUG)
    assert version is not None
    owner = User.objects.create_user("bench", password=secrets.token_urlsafe(16))
    return version, owner


class Reached(Exception):
    """Raised from play_game's progress callback to stop headless play at a phase."""


Where = Callable[["GameState", "Step"], bool]


def student_to_act(status: str, *, last_issue: bool = False) -> Where:
    """The game rests in `status` and waits for the student (what the page shows while a student reads it)."""

    def where(state: GameState, step: Step) -> bool:
        if state.status != status or step.kind not in ("human", "advance"):
            return False
        return not last_issue or state.round3.active_issue_index == len(state.round3.issues) - 1

    return where


def next_is_ai_talk(state: GameState, step: Step) -> bool:
    return state.status == "ROUND_2_CONVERSATION_ACTIVE" and step.kind == "ai" and step.purpose == "talk_open"


def new_game(version: ScenarioVersion, owner: User, where: Where | None) -> Game:
    """A new game of the owner, played headless until `where` holds (to the end when None)."""
    from simulations.kinds.negotiation.bots import make_policy
    from simulations.kinds.negotiation.games import state_of, step_of
    from simulations.kinds.negotiation.headless import play_game
    from simulations.services.ledger.turns import create_game

    game = create_game(scenario_version=version, seed=SEED, owner=owner)
    if where is not None and where(state_of(game), step_of(game)):
        return game

    def stop(g: Game, _what: str) -> None:
        if where is not None and where(state_of(g), step_of(g)):
            raise Reached

    try:
        play_game(game_id=game.pk, policy=make_policy("passive", ROLE), on_progress=stop)
    except Reached:
        pass
    else:
        if where is not None:
            raise RuntimeError("the game finished without reaching the phase asked for")
    game.refresh_from_db()
    return game


def settle(gc_freeze: bool) -> None:
    """With --gc-freeze: collect, then move everything alive out of the collector's sight (what a warm server
    could do), so that full collections no longer walk the imported libraries and the games set up so far."""
    if gc_freeze:
        gc.collect()
        gc.freeze()


# --- pages ------------------------------------------------------------------------------------------------------


@dataclass
class PageRun:
    name: str
    url: str
    phase: str
    entries: int  # transcript entries stored for the game (0 for the lobby)
    queries: int  # SQL statements in one request (session and user lookups included)
    kbytes: float
    first_ms: float  # the very first request (templates compiled, caches cold)
    gc_ms_max: float  # the longest garbage-collector time inside one counted request
    request: dict[str, float]
    view: dict[str, float]
    aim_met: bool


@contextmanager
def view_timer(samples: list[float]) -> Iterator[None]:
    """Swap a timer into every URL pattern's callback (what the resolver hands to the handler)."""
    from django.urls import URLPattern, get_resolver

    patched: list[tuple[URLPattern, Callable[..., Any]]] = []
    for pattern in get_resolver().url_patterns:
        if not isinstance(pattern, URLPattern):
            continue
        original = pattern.callback

        def timed(*args: Any, _view: Callable[..., Any] = original, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return _view(*args, **kwargs)
            finally:
                samples.append(time.perf_counter() - started)

        functools.update_wrapper(timed, original)
        patched.append((pattern, original))
        pattern.callback = timed
    try:
        yield
    finally:
        for pattern, original in patched:
            pattern.callback = original


class Pages:
    """Requests one page at a time and keeps both timers' samples per page."""

    def __init__(self, client: Client, *, keep_connection: bool) -> None:
        self.client = client
        self.keep_connection = keep_connection
        self.view_samples: list[float] = []
        self.request: dict[str, list[float]] = {}
        self.view: dict[str, list[float]] = {}
        self.first: dict[str, float] = {}
        self.gc: dict[str, list[float]] = {}  # garbage-collector pauses inside each counted request, summed
        self.gc_pause = 0.0
        self._gc_started = 0.0

    def on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            self.gc_pause += time.perf_counter() - self._gc_started

    def hit(self, name: str, send: Callable[[], Any], *, count: bool = True) -> Any:
        from django.db import connections

        if not self.keep_connection:
            connections.close_all()  # Django closes it at request_finished with CONN_MAX_AGE=0
        before = len(self.view_samples)
        self.gc_pause = 0.0
        started = time.perf_counter()
        response = send()
        elapsed = time.perf_counter() - started
        if response.status_code != 200:
            raise RuntimeError(f"{name}: HTTP {response.status_code}")
        if len(self.view_samples) != before + 1:
            raise RuntimeError(f"{name}: the view timer saw {len(self.view_samples) - before} calls, not 1")
        self.first.setdefault(name, elapsed)
        if count:
            self.request.setdefault(name, []).append(elapsed)
            self.view.setdefault(name, []).append(self.view_samples[-1])
            self.gc.setdefault(name, []).append(self.gc_pause)
        return response


def count_queries(send: Callable[[], Any]) -> tuple[int, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        response = send()
    return len(captured.captured_queries), len(response.content)


def round1_game(version: ScenarioVersion, owner: User) -> Game:
    """A new game in Round 1, the student's role confirmed: the opening statements wait for 'next'."""
    return new_game(version, owner, student_to_act("ROUND_1_OPENING_STATEMENTS"))


def run_pages(
    version: ScenarioVersion, owner: User, *, repeat: int, keep_connection: bool, gc_freeze: bool
) -> list[PageRun]:
    from django.test import Client

    from simulations.kinds.negotiation.games import step_of
    from simulations.models import TranscriptEntry

    phases: list[tuple[str, str, Where | None]] = [
        ("setup", "", student_to_act("ROLE_SELECTION")),
        ("round1", "", student_to_act("ROUND_1_OPENING_STATEMENTS")),
        ("talk", "", student_to_act("ROUND_2_CONVERSATION_ACTIVE")),
        ("debate", "", student_to_act("ISSUE_DEBATE_ROUND_1")),
        ("vote", "", student_to_act("ISSUE_VOTE")),
        ("vote_last", "", student_to_act("ISSUE_VOTE", last_issue=True)),
        ("finished", "", None),
    ]
    games = {name: new_game(version, owner, where) for name, _, where in phases}
    pages: list[tuple[str, str, Game | None]] = [
        ("lobby", "/", None),
        ("setup (no role)", f"/games/{games['setup'].pk}/", games["setup"]),
        ("setup ?role=EU", f"/games/{games['setup'].pk}/?role={ROLE}", games["setup"]),
        ("game, Round 1", f"/games/{games['round1'].pk}/", games["round1"]),
        ("game, Round 2 talk", f"/games/{games['talk'].pk}/", games["talk"]),
        ("game, Round 3 debate", f"/games/{games['debate'].pk}/", games["debate"]),
        ("game, Round 3 vote", f"/games/{games['vote'].pk}/", games["vote"]),
        ("game, vote (last issue)", f"/games/{games['vote_last'].pk}/", games["vote_last"]),
        ("review (finished)", f"/games/{games['finished'].pk}/review/", games["finished"]),
    ]
    move_name = "HTMX move (OPENING_PRESENTED)"
    # Every post advances a game by one opening statement: prepare enough Round 1 games before timing.
    movers: list[Game] = []
    openings = 0
    while openings < repeat + WARMUP + 1:
        game = round1_game(version, owner)
        left = len(game.state["round1"]["speaker_order"]) - game.state["round1"]["cursor"]
        movers.append(game)
        openings += left

    client = Client(HTTP_HOST=HOST)
    client.force_login(owner)
    runner = Pages(client, keep_connection=keep_connection)

    def move_once(count: bool) -> Any:
        while True:
            game = movers[0]
            game.refresh_from_db()
            step = step_of(game)
            if step.kind == "advance" and step.events == ("OPENING_PRESENTED",):
                break
            movers.pop(0)
        data = {"event": "OPENING_PRESENTED", "version": str(game.version)}
        url = f"/games/{game.pk}/move/"
        response = runner.hit(move_name, lambda: client.post(url, data, HTTP_HX_REQUEST="true"), count=count)
        game.refresh_from_db()
        if game.version == int(data["version"]):
            raise RuntimeError(f"the move post did not advance game {game.pk}: {response.content[:200]!r}")
        return response

    sizes: dict[str, tuple[int, int]] = {}
    settle(gc_freeze)
    gc.callbacks.append(runner.on_gc)
    try:
        with view_timer(runner.view_samples):
            for name, url, _ in pages:
                sizes[name] = count_queries(functools.partial(client.get, url))
            for round_number in range(WARMUP + repeat):
                counted = round_number >= WARMUP
                for name, url, _ in pages:
                    runner.hit(name, functools.partial(client.get, url), count=counted)
                move_once(counted)
            sizes[move_name] = count_queries(lambda: move_once(False))
    finally:
        gc.callbacks.remove(runner.on_gc)

    runs: list[PageRun] = []
    for name, url, page_game in [*pages, (move_name, "/games/ID/move/", movers[0])]:
        entries = TranscriptEntry.objects.filter(game=page_game).count() if page_game is not None else 0
        request = stats(runner.request[name])
        runs.append(
            PageRun(
                name=name,
                url=url,
                phase=page_game.phase if page_game is not None else "",
                entries=entries,
                queries=sizes[name][0],
                kbytes=sizes[name][1] / 1024,
                first_ms=runner.first[name] * 1000,
                gc_ms_max=max(runner.gc[name]) * 1000,
                request=request,
                view=stats(runner.view[name]),
                aim_met=request["max"] < AIM_PAGE_MS,
            )
        )
    return runs


# --- relay ------------------------------------------------------------------------------------------------------


@dataclass
class Turn:
    purpose: str
    started: float
    ended: float = 0.0
    chunks: list[str] = field(default_factory=list)
    arrived: list[float] = field(default_factory=list)


@dataclass
class Frame:
    speaker: str
    text: str
    out: float


class Recorder:
    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self.frames: list[Frame] = []
        self.handed: dict[tuple[str, str], list[float]] = {}  # when the relay handed each frame to the layer
        self.purpose = ""
        self.streaming = threading.Event()
        self.gc_pauses: list[tuple[float, float, int]] = []  # start, end, generation
        self._gc_started = 0.0

    def on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            self.gc_pauses.append((self._gc_started, time.perf_counter(), info["generation"]))


@contextmanager
def relay_instrumented(rec: Recorder) -> Iterator[None]:
    """Wrap gateway.complete (its on_chunk), the driver's play_ai_step (the step's purpose), game_stream and
    the channel layer's group_send; restore them afterwards."""
    from channels.layers import get_channel_layer

    from simulations import consumers
    from simulations.ai import gateway
    from simulations.kinds.negotiation import turns as drive  # the negotiation plays each AI step here

    original_complete = gateway.complete
    original_play = drive.play_ai_step
    original_stream = consumers.GameConsumer.game_stream
    layer = get_channel_layer()
    assert layer is not None
    original_group_send = layer.group_send

    def complete(messages: list[dict[str, str]], **kwargs: Any) -> Any:
        on_chunk = kwargs.get("on_chunk")
        if on_chunk is None:
            return original_complete(messages, **kwargs)
        turn = Turn(purpose=rec.purpose, started=time.perf_counter())
        rec.turns.append(turn)

        def timed_chunk(text: str) -> None:
            turn.arrived.append(time.perf_counter())
            turn.chunks.append(text)
            on_chunk(text)

        rec.streaming.set()
        try:
            return original_complete(messages, **(kwargs | {"on_chunk": timed_chunk}))
        finally:
            turn.ended = time.perf_counter()
            rec.streaming.clear()

    def play_ai_step(*, game: Game, step: Step, **kwargs: Any) -> Game:
        rec.purpose = step.purpose or ""
        return original_play(game=game, step=step, **kwargs)

    async def game_stream(self: consumers.GameConsumer, event: dict[str, Any]) -> None:
        await original_stream(self, event)
        rec.frames.append(Frame(speaker=event["speaker"], text=event["text"], out=time.perf_counter()))

    async def group_send(group: str, message: dict[str, Any]) -> None:
        if message.get("type") == "game.stream":
            rec.handed.setdefault((message["speaker"], message["text"]), []).append(time.perf_counter())
        await original_group_send(group, message)

    gateway.complete = complete  # type: ignore[assignment]
    drive.play_ai_step = play_ai_step  # type: ignore[assignment]
    consumers.GameConsumer.game_stream = game_stream  # type: ignore[method-assign]
    layer.group_send = group_send  # type: ignore[method-assign]
    try:
        yield
    finally:
        gateway.complete = original_complete
        drive.play_ai_step = original_play
        consumers.GameConsumer.game_stream = original_stream  # type: ignore[method-assign]
        layer.group_send = original_group_send  # type: ignore[method-assign]


def student_moves(game_id: int, stop: bool) -> str:
    """Off the consumers' database thread: if the game waits for the student, play the passive move (unless
    `stop`). Returns the kind of the step the game waited for."""
    from simulations.kinds.negotiation.bots import make_policy
    from simulations.kinds.negotiation.games import scenario_of_version, state_of, step_of
    from simulations.kinds.negotiation.human_turns import submit_human_event
    from simulations.services.ledger.turns import games_with_scenario

    game: Game = games_with_scenario().get(pk=game_id)
    step = step_of(game)
    if step.kind in ("human", "advance") and not stop:
        event, payload = make_policy("passive", ROLE).decide(
            scenario_of_version(game.scenario), state_of(game), step
        )
        submit_human_event(game=game, event=event, payload=payload)
    return step.kind


async def drive_relay(game_id: int, cookie: str, rec: Recorder, turns: int, timeout: float) -> dict[str, Any]:
    from asgiref.sync import sync_to_async
    from channels.db import database_sync_to_async
    from channels.testing import WebsocketCommunicator

    from mercury.asgi import application

    headers = [(b"origin", f"http://{HOST}".encode()), (b"cookie", f"sessionid={cookie}".encode())]
    comm = WebsocketCommunicator(application, f"/ws/games/{game_id}/", headers=headers)
    connected, _ = await comm.connect()
    if not connected:
        raise RuntimeError("the websocket handshake was refused")
    received = Counter[str]()
    probes: list[
        tuple[float, bool]
    ] = []  # (seconds a no-op database_sync_to_async call took, while streaming)
    done = asyncio.Event()

    async def read() -> None:
        while True:
            frame = await comm.receive_from(timeout=timeout)
            received["stream" if "is speaking" in frame else "update"] += 1

    async def probe() -> None:
        while not done.is_set():
            streaming = rec.streaming.is_set()
            started = time.perf_counter()
            await database_sync_to_async(lambda: None)()
            probes.append((time.perf_counter() - started, streaming))
            await asyncio.sleep(0.1)

    reader, prober = asyncio.create_task(read()), asyncio.create_task(probe())
    started = time.perf_counter()
    moves = sync_to_async(student_moves, thread_sensitive=False)
    try:
        async with asyncio.timeout(timeout):
            while True:
                enough = sum(1 for t in rec.turns if t.ended) >= turns
                kind = await moves(game_id, enough)
                if kind == "done" or (enough and kind in ("human", "advance")):
                    break
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.3)  # the last committed turn's render reaches the page
    finally:
        done.set()
        wall = time.perf_counter() - started
        reader.cancel()
        await prober
        await comm.disconnect()
    return {"received": dict(received), "probes": probes, "wall_s": wall}


@dataclass
class RelayRun:
    token_delay_s: float
    frame_interval_s: float
    turns: int
    turns_by_purpose: dict[str, int]
    chunks: int
    frames: int
    frames_received: int
    unmatched_frames: int
    streaming_s: float
    first_chunk_ms_first_turn: float
    first_chunk: dict[str, float]  # model call start -> first chunk, later turns
    wall_s: float
    frames_per_s: float
    chunks_per_s: float
    chunk_gap_ms: dict[str, float]  # between consecutive chunks of a turn
    chunks_per_frame_mean: float
    relay: dict[str, float]  # frame out - newest chunk in it
    overhead: dict[str, float]  # frame out - max(newest chunk in it, end of the frame interval)
    relay_to_layer: dict[str, float]  # group_send - newest chunk (includes waiting for the interval to end)
    layer_to_out: dict[str, float]  # frame out - group_send (channel layer, dispatch, render, send)
    coalescing: dict[str, float]  # frame out - oldest chunk in it
    min_gap_in_turn_ms: float
    min_gap_across_turns_ms: float
    tail_chunks_never_streamed: int
    tail_ms_p50: float
    db_probe_streaming: dict[str, float]
    db_probe_idle: dict[str, float]
    full_gcs: int  # full (generation 2) collections during the run
    gc_ms_max: float  # the longest collector pause, any generation
    frames_hit_by_full_gc: int  # frames whose wait (newest chunk -> out) overlapped a full collection
    relay_without_full_gc: dict[str, float]
    overhead_without_full_gc: dict[str, float]
    relay_final: dict[str, float]  # frames carrying a turn's last chunk
    relay_not_final: dict[str, float]
    single_chunk_turns: int  # e.g. a seat that passes: its whole answer is one chunk, "PASS"
    aim_met: bool


def analyse(
    rec: Recorder, token_delay: float, wall: float, received: dict[str, int], probes: Any
) -> RelayRun:
    from simulations.services.pages.frame_pacing import FRAME_INTERVAL, FramePacer

    turns = [t for t in rec.turns if t.ended]
    cumulative: list[
        tuple[Turn, str, dict[int, int]]
    ] = []  # each turn, its text, cumulative length -> chunks
    for t in turns:
        lengths: dict[int, int] = {}
        total = 0
        for n, chunk in enumerate(t.chunks, 1):
            total += len(chunk)
            lengths[total] = n
        cumulative.append((t, "".join(t.chunks), lengths))
    relay: list[float] = []
    to_layer: list[float] = []
    to_out: list[float] = []
    overhead: list[float] = []
    gc_hit: list[int] = []  # frames (indexes into relay) whose wait overlapped a full garbage collection
    final: list[int] = []  # frames carrying a turn's last chunk (the model call is finishing meanwhile)
    coalescing: list[float] = []
    per_frame: list[int] = []
    included: dict[int, int] = {}  # chunks of each turn already in a frame
    last_out: dict[int, float] = {}
    pacers: dict[int, FramePacer] = {}  # each turn's pacing as its relay kept it, replayed from the hand-offs
    gaps_in: list[float] = []
    gaps_across: list[float] = []
    unmatched = 0
    previous_out = 0.0
    for frame in sorted(rec.frames, key=lambda f: f.out):
        # The frame's turn: the latest one started before the frame left whose text begins with the frame's
        # (turns can begin alike, so a later turn's text must not claim an earlier turn's frame).
        match = next(
            (
                (i, lengths[len(frame.text)])
                for i, (turn, text, lengths) in reversed(list(enumerate(cumulative)))
                if turn.arrived
                and turn.arrived[0] <= frame.out
                and len(frame.text) in lengths
                and text.startswith(frame.text)
            ),
            None,
        )
        if match is None:
            unmatched += 1
            continue
        i, k = match
        turn = turns[i]
        first_new = included.get(i, 0)
        if k <= first_new:
            unmatched += 1
            continue
        newest, oldest = turn.arrived[k - 1], turn.arrived[first_new]
        relay.append(frame.out - newest)
        coalescing.append(frame.out - oldest)
        per_frame.append(k - first_new)
        # The same text can be sent in several turns: the hand-off is the latest one before the frame left.
        handed = max(
            (h for h in rec.handed.get((frame.speaker, frame.text), []) if h <= frame.out), default=None
        )
        if handed is not None:
            to_layer.append(handed - newest)
            to_out.append(frame.out - handed)
        # What is left once coalescing is taken out: the frame could leave when its newest chunk had arrived and
        # the turn's pacing allowed a frame; anything later is the server's own delay.
        pacer = pacers.setdefault(i, FramePacer())
        ready = newest + pacer.wait(newest)
        overhead.append(frame.out - ready)
        if any(start < frame.out and end > newest and gen == 2 for start, end, gen in rec.gc_pauses):
            gc_hit.append(len(relay) - 1)
        if k == len(turn.chunks):
            final.append(len(relay) - 1)
        if handed is not None:
            pacer.took(handed)
        if i in last_out:
            gaps_in.append(frame.out - last_out[i])
        elif previous_out:
            gaps_across.append(frame.out - previous_out)
        included[i], last_out[i], previous_out = k, frame.out, frame.out
    # Chunks after a turn's last frame are never streamed (the relay is cancelled when the turn commits).
    tails = [
        (len(t.chunks) - included.get(i, 0), t.ended - last_out.get(i, t.started))
        for i, t in enumerate(turns)
    ]
    streamed = [t for t in turns if t.arrived]
    # Streaming time: from a turn's first chunk to the end of its model call (the wait for the first chunk is
    # reported apart: the first streamed call of a process is slow).
    streaming = sum(t.ended - t.arrived[0] for t in streamed)
    first_chunk = [t.arrived[0] - t.started for t in streamed]
    gaps = [b - a for t in turns for a, b in zip(t.arrived, t.arrived[1:], strict=False)]
    chunks = sum(len(t.chunks) for t in turns)
    relay_stats = stats(relay)
    hit, finals = set(gc_hit), set(final)
    return RelayRun(
        token_delay_s=token_delay,
        frame_interval_s=FRAME_INTERVAL,
        turns=len(turns),
        turns_by_purpose=dict(Counter(t.purpose for t in turns)),
        chunks=chunks,
        frames=len(rec.frames),
        frames_received=received.get("stream", 0),
        unmatched_frames=unmatched,
        streaming_s=streaming,
        first_chunk_ms_first_turn=first_chunk[0] * 1000 if first_chunk else 0.0,
        first_chunk=stats(first_chunk[1:]),
        wall_s=wall,
        frames_per_s=len(rec.frames) / streaming if streaming else 0.0,
        chunks_per_s=chunks / streaming if streaming else 0.0,
        chunk_gap_ms=stats(gaps),
        chunks_per_frame_mean=sum(per_frame) / len(per_frame) if per_frame else 0.0,
        relay=relay_stats,
        overhead=stats(overhead),
        relay_to_layer=stats(to_layer),
        layer_to_out=stats(to_out),
        coalescing=stats(coalescing),
        min_gap_in_turn_ms=min(gaps_in, default=0.0) * 1000,
        min_gap_across_turns_ms=min(gaps_across, default=0.0) * 1000,
        tail_chunks_never_streamed=sum(n for n, _ in tails),
        tail_ms_p50=percentile([s for _, s in tails], 50) * 1000,
        db_probe_streaming=stats([s for s, streaming in probes if streaming]),
        db_probe_idle=stats([s for s, streaming in probes if not streaming]),
        full_gcs=sum(1 for _, _, gen in rec.gc_pauses if gen == 2),
        gc_ms_max=max((end - start for start, end, _ in rec.gc_pauses), default=0.0) * 1000,
        frames_hit_by_full_gc=len(gc_hit),
        relay_without_full_gc=stats([d for n, d in enumerate(relay) if n not in hit]),
        overhead_without_full_gc=stats([d for n, d in enumerate(overhead) if n not in hit]),
        relay_final=stats([relay[n] for n in final]),
        relay_not_final=stats([d for n, d in enumerate(relay) if n not in finals]),
        single_chunk_turns=sum(1 for t in turns if len(t.chunks) == 1),
        aim_met=relay_stats["p99"] < AIM_RELAY_P99_MS,
    )


def run_relay(
    version: ScenarioVersion, owner: User, *, turns: int, token_delay: float, gc_freeze: bool
) -> RelayRun:
    from django.conf import settings
    from django.test import Client

    settings.MERCURY_OFFLINE_TOKEN_DELAY = token_delay
    game = new_game(version, owner, next_is_ai_talk)
    client = Client(HTTP_HOST=HOST)
    client.force_login(owner)
    cookie = client.cookies["sessionid"].value
    rec = Recorder()
    timeout = 60 + turns * 10
    settle(gc_freeze)
    gc.callbacks.append(rec.on_gc)
    try:
        with relay_instrumented(rec):
            result = asyncio.run(drive_relay(game.pk, cookie, rec, turns, timeout))
    finally:
        gc.callbacks.remove(rec.on_gc)
    return analyse(rec, token_delay, result["wall_s"], result["received"], result["probes"])


# --- report -----------------------------------------------------------------------------------------------------


@dataclass
class Report:
    repeat: int
    keep_connection: bool
    gc_freeze: bool
    pages: list[PageRun]
    relay: RelayRun | None
    games_owned: int
    python: str
    django: str
    sqlite: str
    cpus: int | None
    platform: str
    loadavg_before: list[float]
    loadavg_after: list[float]


def render(report: Report) -> str:
    def yes(ok: bool) -> str:
        return "met" if ok else "NOT met"

    lines = [
        "Mercury browser benchmark",
        f"  machine     {report.cpus} CPUs, Python {report.python}, Django {report.django}, SQLite {report.sqlite}",
        f"  settings    DEBUG off, SQLite file, in-memory channel layer, human {ROLE} (passive), seed {SEED}"
        + (", gc.freeze() once set up" if report.gc_freeze else ""),
        f"  load        {' '.join(f'{x:.2f}' for x in report.loadavg_before)} before, "
        f"{' '.join(f'{x:.2f}' for x in report.loadavg_after)} after",
        "",
        f"Pages: {report.repeat} requests each after {WARMUP} warm-up rounds; database connection "
        + ("reused" if report.keep_connection else "opened per request"),
        f"  (lobby lists {report.games_owned} games; ms; request = around client.get/post, view = the view call)",
        f"  {'page':<30} {'entries':>7} {'SQL':>4} {'KB':>6} {'first':>7} "
        f"{'req p50':>8} {'req p99':>8} {'req max':>8} {'view p50':>9} {'view p99':>9} {'gc max':>7}",
        "  (gc max: the longest garbage-collector time inside one request, included in its figures)",
    ]
    for p in report.pages:
        lines.append(
            f"  {p.name:<30} {p.entries:7d} {p.queries:4d} {p.kbytes:6.1f} {p.first_ms:7.1f} "
            f"{p.request['p50']:8.2f} {p.request['p99']:8.2f} {p.request['max']:8.2f} "
            f"{p.view['p50']:9.2f} {p.view['p99']:9.2f} {p.gc_ms_max:7.1f}"
        )
    worst = max(report.pages, key=lambda p: p.request["max"])
    lines.append(
        f"  aim < {AIM_PAGE_MS:.0f} ms per page: {yes(all(p.aim_met for p in report.pages))} "
        f"(slowest: {worst.name}, max {worst.request['max']:.1f} ms)"
    )
    r = report.relay
    if r is not None:
        purposes = ", ".join(f"{k} {v}" for k, v in sorted(r.turns_by_purpose.items()))
        lines += [
            "",
            f"Streaming relay: {r.turns} streamed AI turns ({purposes}), token delay {r.token_delay_s * 1000:.0f} ms, "
            f"frame interval {r.frame_interval_s * 1000:.0f} ms",
            f"  chunks {r.chunks} ({r.chunks_per_s:.1f}/s while streaming; gap between chunks p50 "
            f"{r.chunk_gap_ms['p50']:.1f} ms, p99 {r.chunk_gap_ms['p99']:.1f} ms, max {r.chunk_gap_ms['max']:.1f} ms)",
            f"  frames {r.frames} ({r.frames_received} received by the page, {r.unmatched_frames} not matched to chunks)",
            f"  frames per second while streaming {r.frames_per_s:.2f} ({r.streaming_s:.1f} s streaming, "
            f"{r.wall_s:.1f} s wall); {r.chunks_per_frame_mean:.1f} chunks per frame",
            f"  model call to first chunk: {r.first_chunk_ms_first_turn:.0f} ms on the first streamed turn, "
            f"p50 {r.first_chunk['p50']:.1f} ms / max {r.first_chunk['max']:.1f} ms on the others",
            f"  {'ms':<58} {'p50':>7} {'p99':>7} {'max':>7}",
        ]
        for label, s in (
            ("relay delay (frame out - newest chunk in it)", r.relay),
            ("  newest chunk -> group_send (relay task)", r.relay_to_layer),
            ("  group_send -> frame out (layer, dispatch, render)", r.layer_to_out),
            ("  frames not hit by a full GC", r.relay_without_full_gc),
            ("  frames carrying a turn's last chunk", r.relay_final),
            ("  all other frames", r.relay_not_final),
            ("server overhead (frame out - max(newest, interval end))", r.overhead),
            ("  frames not hit by a full GC", r.overhead_without_full_gc),
            ("coalescing wait (frame out - oldest chunk in it)", r.coalescing),
            ("no-op database_sync_to_async while a turn streams", r.db_probe_streaming),
            ("no-op database_sync_to_async otherwise", r.db_probe_idle),
        ):
            lines.append(f"  {label:<58} {s['p50']:7.2f} {s['p99']:7.2f} {s['max']:7.2f}   (n={s['n']:.0f})")
        lines += [
            f"  shortest gap between frames: {r.min_gap_in_turn_ms:.1f} ms within a turn, "
            f"{r.min_gap_across_turns_ms:.1f} ms across turns",
            f"  turns streamed as a single chunk (a seat passing): {r.single_chunk_turns}",
            f"  chunks never streamed (arrived after a turn's last frame): {r.tail_chunks_never_streamed}, "
            f"last frame to end of turn p50 {r.tail_ms_p50:.0f} ms",
            f"  garbage collector: {r.full_gcs} full collections, longest pause {r.gc_ms_max:.0f} ms; "
            f"{r.frames_hit_by_full_gc} frames waited through a full collection",
            f"  aim relay p99 < {AIM_RELAY_P99_MS:.0f} ms: {yes(r.aim_met)}",
        ]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=30, help="timed requests per page (default 30)")
    parser.add_argument(
        "--relay-turns",
        type=int,
        default=30,
        help="streamed AI turns in the relay part (0: skip it; default 30)",
    )
    parser.add_argument(
        "--token-delay", type=float, default=0.01, help="offline model's delay per chunk, s (default 0.01)"
    )
    parser.add_argument(
        "--keep-connection", action="store_true", help="reuse one database connection for every request"
    )
    parser.add_argument(
        "--gc-freeze", action="store_true", help="gc.freeze() once set up (an experiment on GC pauses)"
    )
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mercury-bench-web-") as folder:
        configure(Path(folder) / "bench.sqlite3", args.token_delay)
        import django
        from django.db import connections

        from simulations.models import Game

        try:
            loadavg_before = list(os.getloadavg())
            version, owner = prepare()
            pages = run_pages(
                version,
                owner,
                repeat=args.repeat,
                keep_connection=args.keep_connection,
                gc_freeze=args.gc_freeze,
            )
            games_owned = Game.objects.filter(owner=owner).count()
            relay = (
                run_relay(
                    version,
                    owner,
                    turns=args.relay_turns,
                    token_delay=args.token_delay,
                    gc_freeze=args.gc_freeze,
                )
                if args.relay_turns
                else None
            )
        finally:
            connections.close_all()
    report = Report(
        repeat=args.repeat,
        keep_connection=args.keep_connection,
        gc_freeze=args.gc_freeze,
        pages=pages,
        relay=relay,
        games_owned=games_owned,
        python=platform.python_version(),
        django=django.get_version(),
        sqlite=sqlite3.sqlite_version,
        cpus=os.cpu_count(),
        platform=platform.platform(),
        loadavg_before=loadavg_before,
        loadavg_after=list(os.getloadavg()),
    )
    print(render(report))
    if args.json:
        print(json.dumps(asdict(report), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
