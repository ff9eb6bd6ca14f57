"""Structured logs: with MERCURY_LOG_FORMAT=json every line a process logs is one JSON object."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAY = "import logging; logging.getLogger('mercury').warning('game %s: stopped', 7); logging.getLogger('django').error('x')"


def test_json_lines_from_mercury_and_django() -> None:
    env = {**os.environ, "MERCURY_LOG_FORMAT": "json", "DJANGO_SETTINGS_MODULE": "mercury.settings"}
    done = subprocess.run([sys.executable, "manage.py", "shell", "-c", SAY], env=env, cwd=ROOT, capture_output=True,
                          text=True, check=True)  # fmt: skip
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.strip()]
    assert [(x["logger"], x["level"], x["message"]) for x in lines] == [
        ("mercury", "WARNING", "game 7: stopped"), ("django", "ERROR", "x")
    ]  # fmt: skip
    assert all(x["time"].endswith("+00:00") and x["process"] for x in lines)
