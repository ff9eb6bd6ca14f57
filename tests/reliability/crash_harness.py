"""Crash-safety harness: kill the process driving a game (SIGKILL) at instrumented points, resume, compare.

Run standalone (the test runs it in a subprocess): `python tests/reliability/crash_harness.py --kills 200`.
The parent process sets Django up once on a fresh SQLite file and plays a reference game, noting after each of its
commits how often each crash point had been hit. Each trial forks a child that plays the same game (same scenario
version, seed and student) with one crash point armed; the child is killed with SIGKILL at that point (before a
model call, mid-stream, inside a commit's transaction, or after a commit). The parent then checks the ledger (no
half message visible), resumes the game to the end in-process and compares its export, without ids and
timestamps, to the reference. Prints one JSON line.

The child does not replay the turns before the point it dies at: its game is the reference forked at the last
checkpoint before that point (`fork_at_checkpoint`, what a crash right after that checkpoint leaves), and the
point is armed at its hit counted from there. What is tested is unchanged (a real kill mid-play, a resume, a whole
game compared), and a trial costs about half a game instead of a whole one.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=200, help="trials continue until this many kills")
    parser.add_argument("--role", default="USA")
    parser.add_argument("--human", default="advocate")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="mercury-crash-")
    os.environ.update(
        DJANGO_SETTINGS_MODULE="mercury.settings",
        MERCURY_SQLITE_PATH=str(Path(workdir) / "crash.sqlite3"),
        MERCURY_OFFLINE_TOKEN_DELAY="0",
        MERCURY_BROADCAST="false",
        MERCURY_DEBUG="true",
    )
    os.environ.pop("DATABASE_URL", None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    from simulations import faults
    from simulations.kinds.negotiation.bots import make_policy
    from simulations.kinds.negotiation.fork import fork_at_checkpoint
    from simulations.kinds.negotiation.headless import play_game
    from simulations.models import Checkpoint, Game
    from simulations.services.content.scenarios import load_scenario
    from simulations.services.files.export import export_game
    from simulations.services.ledger.resume import resume_game
    from simulations.services.ledger.turns import create_game

    call_command("migrate", verbosity=0)
    version, _ = load_scenario(folder=ROOT / "scenarios" / "mercury")

    def normalised(game_id: int) -> dict[str, Any]:
        data = export_game(game=Game.objects.get(pk=game_id))
        data["game"] = {k: v for k, v in data["game"].items() if k not in ("id", "created_at", "finished_at")}
        return data

    from simulations.kinds.negotiation import turns as drive_module  # the kind plays each AI step here

    real_step = drive_module.play_ai_step
    steps = {"n": 0}  # AI steps played by the current `play`

    def play(game_id: int, stream_call: int | None = None) -> None:
        """Play to the end; the `stream_call`-th AI call streams (litellm streaming is slow: only where needed)."""
        calls = steps
        calls["n"] = 0

        def step(**kwargs: Any) -> Game:
            calls["n"] += 1
            if calls["n"] == stream_call:
                kwargs["on_chunk"] = lambda text: None
            return real_step(**kwargs)

        drive_module.play_ai_step = step  # type: ignore[assignment]
        try:
            play_game(game_id=game_id, policy=make_policy(args.human, args.role))
        finally:
            drive_module.play_ai_step = real_step

    started = time.perf_counter()
    faults.disarm()
    reference = create_game(scenario_version=version, seed=args.seed)
    # After each commit of the reference game: its version (= its new checkpoint's seq), each point's hits so far
    # and the AI steps so far. A trial forks the reference at the last of these before its point's hit.
    after_commits: list[tuple[int, dict[str, int], int]] = [(reference.version, {}, 0)]
    real_point = faults.point

    def noting(name: str) -> None:
        real_point(name)
        if name == "after_commit":
            done = Game.objects.values_list("version", flat=True).get(pk=reference.pk)
            after_commits.append((done, dict(faults.hits), steps["n"]))

    faults.point = noting  # type: ignore[assignment]
    try:
        play(reference.pk)
    finally:
        faults.point = real_point  # type: ignore[assignment]
    expected = normalised(reference.pk)

    def start_of_trial(name: str, nth: int, stream_call: int | None) -> tuple[Game, int, int | None]:
        """The trial's game (the reference forked at the last commit before the point's `nth` hit, or before the
        `stream_call`-th AI step), and `nth` and `stream_call` counted from there."""
        last = max(
            k
            for k, (_, hits, done) in enumerate(after_commits)
            if (done < stream_call if stream_call else hits.get(name, 0) < nth)
        )
        seq, hits, done = after_commits[last]
        if last == 0:
            game = create_game(scenario_version=version, seed=args.seed)  # nothing committed yet: a new game
        else:
            game = fork_at_checkpoint(checkpoint=Checkpoint.objects.get(game=reference, seq=seq))
        if stream_call:
            return game, nth, stream_call - done
        return game, nth - hits.get(name, 0), None

    budget = {name: faults.hits[name] for name in faults.POINTS if name != "mid_stream"} | {
        "mid_stream": 25
    }  # hits of each point in a whole game
    ai_calls = budget["before_model_call"]

    killed: dict[str, int] = dict.fromkeys(faults.POINTS, 0)
    mismatches: list[str] = []
    trial = 0
    while (
        sum(killed.values()) < args.kills and trial < 3 * args.kills
    ):  # a point can miss (e.g. a one-chunk PASS)
        trial += 1
        name = faults.POINTS[trial % len(faults.POINTS)]
        nth = 1 + (trial * 7919) % max(1, budget[name])
        stream_call = None
        if name == "mid_stream":  # the k-th AI call streams, and dies at its nth chunk
            stream_call, nth = 1 + (trial * 104729) % max(1, ai_calls), 1 + trial % 25
        game, nth_here, stream_here = start_of_trial(name, nth, stream_call)
        connections.close_all()  # the child must open its own connection
        pid = os.fork()
        if pid == 0:  # the child: play until the armed point kills it
            try:
                faults.arm(name, nth_here)
                play(game.pk, stream_here)
            finally:
                os._exit(0)  # reached only if the point was never hit
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
            killed[name] += 1
        faults.disarm()
        # The killed child held the game's lease; waiting for it to lapse would only slow the harness down.
        Game.objects.filter(pk=game.pk).update(driver_until=None)
        try:
            resume_game(game_id=game.pk)  # the ledger agrees with the last checkpoint: nothing half-written
            play(game.pk)
            if normalised(game.pk) != expected:
                mismatches.append(f"{name}#{nth}: export differs")
        except Exception as exc:  # noqa: BLE001 - every failure is reported, none may pass silently
            mismatches.append(f"{name}#{nth}: {type(exc).__name__}: {exc}")
        Game.objects.filter(pk=game.pk).delete()
    print(
        json.dumps(
            {
                "trials": trial,
                "kills": sum(killed.values()),
                "killed": killed,
                "hits_per_game": budget,
                "mismatches": mismatches[:20],
                "mismatch_count": len(mismatches),
                "seconds": round(time.perf_counter() - started, 1),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
