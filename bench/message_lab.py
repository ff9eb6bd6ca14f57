"""Message Lab: how a simulation's wall time scales with participants x rounds when each model call takes time.

    .venv/bin/python bench/message_lab.py [--latency 0.25] [--panels 3,5,7] [--rounds 1,2,4] [--json FILE]

Every run plays a whole simulation headless (no gates: `gates=[]`), through the real driver, ledger and
checkpoints, on a fresh SQLite file, with the offline model told to wait `--latency` seconds before each answer
(MERCURY_OFFLINE_CALL_LATENCY: a real model's time to answer, simulated). For each panel size and number of
rounds it plays twice: the parallel stages with every call in flight at once (`parallel` = the panel size) and
one at a time (`parallel=1`). Reported per run: model calls, the calls' summed latency, wall time, and

* `wall / (calls x latency)`: about 1 when calls run one after another;
* `wall / (waves x latency)`: a wave is a parallel stage (all its calls at once) or one sequential call; about
  1 when a parallel stage costs one call's latency, not N, plus the commits and the CPU of the offline personas.

Figures and machine: docs/benchmarks.md; raw runs: bench/runs/message-lab-*.jsonl.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def configure(db: Path, latency: float) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "mercury.settings"
    os.environ["MERCURY_OFFLINE_TOKEN_DELAY"] = "0"
    os.environ["MERCURY_OFFLINE_CALL_LATENCY"] = str(latency)
    os.environ["MERCURY_SQLITE_PATH"] = str(db)
    os.environ["MERCURY_DEBUG"] = "0"
    os.environ.setdefault("MERCURY_SECRET_KEY", "bench-" + secrets.token_hex(16))
    os.environ.pop("DATABASE_URL", None)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    import django

    django.setup()


def play(
    version: Any, scenario: Any, *, panel: int, rounds: int, parallel: int, latency: float
) -> dict[str, Any]:
    from simulations.kinds.message_lab.games import state_of
    from simulations.kinds.message_lab.headless import play_headless
    from simulations.kinds.message_lab.machine import next_step
    from simulations.models import ModelCall
    from simulations.services.ledger.turns import create_game

    participants = [p.id for p in scenario.of_role("participant")][:panel]
    options = {"rounds": rounds, "gates": [], "participants": participants, "parallel": parallel,
               "keep": min(3, panel)}  # fmt: skip
    game = create_game(scenario_version=version, seed=7, options=options)
    waves = 0
    started = time.perf_counter()

    def count(g: Any, _: str) -> None:
        nonlocal waves
        waves += 1  # one committed step of the driver: a whole parallel stage, or one sequential call

    game = play_headless(game, on_progress=count)
    wall = time.perf_counter() - started
    assert next_step(state_of(game)).done
    calls = ModelCall.objects.filter(game=game, status="ok").count()
    return {
        "panel": panel, "rounds": rounds, "parallel": parallel, "latency_s": latency, "calls": calls,
        "waves": waves, "wall_s": round(wall, 3), "wall_per_call_latency": round(wall / (calls * latency), 3),
        "wall_per_wave_latency": round(wall / (waves * latency), 3),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latency", type=float, default=0.25)
    parser.add_argument("--panels", default="3,5,7")
    parser.add_argument("--rounds", default="1,2,4")
    parser.add_argument("--json", type=Path, help="append one line per run to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        configure(Path(tmp) / "bench.sqlite3", args.latency)
        from django.core.management import call_command

        from simulations.kinds.message_lab.scenario import SCENARIO_ROOT
        from simulations.services.content.scenarios import load_scenarios, parsed_scenario

        call_command("migrate", verbosity=0)
        ((version, _),) = load_scenarios(path=SCENARIO_ROOT / "message-lab.yaml")
        scenario = parsed_scenario(version)
        play(
            version, scenario, panel=3, rounds=1, parallel=3, latency=args.latency
        )  # warm-up: litellm's import, parses
        print(f"{'panel':>5} {'rounds':>6} {'parallel':>8} {'calls':>5} {'waves':>5} {'wall s':>7} "
              f"{'wall/(calls*lat)':>16} {'wall/(waves*lat)':>16}")  # fmt: skip
        for panel in (int(x) for x in args.panels.split(",")):
            for rounds in (int(x) for x in args.rounds.split(",")):
                for parallel in (panel, 1):
                    row = play(
                        version, scenario, panel=panel, rounds=rounds, parallel=parallel, latency=args.latency
                    )
                    print(f"{row['panel']:>5} {row['rounds']:>6} {row['parallel']:>8} {row['calls']:>5} "
                          f"{row['waves']:>5} {row['wall_s']:>7.2f} {row['wall_per_call_latency']:>16.2f} "
                          f"{row['wall_per_wave_latency']:>16.2f}", flush=True)  # fmt: skip
                    if args.json:
                        with args.json.open("a") as out:
                            out.write(json.dumps(row | {"at": time.strftime("%Y-%m-%dT%H:%M:%S")}) + "\n")


if __name__ == "__main__":
    main()
