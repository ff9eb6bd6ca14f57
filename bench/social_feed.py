"""Social feed (seed 003): rounds per second and memory against population size, offline.

    .venv/bin/python bench/social_feed.py [--agents 100,1000,10000] [--rounds 50] [--ranking hot] [--json FILE]

Each size runs in its own process (so its peak memory is its own): the shipped town-square scenario with its
listed agents plus N generated ones, `--rounds` rounds, feeds ranked by `--ranking` (chronological by default),
the offline reasoner and writer, no checkpoints or log written. Reported: wall time, rounds per second, decisions per second, the reasoner's calls and its share of the
wall time, posts at the end, and the process's peak resident memory (ru_maxrss) less its size before the run.
Figures and machine: docs/benchmarks.md; raw runs: bench/runs/social-feed-*.jsonl.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def one(agents: int, rounds: int, ranking: str = "chronological") -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from simulations.kinds.social_feed import offline
    from simulations.kinds.social_feed import rounds as engine
    from simulations.kinds.social_feed.config import SCENARIO_ROOT, SimulationConfig, load_scenario

    scenario = load_scenario(SCENARIO_ROOT / "town-square.yaml")
    scenario = scenario.model_copy(update={"config": SimulationConfig(max_rounds=rounds, ranking=ranking)})
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sim = engine.start(scenario, seed=1, agents=agents)
    spent = [0.0]
    inner = offline.OfflineReasoner(sim.seed, topics=offline.topic_names(scenario))

    class Timed:
        def decide(self, batch: Any) -> Any:
            began = time.perf_counter()
            try:
                return inner.decide(batch)
            finally:
                spent[0] += time.perf_counter() - began

    began = time.perf_counter()
    result = engine.run(sim, reasoner=Timed())
    wall = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    people = len(sim.agents)
    return {
        "agents": people, "rounds": result.total_rounds, "wall_s": round(wall, 2),
        "rounds_per_s": round(result.total_rounds / wall, 1), "decisions_per_s": round(people * rounds / wall),
        "reasoner_calls": sim.reasoner_calls, "reasoner_share": round(spent[0] / wall, 3), "posts": len(sim.posts),
        "memory_mb": round((peak - before) / 1024, 1), "peak_rss_mb": round(peak / 1024, 1),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="100,1000,10000")
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--ranking", default="chronological", choices=("chronological", "hot", "interest"))
    parser.add_argument("--json", type=Path, help="append each result as a JSON line to this file")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child process: one size
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.one, args.rounds, args.ranking)))
        return
    print(f"{'agents':>7} {'rounds':>6} {'wall s':>7} {'rounds/s':>8} {'decisions/s':>11} {'reasoner':>9} "
          f"{'share':>6} {'posts':>7} {'memory MB':>9}")  # fmt: skip
    for n in (int(x) for x in args.agents.split(",")):
        out = subprocess.run([sys.executable, __file__, "--one", str(n), "--rounds", str(args.rounds),
                              "--ranking", args.ranking],
                             check=True, capture_output=True, text=True).stdout  # fmt: skip
        r = json.loads(out)
        print(f"{r['agents']:>7} {r['rounds']:>6} {r['wall_s']:>7} {r['rounds_per_s']:>8} {r['decisions_per_s']:>11} "
              f"{r['reasoner_calls']:>9} {r['reasoner_share']:>6} {r['posts']:>7} {r['memory_mb']:>9}")  # fmt: skip
        if args.json:
            with args.json.open("a") as f:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
