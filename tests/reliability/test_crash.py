"""Crash safety: the process driving a game is killed (SIGKILL) at instrumented points — before a model call,
mid-stream, inside a commit's transaction, after a commit — and every resumed game ends exactly as the
uninterrupted one. CI runs at least 200 kills (two harness processes, one per core); locally a smaller sample.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).with_name("crash_harness.py")
KILLS_PER_PROCESS = 100 if os.environ.get("CI") else 12
RUNS = [("USA", "advocate", 3), ("MFF", "passive", 8)]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the harness forks")
@pytest.mark.skipif(
    bool(os.environ.get("DATABASE_URL")), reason="the harness uses its own SQLite file: once a run"
)
def test_killed_drivers_resume_to_the_same_game() -> None:
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(HARNESS),
                "--kills",
                str(KILLS_PER_PROCESS),
                "--role",
                role,
                "--human",
                human,
                "--seed",
                str(seed),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for role, human, seed in RUNS
    ]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=1500)
        assert proc.returncode == 0, err[-2000:]
        reports.append(json.loads(out.strip().splitlines()[-1]))
    for report in reports:
        assert report["mismatch_count"] == 0, report["mismatches"]
        assert all(count > 0 for count in report["killed"].values()), report["killed"]
    kills = sum(r["kills"] for r in reports)
    assert kills == KILLS_PER_PROCESS * len(RUNS)
    if os.environ.get("CI"):
        assert kills >= 200
    print(json.dumps(reports))
