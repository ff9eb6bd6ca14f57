"""Social feed (seed 003): rounds per second and memory against population size, offline; and what a stored run
keeps.

    .venv/bin/python bench/social_feed.py [--agents 100,1000,10000] [--rounds 50] [--ranking hot] [--json FILE]
    .venv/bin/python bench/social_feed.py --storage --agents 2000 --rounds 200 --every 1 [--json FILE]

Each size runs in its own process (so its peak memory is its own): the shipped town-square scenario with its
listed agents plus N generated ones, `--rounds` rounds, feeds ranked by `--ranking` (chronological by default),
the offline reasoner and writer, no checkpoints or log written. Reported: wall time, rounds per second, decisions
per second, the reasoner's calls and its share of the wall time, posts at the end, and the process's peak resident memory (ru_maxrss) less its size before the run.

`--storage`: the run as the platform plays and stores it, without a database: machine.start, then each block of
`--every` rounds played by the driver's pass (the offline reasoner, its choices recorded) and committed as the
ROUNDS_PLAYED event the machine replays; each commit's rows sized as the ledger writes them (the checkpoint whole
every KEYFRAME_EVERY-th, else its changes from the state before; the event's payload and decision log), plus the
game's last state, as compact JSON — what the work budget's estimate (estimate.py) is checked against. Reported
with the estimate for the same set-up and the CPU seconds the two passes took.
Figures and machine: docs/benchmarks.md; raw runs: bench/runs/social-feed-*.jsonl.
"""

from __future__ import annotations

import argparse
import json
import os
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


def _size(value: Any) -> int:
    return (
        len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()) if value is not None else 0
    )


def storage(agents: int, rounds: int, every: int, ranking: str = "chronological") -> dict[str, Any]:
    """The bytes a stored run of `agents` generated agents keeps, checkpointed every `every` rounds."""
    sys.path.insert(0, str(ROOT))
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mercury.settings")
    django.setup()
    from simulations.kinds.social_feed import machine
    from simulations.kinds.social_feed.config import SCENARIO_ROOT, load_scenario
    from simulations.kinds.social_feed.estimate import DATABASE_OVERHEAD, run_estimate
    from simulations.kinds.social_feed.offline import OfflineReasoner, topic_names
    from simulations.kinds.social_feed.turns import Recording
    from simulations.services.ledger.checkpoints import stored_fields

    scenario = load_scenario(SCENARIO_ROOT / "town-square.yaml")
    config = machine.RunConfig(agents=agents, max_rounds=rounds, checkpoint_frequency=every, ranking=ranking)
    at = "2026-12-07T12:00:00+00:00"
    cpu = time.process_time()
    out = machine.start(scenario, seed=1, config=config, timestamp=at)
    before = out.state.model_dump(mode="json")
    parts = {"keyframes": _size(before), "changes": 0, "events": _size(out.payload), "decision_log": 0}
    seq = 1
    while out.state.status is not machine.Status.FINISHED:
        state = out.state
        recording = Recording(OfflineReasoner(state.seed, topics=topic_names(scenario)))
        machine.play(scenario, state, machine.block_size(state), recording)  # the driver's pass
        payload = {"rounds": machine.block_size(state), "at": at,
                   "choices": [c.model_dump(mode="json") for c in recording.choices]}  # fmt: skip
        out = machine.apply(scenario, state, machine.Event.ROUNDS_PLAYED, payload)  # the commit's replay
        seq += 1
        after = out.state.model_dump(mode="json")
        row = stored_fields(seq=seq, before=before, after=after)
        parts["keyframes"] += _size(row["state"])
        parts["changes"] += _size(row["changes"])
        parts["events"] += _size(out.payload)
        parts["decision_log"] += _size(out.decisions)
        before = after
        if seq % 20 == 1:  # progress, so that a run stopped early still tells what it had stored
            so_far = {k: round(v / 1e6, 1) for k, v in parts.items()}
            print(
                f"round {out.state.round_number}: {so_far} MB, {time.process_time() - cpu:.0f} s",
                file=sys.stderr,
            )
    parts["game_state"] = _size(before)
    cpu = time.process_time() - cpu
    stored = sum(parts.values())
    estimate = run_estimate(scenario, config, offline=True)
    return {
        "storage": True, "agents": agents + len(scenario.agents), "rounds": rounds, "every": every,
        "ranking": ranking, "json_mb": round(stored / 1e6, 1),
        "with_database_overhead_mb": round(stored * DATABASE_OVERHEAD / 1e6, 1),
        "parts_mb": {k: round(v / 1e6, 2) for k, v in parts.items()},
        "posts": len(before["sim"]["posts"]), "checkpoints": seq, "cpu_s": round(cpu, 1),
        "estimate_mb": round(estimate.storage_bytes / 1e6, 1), "estimate_s": round(estimate.seconds, 1),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="100,1000,10000")
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--ranking", default="chronological", choices=("chronological", "hot", "interest"))
    parser.add_argument("--json", type=Path, help="append each result as a JSON line to this file")
    parser.add_argument("--storage", action="store_true", help="size a stored run (one size of --agents)")
    parser.add_argument("--every", type=int, default=1, help="--storage: a checkpoint every N rounds")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child process: one size
    args = parser.parse_args()
    if args.storage:
        for n in (int(x) for x in args.agents.split(",")):
            r = storage(n, args.rounds, args.every, args.ranking)
            print(json.dumps(r))
            if args.json:
                with args.json.open("a") as f:
                    f.write(json.dumps(r) + "\n")
        return
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
