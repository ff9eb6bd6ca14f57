"""Mercury parity: the same games played by two versions of the code export the same files.

Issue #10 moves Mercury onto the simulation-kind contract "with nothing lost". This script shows it: it plays
every (seed, seat, student policy) with the offline model in a checkout of each version, each in its own SQLite
database, and compares the exports with ids and timestamps left out. Run it before merging a change that must not
change a game:

    .venv/bin/python scripts/mercury_parity.py compare --before main            # 18 seeds x 9 seats x 2 policies
    .venv/bin/python scripts/mercury_parity.py compare --before 81f1249 --seeds 1-3 --jobs 2

`--before`/`--after` take any git ref (checked out in a temporary worktree) or "." for the working tree. Each side
is played by this script's `dump` command with that checkout first on the import path, so the code under test is
the checkout's, not this file's. Exit status 0 when every game matches. A difference the change documents (a
format change) goes in DOCUMENTED_CHANGES below, with a line in the export format's section of
docs/architecture.md.

Not part of the test suite: 324 games take about half an hour a side on a 2-core machine.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ROLES = ["BRA", "CAN", "CHN", "EU", "TZA", "USA", "AMAP", "MFF", "WCPA"]
POLICIES = ["passive", "advocate"]
VOLATILE = ("id", "created_at", "finished_at")  # differ between any two plays of one game

# Documented format changes between the two sides: each maps a "before" export onto the "after" layout.
# Empty while the export format is unchanged.
DOCUMENTED_CHANGES: list[Any] = []


def _seeds(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        first, _, last = part.partition("-")
        out += list(range(int(first), int(last or first) + 1))
    return out


def _games(args: argparse.Namespace) -> list[tuple[int, str, str]]:
    return [
        (s, r, p) for s in _seeds(args.seeds) for r in args.roles.split(",") for p in args.policies.split(",")
    ]


def _name(seed: int, role: str, policy: str) -> str:
    return f"{seed:02d}-{role}-{policy}.json"


def _first_of(name: str, *modules: str) -> Any:
    """`name` from the first of `modules` this tree has: the side being played may predate a move (the
    negotiation moved under simulations/kinds/ in #10)."""
    for module in modules:
        try:
            return getattr(importlib.import_module(module), name)
        except ModuleNotFoundError:
            continue
    raise SystemExit(f"this tree has none of {modules}")


def dump(args: argparse.Namespace) -> int:
    """Play the games with the code on the import path and write one normalised export per game."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mercury.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    make_policy = _first_of("make_policy", "simulations.kinds.negotiation.bots", "simulations.bots")
    play_game = _first_of("play_game", "simulations.kinds.negotiation.play", "simulations.services.play")
    from simulations.services.export import export_game
    from simulations.services.scenarios import load_scenario
    from simulations.services.turns import create_game

    version, _ = load_scenario(folder=Path(args.scenario))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for seed, role, policy in _games(args):
        game = create_game(scenario_version=version, seed=seed)
        game = play_game(game_id=game.pk, policy=make_policy(policy, role))
        data = export_game(game=game)
        data["game"] = {k: v for k, v in data["game"].items() if k not in VOLATILE}
        (out / _name(seed, role, policy)).write_text(
            json.dumps(data, indent=1, sort_keys=True), encoding="utf-8"
        )
        print(f"played {seed} {role} {policy}", flush=True)
    return 0


def _checkout(ref: str, tmp: Path) -> Path:
    if ref == ".":
        return ROOT
    tree = tmp / f"tree-{ref.replace('/', '_')}"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref], check=True)
    return tree


def _play_side(tree: Path, out: Path, args: argparse.Namespace, tmp: Path) -> None:
    """Run `dump` in up to `jobs` processes, each with its own database and its share of whole seeds."""
    seeds = _seeds(args.seeds)
    procs = []
    for job in range(args.jobs):
        share = seeds[job :: args.jobs]
        if not share:
            continue
        env = {
            **os.environ,
            "PYTHONPATH": str(tree),
            "DATABASE_URL": f"sqlite:///{tmp / f'{out.name}-{job}.sqlite3'}",
            "MERCURY_OFFLINE_TOKEN_DELAY": "0",
            "DJANGO_SETTINGS_MODULE": "mercury.settings",
        }
        env.pop("MERCURY_MODEL", None)  # the offline model on both sides
        cmd = [sys.executable, str(Path(__file__).resolve()), "dump", "--out", str(out)]
        cmd += ["--scenario", str(tree / "scenarios" / "mercury"), "--seeds", ",".join(map(str, share))]
        cmd += ["--roles", args.roles, "--policies", args.policies]
        procs.append(subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL))
    if any(p.wait() != 0 for p in procs):
        raise SystemExit(f"playing the games in {tree} failed")


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    if type(a) is not type(b):
        return f"{path or '/'}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
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
    return None if a == b else f"{path}: {str(a)[:80]!r} vs {str(b)[:80]!r}"


def compare(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="parity-") as name:
        tmp = Path(name)
        sides = {}
        for side, ref in (("before", args.before), ("after", args.after)):
            tree = _checkout(ref, tmp)
            try:
                out = tmp / side
                _play_side(tree, out, args, tmp)
                sides[side] = out
            finally:
                if tree != ROOT:
                    subprocess.run(
                        ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False
                    )
        same = differ = 0
        for seed, role, policy in _games(args):
            before = json.loads((sides["before"] / _name(seed, role, policy)).read_text(encoding="utf-8"))
            after = json.loads((sides["after"] / _name(seed, role, policy)).read_text(encoding="utf-8"))
            for change in DOCUMENTED_CHANGES:
                before = change(before)
            found = _first_difference(before, after)
            if found:
                differ += 1
                print(f"DIFFERS seed {seed} {role} {policy}: {found}")
            else:
                same += 1
        print(f"{same} games identical, {differ} differ ({args.before} -> {args.after})")
        return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("dump", "compare"):
        p = sub.add_parser(name)
        p.add_argument("--seeds", default="1-18", help="e.g. 1-18 or 1,4,7")
        p.add_argument("--roles", default=",".join(ROLES))
        p.add_argument("--policies", default=",".join(POLICIES))
        if name == "dump":
            p.add_argument("--out", required=True)
            p.add_argument("--scenario", default=str(ROOT / "scenarios" / "mercury"))
        else:
            p.add_argument("--before", required=True, help="git ref, or . for the working tree")
            p.add_argument("--after", default=".", help="git ref, or . for the working tree (default)")
            p.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    return dump(args) if args.command == "dump" else compare(args)


if __name__ == "__main__":
    sys.exit(main())
