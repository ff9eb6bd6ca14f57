"""Parity: the same games played by two versions of the code export the same files, for every kind.

A change that must not alter a game (a refactoring of the kind contract, a move of code) runs this before
merging: it plays the same spread of games with the offline model in a checkout of each version, each side in
its own SQLite databases, and compares the exports with ids and wall-clock times left out (issue #65: "the
same seeds replay the same games word for word").

    .venv/bin/python scripts/parity.py compare --before main                 # every kind, the default spread
    .venv/bin/python scripts/parity.py compare --before 3e20762 --kinds roleplay,social_feed --seeds 1-2
    .venv/bin/python scripts/parity.py dump --ref 3e20762 --out /tmp/parity-3e20762   # one side, kept
    .venv/bin/python scripts/parity.py compare --before-dump /tmp/parity-3e20762     # ... against the tree
    .venv/bin/python scripts/parity.py compare --before main --kinds negotiation --scenarios mercury \\
        --seeds 1-18                                                           # the 324 Mercury games

What is played (`plan`, below): every scenario each registered kind ships (`scenarios/`), each with its
variants, played headless by its bots:
- negotiation: every seat x student bot (passive, advocate) of each scenario (Mercury 18, Plastics 12);
- deliberation: every sample x seat (watching, the proposer, each member), the seat played by the offline
  persona;
- message_lab: each brief with the scenario's defaults and with a smaller, sequential (parallel=1) panel;
- roleplay: every scenario x student bot (seeker, quitter);
- social_feed: the scenario's own run (50 rounds, 200 generated agents), the listed agents alone checkpointing
  every round, and 500 agents without the reasoner.
`--spread full` (the default) plays every variant with every seed of `--seeds` (default 1-5: 345 games, 2.5 to
4 minutes a side with two jobs on two cores); `--spread rotate` plays each variant once, the seeds taken in
turn (and every seed at least once: 73 games with the default seeds, half a minute).

Each side is played through the command line alone, so the contract between the platform and its kinds may
change freely between the two versions: a worker process per job (`--jobs`), with the checkout first on the
import path and a database of its own, runs `migrate`, `load_scenario` for each entry of the checkout's
`scenarios/`, then for each game `play` (`--scenario`, `--seed`, `--role`, `--human`, `--option`) and
`export_game`, through `call_command`. The plan reads only the stored scenarios (`ScenarioVersion.slug`,
`.kind`, `.document`).

`--before`/`--after` take a git ref (checked out in a temporary `git worktree`, removed afterwards), "." for
the working tree or the path of another checkout; `--before-dump`/`--after-dump` reuse a side written earlier
by `dump` (or kept by `--keep DIR`). The exports are compared as JSON with the game's id left out and every
whole ISO-8601 date-time value blanked (the game's `created_at`/`finished_at`, a social feed's `started_at`,
its rounds' and ROUNDS_PLAYED events' `at`, its checkpoint's `timestamp`); nothing else is ignored. Exit
status 0 only when every game of the plan matches (a game one side did not play, or failed to play, does not);
otherwise each game that differs is named with its first differing field. A difference a change documents (a
format change) goes in DOCUMENTED_CHANGES below, with a line in the export format's section of
docs/architecture.md.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = "manifest.json"
# Whole ISO-8601 date-times: wall-clock values that differ between any two plays of one game.
ISO_DATETIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)?")
TIME = "<time>"
# The environment of a side: the offline model without token delays, nothing shared with another process.
UNSET = (
    "MERCURY_MODEL", "MERCURY_JUDGE_MODEL", "MERCURY_MODEL_API_BASE", "MERCURY_MODEL_KWARGS", "REDIS_URL",
    "MERCURY_CACHE_URL", "DATABASE_URL", "MERCURY_OFFLINE_CALL_LATENCY", "MERCURY_SCENARIO_DIR",
)  # fmt: skip
# Documented format changes between the two sides: each maps a "before" export onto the "after" layout.
# Empty while the export format is unchanged.
DOCUMENTED_CHANGES: list[Callable[[dict[str, Any]], dict[str, Any]]] = []

# The spread's options not given: a saved side's (`--before-dump`), else these.
SPREAD_DEFAULTS = {"seeds": "1-5", "spread": "full", "kinds": None, "scenarios": None}
Game = dict[str, Any]  # {"name", "kind", "scenario", "seed", "role", "human", "options": ["KEY=VALUE", ...]}


# --- the plan: which games a side plays ---------------------------------------------------------------------


def _seeds(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        first, _, last = part.strip().partition("-")
        out += list(range(int(first), int(last or first) + 1))
    return out


def _variants(kind: str, document: dict[str, Any]) -> list[tuple[str | None, str | None, list[str]]]:
    """(role, human, options) of each variant of a scenario of `kind`, read from its stored document."""
    if kind == "negotiation":
        return [(r["id"], p, []) for p in ("passive", "advocate") for r in document["roles"]]
    if kind == "deliberation":
        members = [p["id"] for p in document["personas"] if p["id"] != "chair"]  # the proposer first
        return [(seat, None, [f"sample={s['id']}"]) for s in document["samples"] for seat in (None, *members)]
    if kind == "message_lab":
        ids = [p["id"] for p in document["personas"] if p["id"] not in ("moderator", "evaluator")]
        small = ["rounds=3", "gates=2", "parallel=1", f"participants={','.join(ids[-3:])}"]
        return [
            (None, None, [f"brief={b['id']}", *extra]) for extra in ([], small) for b in document["briefs"]
        ]
    if kind == "roleplay":
        return [(None, bot, []) for bot in ("seeker", "quitter")]
    if kind == "social_feed":
        return [
            (None, None, []),
            (None, None, ["agents=0", "max_rounds=8", "checkpoint_frequency=1"]),
            (None, None, ["agents=500", "max_rounds=10", "reasoner_enabled=no"]),
        ]
    return [(None, None, [])]  # a kind this script does not know yet: its default bot and options


def _name(kind: str, slug: str, seed: int, role: str | None, human: str | None, options: list[str]) -> str:
    parts = [f"seed{seed:02d}", role or "-", human or "-", *options]
    return f"{kind}/{slug}/" + re.sub(r"[^A-Za-z0-9_.,=-]", "_", "_".join(parts))


def plan(scenarios: Iterable[tuple[str, str, dict[str, Any]]], args: argparse.Namespace) -> list[Game]:
    """The games of the spread, from the stored scenarios (slug, kind, document) in their loading order."""
    seeds = _seeds(args.seeds)
    kinds = args.kinds.split(",") if args.kinds else None
    slugs = args.scenarios.split(",") if args.scenarios else None
    games: list[Game] = []
    for slug, kind, document in scenarios:
        if (kinds and kind not in kinds) or (slugs and slug not in slugs):
            continue
        variants = _variants(kind, document)
        if args.spread == "full":
            pairs = [(v, s) for v in variants for s in seeds]
        else:
            pairs = [
                (variants[n % len(variants)], seeds[n % len(seeds)])
                for n in range(max(len(variants), len(seeds)))
            ]
        for (role, human, options), seed in pairs:
            name = _name(kind, slug, seed, role, human, options)
            games.append({"name": name, "kind": kind, "scenario": slug, "seed": seed, "role": role,
                          "human": human, "options": options})  # fmt: skip
    return games


# --- a worker: plays games with the code of the checkout on its import path ---------------------------------


def normalised(export: dict[str, Any]) -> dict[str, Any]:
    """The export without what differs between any two plays of one game: the game's id, wall-clock times."""

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, str) and ISO_DATETIME.fullmatch(value):
            return TIME
        return value

    data: dict[str, Any] = clean(export)
    data.get("game", {}).pop("id", None)
    return data


def _play_one(call_command: Callable[..., Any], game: Game) -> dict[str, Any]:
    """Play one game through `manage.py play`, export it through `manage.py export_game`."""
    from io import StringIO

    from django.core.management.base import CommandError

    out, err = StringIO(), StringIO()
    argv = ["--quiet", "--scenario", game["scenario"], "--seed", str(game["seed"])]
    argv += ["--role", game["role"]] if game["role"] else []
    argv += ["--human", game["human"]] if game["human"] else []
    for option in game["options"]:
        argv += ["--option", option]
    try:
        call_command("play", *argv, stdout=out, stderr=err)
    except CommandError as exc:
        return {"parity_error": f"play {' '.join(argv)}: {exc}", "stdout": out.getvalue()[-2000:]}
    except Exception as exc:  # a crash of this game: recorded, and the next game is played
        trace = traceback.format_exc()[-3000:]
        return {"parity_error": f"play {' '.join(argv)} crashed: {exc!r}", "traceback": trace}
    lines = [line for line in out.getvalue().splitlines() if line.startswith("{")]
    if not lines:
        return {
            "parity_error": f"play {' '.join(argv)} printed no JSON line",
            "stdout": out.getvalue()[-2000:],
        }
    game_id = json.loads(lines[-1])["game_id"]
    exported = StringIO()
    call_command("export_game", str(game_id), stdout=exported)
    return normalised(json.loads(exported.getvalue()))


def worker(args: argparse.Namespace) -> int:
    """Set up a database, say the plan, then play each game named on stdin; reply on the original stdout."""
    _spread_defaults(args, [])
    reply = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything else printed goes to the log, never into the replies
    tree = Path(args.tree).resolve()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mercury.settings")
    import django

    django.setup()
    import simulations

    where = Path(simulations.__file__).resolve()
    if tree not in where.parents:
        raise SystemExit(f"the code under test is {where}, not the checkout {tree}")
    from django.conf import settings

    database = settings.DATABASES["default"]
    if Path(str(database.get("NAME"))).resolve() != Path(args.db).resolve():
        raise SystemExit(
            f"this checkout's database is {database.get('NAME')}, not {args.db}: refusing to play"
        )
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    for entry in sorted((tree / "scenarios").iterdir()):
        if entry.is_dir() or entry.suffix in (".yaml", ".yml", ".json"):
            call_command("load_scenario", str(entry), stdout=sys.stderr)
    from simulations.models import ScenarioVersion

    stored = [(v.slug, v.kind, v.document) for v in ScenarioVersion.objects.order_by("pk")]
    registered = list(settings.MERCURY_KINDS)
    reply.write(json.dumps({"plan": plan(stored, args), "kinds": registered}) + "\n")
    out = Path(args.out)
    for line in sys.stdin:
        game: Game = json.loads(line)
        started = time.perf_counter()
        data = _play_one(call_command, game)
        path = out / f"{game['name']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False), encoding="utf-8")
        error = data.get("parity_error")
        reply.write(json.dumps({"seconds": round(time.perf_counter() - started, 2), "error": error}) + "\n")
    return 0


# --- a side: a checkout, its workers, its dump --------------------------------------------------------------


def _spread_args(args: argparse.Namespace) -> list[str]:
    argv = ["--seeds", args.seeds, "--spread", args.spread]
    argv += ["--kinds", args.kinds] if args.kinds else []
    argv += ["--scenarios", args.scenarios] if args.scenarios else []
    return argv


def _start_worker(
    tree: Path, out: Path, db: Path, log: Path, args: argparse.Namespace
) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env |= {
        "PYTHONPATH": str(tree),
        "DJANGO_SETTINGS_MODULE": "mercury.settings",
        # The embedded SQLite set-up (as `make serve`: WAL, IMMEDIATE transactions, a 20 s busy time-out), not
        # a DATABASE_URL, whose SQLite has none of them and fails a parallel stage with "database is locked".
        "MERCURY_SQLITE_PATH": str(db),
        "MERCURY_OFFLINE_TOKEN_DELAY": "0",
        "MERCURY_LOG_LEVEL": "WARNING",
    }
    cmd = [sys.executable, str(Path(__file__).resolve()), "worker", "--tree", str(tree), "--out", str(out)]
    cmd += ["--db", str(db)]
    with log.open("w", encoding="utf-8") as stderr:
        return subprocess.Popen(
            cmd + _spread_args(args), cwd=tree, env=env, text=True, bufsize=1,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
        )  # fmt: skip


def _read(proc: subprocess.Popen[str], log: Path) -> dict[str, Any]:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.wait()
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise SystemExit(f"a worker stopped (exit {proc.returncode}); the end of {log}:\n{tail}")
    result: dict[str, Any] = json.loads(line)
    return result


def play_side(tree: Path, out: Path, args: argparse.Namespace, *, label: str) -> dict[str, Any]:
    """Play the plan with the code of `tree` in `args.jobs` workers (each its own database) into `out`;
    returns the manifest (also written to `out`)."""
    if out.exists():
        shutil.rmtree(out)
    work = out / "_work"
    work.mkdir(parents=True)
    procs = [
        _start_worker(tree, out, work / f"db-{n}.sqlite3", work / f"worker-{n}.log", args)
        for n in range(args.jobs)
    ]
    logs = [work / f"worker-{n}.log" for n in range(args.jobs)]
    started = time.perf_counter()
    firsts = [_read(p, log) for p, log in zip(procs, logs, strict=True)]
    games: list[Game] = firsts[0]["plan"]
    unknown = sorted(set(args.kinds.split(",")) - set(firsts[0]["kinds"])) if args.kinds else []
    if unknown:
        for p in procs:
            p.kill()
        raise SystemExit(
            f"{label}: no kind {', '.join(unknown)} registered (kinds: {', '.join(firsts[0]['kinds'])})"
        )
    wanted = args.kinds.split(",") if args.kinds else firsts[0]["kinds"]
    uncovered = [] if args.scenarios else [k for k in wanted if k not in {g["kind"] for g in games}]
    if uncovered:
        print(f"{label}: WARNING: no scenario of {', '.join(uncovered)} in {tree / 'scenarios'}: not played")
    todo: queue.Queue[Game] = queue.Queue()
    for game in sorted(games, key=_expected_cost, reverse=True):  # the longest first: no long tail on one job
        todo.put(game)
    done: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()
    failures: list[BaseException] = []

    def feed(proc: subprocess.Popen[str], log: Path) -> None:
        assert proc.stdin is not None
        try:
            while True:
                try:
                    game = todo.get_nowait()
                except queue.Empty:
                    return
                proc.stdin.write(json.dumps(game) + "\n")
                proc.stdin.flush()
                result = _read(proc, log)
                with lock:
                    done[game["name"]] = result
                    mark = "FAILED" if result["error"] else "played"
                    count = f"[{len(done)}/{len(games)}]"
                    print(f"{label}: {mark} {game['name']} ({result['seconds']} s) {count}", flush=True)
        except BaseException as exc:  # reported below, once the other jobs stop
            failures.append(exc)
        finally:
            proc.stdin.close()

    threads = [threading.Thread(target=feed, args=(p, log)) for p, log in zip(procs, logs, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in procs:
        p.wait()
    if failures:
        raise SystemExit(f"{label}: {failures[0]}")
    manifest = {
        "tree": str(tree), "commit": _commit(tree), "dirty": _dirty(tree), "args": _spread_args(args),
        "jobs": args.jobs, "wall_seconds": round(time.perf_counter() - started, 1),
        "games": [{**g, **done[g["name"]]} for g in games],
    }  # fmt: skip
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    shutil.rmtree(work)
    _print_times(manifest, label)
    return manifest


def _expected_cost(game: Game) -> float:
    options = dict(o.split("=", 1) for o in game["options"])
    if game["kind"] == "social_feed":
        return 3.0 if not options else 1.0
    return {"message_lab": 2.0, "negotiation": 1.5}.get(game["kind"], 1.0) * (
        0.5 if "rounds" in options else 1
    )


def _print_times(manifest: dict[str, Any], label: str) -> None:
    per_kind: dict[str, list[float]] = {}
    for game in manifest["games"]:
        per_kind.setdefault(game["kind"], []).append(game["seconds"])
    for kind, seconds in per_kind.items():
        print(f"{label}: {kind}: {len(seconds)} games, {sum(seconds):.0f} s of play "
              f"({sum(seconds) / len(seconds):.1f} s a game)")  # fmt: skip
    games, seconds, jobs = len(manifest["games"]), manifest["wall_seconds"], manifest["jobs"]
    print(f"{label}: {games} games in {seconds} s with {jobs} jobs")


def _commit(tree: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip()


def _dirty(tree: Path) -> bool:
    done = subprocess.run(
        ["git", "-C", str(tree), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return bool(done.stdout.strip())


class Checkout:
    """A git ref checked out in a temporary worktree (removed on exit); "." for the working tree, or the path
    of a directory holding a checkout (its manage.py), used as it is."""

    def __init__(self, ref: str, tmp: Path) -> None:
        self.ref, self.tree, self.temporary = ref, ROOT, False
        if ref != "." and (Path(ref) / "manage.py").is_file():
            self.tree = Path(ref).resolve()
        elif ref != ".":
            self.tree, self.temporary = tmp / f"tree-{re.sub(r'[^A-Za-z0-9_.-]', '_', ref)}", True

    def __enter__(self) -> Path:
        if self.temporary:
            git = ["git", "-C", str(ROOT), "worktree", "add", "--quiet", "--detach", str(self.tree), self.ref]
            subprocess.run(git, check=True)
        return self.tree

    def __exit__(self, *exc: object) -> None:
        if self.temporary:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(self.tree)], check=False
            )


def dump(args: argparse.Namespace) -> int:
    """Play one side (a ref or the working tree) into `--out`, for a later `compare --before-dump`."""
    _spread_defaults(args, [])
    with tempfile.TemporaryDirectory(prefix="parity-") as name, Checkout(args.ref, Path(name)) as tree:
        manifest = play_side(tree, Path(args.out).resolve(), args, label=args.ref)
    failed = [g["name"] for g in manifest["games"] if g["error"]]
    for g in manifest["games"]:
        if g["error"]:
            print(f"FAILED {g['name']}: {g['error']}")
    print(f"dump of {args.ref} ({manifest['commit'][:10]}{', with changes' if manifest['dirty'] else ''}) "
          f"in {args.out}: {len(manifest['games'])} games, {len(failed)} failed")  # fmt: skip
    return 1 if failed else 0


# --- the comparison -----------------------------------------------------------------------------------------


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The path of the first field that differs, with both values (around the first differing character of a
    long text)."""
    if type(a) is not type(b):
        return f"{path or '/'}: {type(a).__name__} {_short(a)} vs {type(b).__name__} {_short(b)}"
    if isinstance(a, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            if key not in a or key not in b:
                return f"{path}/{key}: only {'after' if key not in a else 'before'}"
            found = _first_difference(a[key], b[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = _first_difference(x, y, f"{path}/{i}")
            if found:
                return found
        return None if len(a) == len(b) else f"{path}: {len(a)} items vs {len(b)}"
    if a == b:
        return None
    if isinstance(a, str) and isinstance(b, str) and max(len(a), len(b)) > 80:
        at = next((n for n, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        return (
            f"{path} (character {at}): {a[max(0, at - 30) : at + 50]!r} vs {b[max(0, at - 30) : at + 50]!r}"
        )
    return f"{path}: {_short(a)} vs {_short(b)}"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 100 else text[:100] + "…"


def _load(side: Path, name: str) -> dict[str, Any] | None:
    path = side / f"{name}.json"
    if not path.exists():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _saved(directory: str) -> dict[str, Any]:
    path = Path(directory) / MANIFEST
    if not path.exists():
        raise SystemExit(f"{directory} is not a dump of this script (no {MANIFEST})")
    manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return manifest


def _spread_defaults(args: argparse.Namespace, saved: list[str]) -> None:
    """Fill in the spread options not given: a saved side's (a side played now plays the same games), else the
    defaults."""
    given = dict(zip(saved[::2], saved[1::2], strict=True))
    for option, default in SPREAD_DEFAULTS.items():
        if getattr(args, option) is None:
            setattr(args, option, given.get(f"--{option}", default))


def compare(args: argparse.Namespace) -> int:
    keep = Path(args.keep).resolve() if args.keep else None
    saved = [_saved(d)["args"] for d in (args.before_dump, args.after_dump) if d]
    _spread_defaults(args, saved[0] if saved else [])
    with tempfile.TemporaryDirectory(prefix="parity-") as name:
        tmp = Path(name)
        sides: dict[str, tuple[Path, dict[str, Any], bool]] = {}  # side: its dump, manifest, played now
        for side, ref, saved in (
            ("before", args.before, args.before_dump),
            ("after", args.after, args.after_dump),
        ):
            if saved:
                manifest = _saved(saved)
                sides[side] = (Path(saved).resolve(), manifest, False)
                print(
                    f"{side}: the dump in {saved} ({manifest['commit'][:10]}, {' '.join(manifest['args'])})"
                )
                continue
            if not ref:
                raise SystemExit(f"give --{side} REF or --{side}-dump DIR")
            out = (keep or tmp) / side
            with Checkout(ref, tmp) as tree:
                sides[side] = (out, play_side(tree, out, args, label=side), True)
        before, after = sides["before"], sides["after"]
        played = [s for s in (before, after) if s[2]] or [before, after]
        kinds = set(args.kinds.split(",")) if args.kinds else None
        slugs = set(args.scenarios.split(",")) if args.scenarios else None
        games: dict[str, Game] = {}
        for _, manifest, _ in played:
            for g in manifest["games"]:
                if (kinds is None or g["kind"] in kinds) and (slugs is None or g["scenario"] in slugs):
                    games.setdefault(g["name"], g)
        return _report(games, before[0], after[0], args)


def _report(games: dict[str, Game], before_dir: Path, after_dir: Path, args: argparse.Namespace) -> int:
    same: dict[str, int] = {}
    bad: dict[str, int] = {}
    for name, game in games.items():
        kind = game["kind"]
        before, after = _load(before_dir, name), _load(after_dir, name)
        found: str | None
        if before is None or after is None:
            found = f"not played {'before' if before is None else 'after'}"
        elif "parity_error" in before or "parity_error" in after:
            found = "FAILED: " + "; ".join(
                f"{side}: {data.get('parity_error', 'played')}"
                for side, data in (("before", before), ("after", after))
            )
        else:
            for change in DOCUMENTED_CHANGES:
                before = change(before)
            found = _first_difference(before, after)
        if found:
            bad[kind] = bad.get(kind, 0) + 1
            print(f"DIFFERS {name}: {found}")
        else:
            same[kind] = same.get(kind, 0) + 1
    for kind in dict.fromkeys(g["kind"] for g in games.values()):
        print(f"{kind}: {same.get(kind, 0)} identical, {bad.get(kind, 0)} differ")
    what = f"{args.before_dump or args.before} -> {args.after_dump or args.after}"
    print(f"{sum(same.values())} games identical, {sum(bad.values())} differ ({what})")
    return 1 if bad or not games else 0


# --- the command line ---------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("compare", "dump", "worker"):
        p = sub.add_parser(name)
        p.add_argument(
            "--kinds", help="only these kinds, e.g. negotiation,roleplay (default: every registered kind)"
        )
        p.add_argument("--scenarios", help="only these scenario slugs, e.g. mercury,cafe-barista")
        p.add_argument("--seeds", help="e.g. 1-5 or 1,4,7 (default 1-5)")
        p.add_argument(
            "--spread", choices=["full", "rotate"],
            help="full: every variant x every seed (default); rotate: each variant once, seeds in turn",
        )  # fmt: skip
        if name == "worker":  # one process of a side, started by play_side
            p.add_argument("--tree", required=True)
            p.add_argument("--out", required=True)
            p.add_argument("--db", required=True)
            continue
        p.add_argument("--jobs", type=int, default=2, help="worker processes a side (default 2)")
        if name == "dump":
            p.add_argument(
                "--ref", default=".", help="git ref, . (the working tree, default) or a checkout's path"
            )
            p.add_argument("--out", required=True, help="the directory to write (replaced)")
        else:
            p.add_argument("--before", help="git ref, . (the working tree) or a checkout's path")
            p.add_argument(
                "--after", default=".", help="git ref, . (the working tree, default) or a checkout's path"
            )
            p.add_argument(
                "--before-dump", metavar="DIR", help="a side written by `dump`, instead of --before"
            )
            p.add_argument("--after-dump", metavar="DIR", help="a side written by `dump`, instead of --after")
            p.add_argument("--keep", metavar="DIR", help="keep the sides played here (DIR/before, DIR/after)")
    args = parser.parse_args()
    return {"compare": compare, "dump": dump, "worker": worker}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
