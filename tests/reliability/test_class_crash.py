"""A class's server killed mid-session (issue #67): `play_class` plays a session of group games in a process of
its own on a SQLite file, and is killed (SIGKILL) in the middle of the first group's game. Every game of the
session then resumes at its last completed message (`play --resume`) and ends exactly as the same session
played without interruption: the same exports, less ids and times."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CALL = "from django.core.management import call_command"
CLASS = ["--scenario", "mercury", "--groups", "2", "--students-per-group", "2", "--seed", "5"]


def _manage(db: Path, *args: str, **popen: Any) -> subprocess.Popen[str]:
    env = os.environ | {
        "MERCURY_SQLITE_PATH": str(db), "MERCURY_OFFLINE_TOKEN_DELAY": "0", "MERCURY_BROADCAST": "false",
        "DJANGO_SETTINGS_MODULE": "mercury.settings", "MERCURY_DEBUG": "true",
    }  # fmt: skip
    env.pop("DATABASE_URL", None)
    return subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), *args], env=env, cwd=ROOT, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen,
    )  # fmt: skip


def _run(db: Path, *args: str) -> str:
    proc = _manage(db, *args)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-2000:]
    return out


def _ready(db: Path) -> None:
    _run(db, "shell", "-c", f"{CALL}; call_command('migrate', verbosity=0); "
         f"call_command('load_scenario', {str(ROOT / 'scenarios' / 'mercury')!r})")  # fmt: skip


def _games(db: Path) -> list[tuple[int, str, int]]:
    with sqlite3.connect(db) as rows:
        return rows.execute("SELECT id, phase, version FROM simulations_game ORDER BY id").fetchall()


def _exports(db: Path) -> list[dict[str, Any]]:
    """Every game's export, less ids and times (one process for all)."""
    code = (
        "import json; from simulations.models import Game; from simulations.services.files.export import "
        "export_game; print(json.dumps([export_game(game=g) for g in Game.objects.order_by('pk')]))"
    )
    exported = json.loads(_run(db, "shell", "-c", code).splitlines()[-1])
    for data in exported:
        data["game"] = {k: v for k, v in data["game"].items() if k not in ("id", "created_at", "finished_at")}
    return list(exported)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="kills a process")
@pytest.mark.skipif(bool(os.environ.get("DATABASE_URL")), reason="its own SQLite files: once a run")
def test_every_game_of_a_class_resumes_after_its_server_is_killed(tmp_path: Path) -> None:
    reference, crashed = tmp_path / "reference.sqlite3", tmp_path / "crashed.sqlite3"
    _ready(reference)
    shutil.copyfile(reference, crashed)  # the same empty site, scenario loaded
    _run(reference, "play_class", *CLASS)
    finished = _games(reference)
    assert len(finished) == 2 and {phase for _, phase, _ in finished} == {"REVIEW"}
    playing = _manage(crashed, "play_class", *CLASS)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any(version >= 40 for _, _, version in _games(crashed)):
        time.sleep(0.05)
    playing.send_signal(signal.SIGKILL)
    playing.communicate(timeout=30)
    stopped = _games(crashed)
    assert len(stopped) == 2 and all(phase != "REVIEW" for _, phase, _ in stopped), stopped
    resumes = "; ".join(
        f"call_command('play', '--resume', '{game_id}', '--quiet')" for game_id, _, _ in stopped
    )
    _run(crashed, "shell", "-c", f"{CALL}; {resumes}")  # the server back: each game from its last checkpoint
    assert {phase for _, phase, _ in _games(crashed)} == {"REVIEW"}
    assert _exports(crashed) == _exports(reference)
