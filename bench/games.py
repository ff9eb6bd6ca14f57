"""Whole-game benchmark: play headless games on a fresh SQLite file and report where the time goes.

    .venv/bin/python bench/games.py [--games N] [--role ROLE] [--human passive|advocate] [--db PATH] [--json]

Each game is created with `create_game` and played to REVIEW by `play_game` with a scripted human and the built-in
offline model (no network, no typing delay). One warm-up game runs first and is not counted: it pays litellm's
import and the first parse of the scenario. Measured:

* wall time per game (create_game + play_game), hence games per second;
* server time per committed turn: every `commit_event` and `create_game` call is timed (each is one transaction),
  reported as p50/p95/p99/max;
* the share of a game's wall time spent committing turns (split into the engine and the row writes), inside
  `gateway.complete` (the model call), preparing AI turns (context queries, prompts) and in the scripted human's
  `decide`; the rest is the play loop itself (reading steps and state, resume). Garbage-collector pauses are timed
  too, since they land inside whichever call is running.

Timers are swapped into the module attributes the play loop calls (see `instrumented`), and every game checks that
the number of timed transactions equals the game's version, so a refactor that bypasses a timer fails loudly.
Django runs with DEBUG off unless --debug is given (DEBUG on records every SQL statement).

See docs/benchmarks.md for the figures and how they compare with the aims.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib
import json
import math
import os
import platform
import secrets
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

if TYPE_CHECKING:
    from simulations.kinds.negotiation.bots import Decision, Policy
    from simulations.kinds.negotiation.machine import Step
    from simulations.kinds.negotiation.scenario import Scenario
    from simulations.kinds.negotiation.state import GameState
    from simulations.models import ScenarioVersion

ROOT = Path(__file__).resolve().parent.parent
SCENARIO_FOLDER = "scenarios/mercury"
SCENARIO_SLUG = "mercury"
AIM_GAME_S = 1.0
AIM_P99_MS = 5.0

P = ParamSpec("P")
R = TypeVar("R")

# Buckets of time inside a game. They never nest in one another, so their sum is at most the wall time.
COMMIT, CREATE, MODEL, CONTEXT, POLICY = "commit", "create", "model", "context", "policy"
# Parts of a committed turn (inside COMMIT and CREATE): the engine's transitions, and writing their rows.
ENGINE, WRITE = "engine", "write"
PARTS_LABELS = {
    ENGINE: "of which engine (the negotiation's platform.run)",
    WRITE: "of which row writes (turns._write)",
}
BUCKET_LABELS = {
    COMMIT: "committing turns (commit_event)",
    CREATE: "creating the game (create_game)",
    MODEL: "model calls (gateway.complete)",
    CONTEXT: "AI turn preparation (context, prompts)",
    POLICY: "scripted human (policy.decide)",
}


class Clock:
    """Collects the duration of every call to a wrapped function, by bucket."""

    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = defaultdict(list)
        # Committed turns by event name (the `event` keyword of commit_event; create_game counts as NEW_GAME).
        self.turns_by_event: dict[str, list[float]] = defaultdict(list)

    def wrap(self, bucket: str, fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def timed(*args: P.args, **kwargs: P.kwargs) -> R:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - started
                self.samples[bucket].append(elapsed)
                if bucket in (COMMIT, CREATE):
                    self.turns_by_event[str(kwargs.get("event", "NEW_GAME"))].append(elapsed)

        return timed

    def total(self, bucket: str) -> float:
        return sum(self.samples[bucket])

    def clear(self) -> None:
        self.samples.clear()
        self.turns_by_event.clear()


class TimedPolicy:
    """A policy whose decisions are timed (the scripted human stands in for a browser, not for the server)."""

    def __init__(self, inner: Policy, clock: Clock) -> None:
        self.name = inner.name
        self._decide = clock.wrap(POLICY, inner.decide)

    def decide(self, scenario: Scenario, state: GameState, step: Step) -> Decision:
        return self._decide(scenario, state, step)


@contextmanager
def gc_watched(clock: Clock) -> Iterator[None]:
    """Time the garbage collector's pauses (they land inside whatever call is running, turns included)."""
    started = [0.0]

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            clock.samples[f"gc{info['generation']}"].append(time.perf_counter() - started[0])

    gc.callbacks.append(callback)
    try:
        yield
    finally:
        gc.callbacks.remove(callback)


# What is timed: (module that defines the function, its name, bucket). Required hooks must exist; the optional
# ones are private helpers that may be renamed or moved, and are timed when present.
REQUIRED_HOOKS = [
    ("simulations.services.ledger.turns", "commit_event", COMMIT),
    ("simulations.services.ledger.turns", "create_game", CREATE),
    ("simulations.ai.gateway", "complete", MODEL),
]
OPTIONAL_HOOKS = [
    ("simulations.kinds.negotiation.platform", "run", ENGINE),
    ("simulations.services.ledger.turns", "_write", WRITE),
    ("simulations.kinds.negotiation.prompts", "build_prompt", CONTEXT),
    ("simulations.kinds.negotiation.prompts", "build_summary_prompt", CONTEXT),
    ("simulations.kinds.negotiation.turns", "seen_entries", CONTEXT),
    ("simulations.kinds.negotiation.turns", "_entries", CONTEXT),
    ("simulations.kinds.negotiation.turns", "_recent_changes", CONTEXT),
    ("simulations.services.play.budget", "check_budget", CONTEXT),
    ("simulations.kinds.negotiation.turns", "debrief_facts", CONTEXT),
    ("simulations.kinds.negotiation.debrief", "debrief_facts", CONTEXT),
]


@contextmanager
def instrumented(clock: Clock) -> Iterator[list[str]]:
    """Swap timed wrappers into every module attribute bound to a hooked function; restore them afterwards.

    Callers import by name (play.py, ai_turns.py and human_turns.py do `from .turns import commit_event`), so
    patching `turns.commit_event` alone would miss them: each module of the project holding the same function
    object gets the wrapper. `gateway.complete` is called through the module, so it is patched there.
    Yields the patched attributes, as "module.name".
    """
    import simulations.kinds.negotiation.headless  # noqa: F401 - loads every module of the play loop before the scan

    originals: dict[int, tuple[Callable[..., Any], str]] = {}
    for module_name, name, bucket in REQUIRED_HOOKS + OPTIONAL_HOOKS:
        try:
            fn = getattr(importlib.import_module(module_name), name, None)
        except ImportError:
            fn = None
        if not callable(fn):
            if (module_name, name, bucket) in REQUIRED_HOOKS:
                raise SystemExit(
                    f"cannot time {module_name}.{name}: it no longer exists; update bench/games.py"
                )
            continue
        originals.setdefault(id(fn), (fn, bucket))
    patched: list[tuple[ModuleType, str, Any]] = []
    for fn, bucket in originals.values():
        timed = clock.wrap(bucket, fn)
        for module in list(sys.modules.values()):
            if not isinstance(module, ModuleType) or not module.__name__.startswith("simulations"):
                continue
            for name in [n for n, value in vars(module).items() if value is fn]:
                patched.append((module, name, fn))
                setattr(module, name, timed)
    try:
        yield sorted(f"{module.__name__}.{name}" for module, name, _ in patched)
    finally:
        for module, name, original in patched:
            setattr(module, name, original)


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (no interpolation): the smallest value with at least pct % of values at or below."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


@dataclass
class GameRun:
    seed: int
    role: str
    wall_s: float
    turns: int
    model_calls: int


@dataclass
class Report:
    games: int
    human: str
    roles: list[str]
    database: str
    fresh_database: bool
    debug: bool
    gc_freeze: bool
    warmup_s: float
    total_s: float
    games_per_s: float
    game_ms_mean: float
    game_ms_p50: float
    game_ms_max: float
    committed_turns: int
    turns_per_game: float
    model_calls: int
    turn_ms_p50: float
    turn_ms_p95: float
    turn_ms_p99: float
    turn_ms_max: float
    turn_ms_mean: float
    commit_event_ms_p99: float
    create_game_ms_p99: float
    share: dict[str, float]
    by_event: dict[str, dict[str, float]]
    gc_full_collections: int
    gc_ms_total: float
    gc_ms_max: float
    loadavg_before: list[float]
    loadavg_after: list[float]
    aim_game_met: bool
    aim_p99_met: bool
    python: str
    revision: str
    hooks: list[str]
    sqlite: str
    cpus: int | None
    platform: str


def revision() -> str:
    """The checked-out commit (read-only; uncommitted edits are not reflected)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def configure(db: Path, *, debug: bool) -> None:
    """Environment first, then Django: settings read these variables at import."""
    # MERCURY_BENCH_LIBRARY_WAY: the library's way in place of the modules it names (bench/library_way.py).
    way = os.environ.get("MERCURY_BENCH_LIBRARY_WAY")
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.library_way" if way else "mercury.settings"
    os.environ["MERCURY_OFFLINE_TOKEN_DELAY"] = "0"
    os.environ["MERCURY_SQLITE_PATH"] = str(db)
    os.environ.pop("DATABASE_URL", None)  # this benchmark is defined on SQLite
    if not debug:
        # DEBUG on makes Django record every SQL statement: a development server's cost, not production's.
        os.environ["MERCURY_DEBUG"] = "0"
        os.environ.setdefault("MERCURY_SECRET_KEY", "bench-" + secrets.token_hex(16))
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)

    import django

    django.setup()
    if way:
        from bench import library_way

        library_way.apply()


def prepare() -> ScenarioVersion:
    from django.core.management import call_command

    from simulations.services.content.scenarios import latest_version, load_scenario

    call_command("migrate", verbosity=0)
    load_scenario(folder=SCENARIO_FOLDER)
    version = latest_version(slug=SCENARIO_SLUG)
    assert version is not None
    return version


def play_one(version: ScenarioVersion, *, seed: int, role: str, human: str, clock: Clock) -> GameRun:
    from simulations.kinds.negotiation.bots import make_policy
    from simulations.kinds.negotiation.headless import play_game
    from simulations.services.ledger import turns

    policy = TimedPolicy(make_policy(human, role), clock)
    counted_before = len(clock.samples[COMMIT]) + len(clock.samples[CREATE])
    calls_before = len(clock.samples[MODEL])
    started = time.perf_counter()
    game = turns.create_game(scenario_version=version, seed=seed)
    game = play_game(game_id=game.pk, policy=policy)
    wall = time.perf_counter() - started
    if game.phase != "REVIEW":
        raise RuntimeError(f"game {game.pk} (seed {seed}, {role}) stopped in {game.phase}")
    counted = len(clock.samples[COMMIT]) + len(clock.samples[CREATE]) - counted_before
    if counted != game.version:  # every committed turn bumps the version once
        raise RuntimeError(
            f"timed {counted} committed turns but game {game.pk} has version {game.version}: some caller of "
            "commit_event escaped the timer; update the hooks in bench/games.py"
        )
    return GameRun(
        seed=seed, role=role, wall_s=wall, turns=counted, model_calls=len(clock.samples[MODEL]) - calls_before
    )


def run(args: argparse.Namespace, db: Path, fresh: bool) -> tuple[Report, list[GameRun]]:
    configure(db, debug=args.debug)
    from django.db import connections

    from simulations.kinds.negotiation.games import scenario_of_version

    try:
        version = prepare()
        all_roles = [r.id for r in scenario_of_version(version).roles]
        if args.role and args.role not in all_roles:
            raise SystemExit(f"unknown role {args.role!r}: choose one of {', '.join(all_roles)}")
        roles = [args.role] if args.role else all_roles
        clock = Clock()
        with instrumented(clock) as hooks, gc_watched(clock):
            warmup = play_one(version, seed=0, role=roles[0], human=args.human, clock=clock)
            if args.gc_freeze:
                # What a server could do once warm: move everything alive now out of the collector's sight.
                gc.collect()
                gc.freeze()
            clock.clear()
            loadavg_before = list(os.getloadavg())
            runs = [
                play_one(
                    version, seed=seed, role=roles[(seed - 1) % len(roles)], human=args.human, clock=clock
                )
                for seed in range(1, args.games + 1)
            ]
    finally:
        connections.close_all()
    return summarise(args, loadavg_before, hooks, db, fresh, clock, warmup, runs, roles), runs


def summarise(
    args: argparse.Namespace,
    loadavg_before: list[float],
    hooks: list[str],
    db: Path,
    fresh: bool,
    clock: Clock,
    warmup: GameRun,
    runs: list[GameRun],
    roles: list[str],
) -> Report:
    total = sum(r.wall_s for r in runs)
    walls_ms = [r.wall_s * 1000 for r in runs]
    turns_ms = [s * 1000 for s in clock.samples[COMMIT] + clock.samples[CREATE]]
    share = {bucket: clock.total(bucket) / total for bucket in BUCKET_LABELS}
    share["other"] = max(0.0, 1.0 - sum(share.values()))
    share |= {part: clock.total(part) / total for part in PARTS_LABELS}
    p99 = percentile(turns_ms, 99)
    gc_pauses = clock.samples["gc0"] + clock.samples["gc1"] + clock.samples["gc2"]
    return Report(
        games=len(runs),
        human=args.human,
        roles=roles,
        database=str(db),
        fresh_database=fresh,
        debug=args.debug,
        gc_freeze=args.gc_freeze,
        warmup_s=warmup.wall_s,
        total_s=total,
        games_per_s=len(runs) / total,
        game_ms_mean=total * 1000 / len(runs),
        game_ms_p50=percentile(walls_ms, 50),
        game_ms_max=max(walls_ms),
        committed_turns=len(turns_ms),
        turns_per_game=len(turns_ms) / len(runs),
        model_calls=len(clock.samples[MODEL]),
        turn_ms_p50=percentile(turns_ms, 50),
        turn_ms_p95=percentile(turns_ms, 95),
        turn_ms_p99=p99,
        turn_ms_max=max(turns_ms),
        turn_ms_mean=sum(turns_ms) / len(turns_ms),
        commit_event_ms_p99=percentile([s * 1000 for s in clock.samples[COMMIT]], 99),
        create_game_ms_p99=percentile([s * 1000 for s in clock.samples[CREATE]], 99),
        share=share,
        by_event={
            event: {
                "n": len(values),
                "mean_ms": sum(values) * 1000 / len(values),
                "p99_ms": percentile(values, 99) * 1000,
                "max_ms": max(values) * 1000,
            }
            for event, values in sorted(clock.turns_by_event.items())
        },
        gc_full_collections=len(clock.samples["gc2"]),
        gc_ms_total=sum(gc_pauses) * 1000,
        gc_ms_max=max(gc_pauses, default=0.0) * 1000,
        loadavg_before=loadavg_before,
        loadavg_after=list(os.getloadavg()),
        aim_game_met=max(walls_ms) < AIM_GAME_S * 1000,
        aim_p99_met=p99 < AIM_P99_MS,
        python=platform.python_version(),
        revision=revision(),
        hooks=hooks,
        sqlite=sqlite3.sqlite_version,
        cpus=os.cpu_count(),
        platform=platform.platform(),
    )


def render(report: Report, runs: list[GameRun], *, per_game: bool) -> str:
    def yes(ok: bool) -> str:
        return "met" if ok else "NOT met"

    roles = report.roles[0] if len(report.roles) == 1 else f"cycling {', '.join(report.roles)}"
    lines = [
        "Mercury whole-game benchmark",
        f"  database        SQLite {report.sqlite}, {report.database}{' (fresh)' if report.fresh_database else ''}",
        f"  machine         {report.cpus} CPUs, Python {report.python}, {report.platform}",
        f"  code            commit {report.revision} (plus any uncommitted edits in the working tree)",
        f"  games           {report.games} (seeds 1..{report.games}), human {report.human}, roles {roles}",
        f"  settings        DEBUG {'on' if report.debug else 'off'}, offline model, token delay 0"
        + (", gc.freeze() after warm-up" if report.gc_freeze else ""),
        f"  warm-up         1 game, {report.warmup_s * 1000:.0f} ms (not counted)",
        f"  load average    {' '.join(f'{x:.2f}' for x in report.loadavg_before)} before, "
        f"{' '.join(f'{x:.2f}' for x in report.loadavg_after)} after (1/5/15 min; other work competes for CPU)",
        "",
        "Whole games",
        f"  games per second            {report.games_per_s:8.2f}",
        f"  wall per game, mean         {report.game_ms_mean:8.1f} ms",
        f"  wall per game, p50          {report.game_ms_p50:8.1f} ms",
        f"  wall per game, max          {report.game_ms_max:8.1f} ms   aim < {AIM_GAME_S * 1000:.0f} ms: "
        + yes(report.aim_game_met),
        f"  committed turns             {report.committed_turns:8d}      ({report.turns_per_game:.1f} per game)",
        f"  model calls                 {report.model_calls:8d}      ({report.model_calls / report.games:.1f} per game)",
        "",
        "Server time per committed turn (commit_event + create_game, one transaction each)",
        f"  p50 {report.turn_ms_p50:6.2f} ms   p95 {report.turn_ms_p95:6.2f} ms   "
        f"p99 {report.turn_ms_p99:6.2f} ms   max {report.turn_ms_max:6.2f} ms   mean {report.turn_ms_mean:6.2f} ms",
        f"  p99 aim < {AIM_P99_MS:.0f} ms: {yes(report.aim_p99_met)}   "
        f"(commit_event p99 {report.commit_event_ms_p99:.2f} ms, create_game p99 {report.create_game_ms_p99:.2f} ms)",
        "",
        "Where a game's wall time goes",
    ]
    rows = [*BUCKET_LABELS.items(), ("other", "other (play loop: steps, state, resume)")]
    rows += [(part, "  " + label) for part, label in PARTS_LABELS.items()]
    for bucket, label in rows:
        ms = report.share[bucket] * report.game_ms_mean
        lines.append(f"  {label:<40} {report.share[bucket] * 100:5.1f} %  {ms:7.1f} ms per game")
    lines.append(
        f"  garbage collector: {report.gc_ms_total / report.games:.1f} ms per game, longest pause "
        f"{report.gc_ms_max:.1f} ms, {report.gc_full_collections} full collections (included in the rows above)"
    )
    lines += [
        "",
        "Committed turns by event (the slowest five by p99)",
        "  event                          n   mean ms    p99 ms    max ms",
    ]
    slowest = sorted(report.by_event.items(), key=lambda item: -item[1]["p99_ms"])[:5]
    for event, stats in slowest:
        lines.append(
            f"  {event:<26} {stats['n']:5.0f} {stats['mean_ms']:9.2f} {stats['p99_ms']:9.2f} {stats['max_ms']:9.2f}"
        )
    if per_game:
        lines += ["", "Per game", "  seed  role   turns  model calls   wall ms"]
        lines += [
            f"  {r.seed:4d}  {r.role:<5} {r.turns:6d} {r.model_calls:12d} {r.wall_s * 1000:9.1f}"
            for r in runs
        ]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=20, help="measured games, seeds 1..N (default 20)")
    parser.add_argument(
        "--role", help="the human's seat for every game (default: cycle through all the scenario's roles)"
    )
    parser.add_argument("--human", choices=["passive", "advocate"], default="passive")
    parser.add_argument(
        "--db", help="SQLite file to use (default: a fresh temporary file, removed afterwards)"
    )
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    parser.add_argument("--per-game", action="store_true", help="also list every game")
    parser.add_argument(
        "--gc-freeze", action="store_true", help="gc.freeze() after the warm-up (an experiment on GC pauses)"
    )
    parser.add_argument(
        "--debug", action="store_true", help="leave DEBUG on (Django then records every SQL statement)"
    )
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with ExitStack() as stack:
        if args.db:
            db = Path(args.db).resolve()
            fresh = not db.exists()
        else:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="mercury-bench-"))
            db, fresh = Path(folder) / "bench.sqlite3", True
        report, runs = run(args, db, fresh)
    print(render(report, runs, per_game=args.per_game))
    if args.json:
        print(json.dumps(asdict(report), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
