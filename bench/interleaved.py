"""Two set-ups measured in turn, A, B, A, B ..., by the same benchmark command: the ratio B/A of each pair.

    .venv/bin/python bench/interleaved.py --pairs 5 --label pin --b MERCURY_PIN_CPU=off \
        --metric levels.0.server_cpu_per_game_s --json bench/runs/FILE.jsonl -- bench/http_games.py --levels 1

A and B differ only in the environment given (`--a`, `--b`: NAME=VALUE, repeatable); the command is run with this
Python, gets `--json FILE` and `--note "LABEL A|B pair N"` appended, and must append one JSON line per run (as
bench/http_games.py and bench/load.py do; `--stdout-json`: one it prints last, as bench/games.py --json does). `--metric` (repeatable) names a figure of that line by its path (dots;
list items by number); each pair's B/A is printed, then the median. bench/library_way.py names the library's ways.
`--report FILE --label L` prints the ratios of runs already in FILE without running anything.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def figure(run: dict[str, Any], path: str) -> float | None:
    value: Any = run
    for part in path.split("."):
        if isinstance(value, list):
            value = value[int(part)] if int(part) < len(value) else None
        elif isinstance(value, dict):
            value = value.get(part)
        if value is None:
            return None
    return float(value) if isinstance(value, int | float) else None


def report(json_file: Path, label: str, metrics: list[str]) -> None:
    runs: dict[tuple[int, str], dict[str, Any]] = {}
    for line in json_file.read_text().splitlines():
        run = json.loads(line)
        note = str(run.get("note", "")).split()
        if len(note) == 4 and note[0] == label and note[2] == "pair":
            runs[(int(note[3]), note[1])] = run
    pairs = sorted({n for n, _ in runs if (n, "A") in runs and (n, "B") in runs})
    print(f"{label}: {len(pairs)} pairs (B/A)")
    for metric in metrics:
        ratios, shown = [], []
        for n in pairs:
            a, b = figure(runs[(n, "A")], metric), figure(runs[(n, "B")], metric)
            shown.append(f"{a if a is None else round(a, 4)}/{b if b is None else round(b, 4)}")
            if a and b is not None:
                ratios.append(b / a)
        median = f"{statistics.median(ratios):.3f}" if ratios else "-"
        print(f"  {metric}: A/B {', '.join(shown)}")
        print(f"    B/A {', '.join(f'{r:.3f}' for r in ratios)}; median {median}")


def environment(pairs: list[str]) -> dict[str, str]:
    env = {}
    for item in pairs:
        name, _, value = item.partition("=")
        env[name] = value
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--label", required=True, help="one word: the runs' notes are 'LABEL A|B pair N'")
    parser.add_argument("--a", action="append", default=[], help="NAME=VALUE for set-up A")
    parser.add_argument("--b", action="append", default=[], help="NAME=VALUE for set-up B")
    parser.add_argument("--metric", action="append", default=[])
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument(
        "--stdout-json", action="store_true", help="the command prints its JSON line (given --json, no file)"
    )
    parser.add_argument("--report", action="store_true", help="only print the ratios of the runs in --json")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the benchmark script and its arguments")
    args = parser.parse_args()
    command = [c for c in args.command if c != "--"]
    if not args.report:
        for n in range(1, args.pairs + 1):
            for side, extra in (("A", args.a), ("B", args.b)):
                env = os.environ | environment(extra)
                note = f"{args.label} {side} pair {n}"
                print(f"--- {note}", flush=True)
                if args.stdout_json:  # the script prints its JSON line last (bench/games.py --json)
                    out = subprocess.run(
                        [sys.executable, *command, "--json"], env=env, cwd=ROOT, check=True,
                        capture_output=True, text=True,
                    ).stdout  # fmt: skip
                    run = json.loads([line for line in out.splitlines() if line.startswith("{")][-1])
                    with args.json.open("a") as file:
                        file.write(json.dumps(run | {"note": note}, sort_keys=True) + "\n")
                    continue
                subprocess.run(
                    [sys.executable, *command, "--json", str(args.json), "--note", note],
                    env=env,
                    cwd=ROOT,
                    check=True,
                )
    report(args.json, args.label, args.metric)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
