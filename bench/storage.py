"""Storage benchmark: what a finished game costs in the database, and what restoring a checkpoint costs by turn.

    .venv/bin/python bench/storage.py [--games N] [--json FILE]

Plays N headless games (seeds 1..N, an advocate USA: the longest games the scripted humans play) on a fresh SQLite
file and reports per game:

* checkpoint bytes as stored (keyframes whole, changes between them) against the same checkpoints stored whole
  (the layout before keyframes), and their ratio;
* the game's rows in all: transcript, events, model calls, votes and checkpoints, as JSON bytes of their stored
  fields (a figure that compares across databases; the file's own size depends on page fill);
* the time to restore a checkpoint (`state_at`) early, in the middle and at the end of the game, each as many
  changes past its keyframe as the last one (median of 50 runs each): flat in game length means the last costs
  about what the early one does.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.games import configure, prepare, revision  # noqa: E402


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"))) if value is not None else 0


def _median_ms(fn: Any, runs: int = 50) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def measure(games: int) -> dict[str, Any]:
    from simulations.kinds.negotiation.bots import make_policy
    from simulations.kinds.negotiation.headless import play_game
    from simulations.models import Checkpoint, Event, ModelCall, TranscriptEntry, Vote
    from simulations.services.ledger.checkpoints import KEYFRAME_EVERY, state_at
    from simulations.services.ledger.turns import create_game

    version = prepare()
    rows = []
    for seed in range(1, games + 1):
        game = play_game(
            game_id=create_game(scenario_version=version, seed=seed).pk, policy=make_policy("advocate", "USA")
        )
        checkpoints = list(Checkpoint.objects.filter(game=game).order_by("seq"))
        stored = sum(_size(c.state) + _size(c.changes) for c in checkpoints)
        whole = sum(_size(state_at(c)) for c in checkpoints)
        ledger = (
            sum(_size(t) for t in TranscriptEntry.objects.filter(game=game).values_list("text", "audience"))
            + sum(_size(e) for e in Event.objects.filter(game=game).values_list("payload", "stance_changes"))
            + sum(_size(m) for m in ModelCall.objects.filter(game=game).values_list("context", "error"))
            + sum(_size(v) for v in Vote.objects.filter(game=game).values_list("ballots"))
        )
        # Three checkpoints as far past their keyframe as the last one is: early, middle, last.
        offset = (len(checkpoints) - 1) % KEYFRAME_EVERY
        middle = (len(checkpoints) // 2 // KEYFRAME_EVERY) * KEYFRAME_EVERY + offset
        picks = {"early": checkpoints[offset], "middle": checkpoints[middle], "last": checkpoints[-1]}
        rows.append(
            dict(
                seed=seed,
                checkpoints=len(checkpoints),
                checkpoint_bytes=stored,
                checkpoint_bytes_whole=whole,
                ratio=stored / whole,
                game_bytes=stored + ledger + _size(game.state),
                restore_ms={name: _median_ms(lambda c=c: state_at(c)) for name, c in picks.items()},
            )
        )
    return dict(games=rows, revision=revision())


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--json", type=Path, help="append the figures as one JSON line to this file")
    args = parser.parse_args()
    configure(Path(tempfile.mkdtemp(prefix="mercury-storage-")) / "bench.sqlite3", debug=False)
    report = measure(args.games)
    print(f"revision {report['revision']}")
    print("seed  checkpoints  stored KB  whole KB  ratio  game KB  restore ms (early / middle / last)")
    for r in report["games"]:
        ms = r["restore_ms"]
        print(
            f"{r['seed']:>4}  {r['checkpoints']:>11}  {r['checkpoint_bytes'] / 1024:>9.1f}  "
            f"{r['checkpoint_bytes_whole'] / 1024:>8.1f}  {r['ratio']:>5.3f}  {r['game_bytes'] / 1024:>7.1f}  "
            f"{ms['early']:.2f} / {ms['middle']:.2f} / {ms['last']:.2f}"
        )
    if args.json:
        with args.json.open("a") as out:
            out.write(json.dumps(report) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
