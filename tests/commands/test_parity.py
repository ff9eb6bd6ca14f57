"""The parity script (scripts/parity.py): its spread of games, a difference named by its path, and a dump of the
working tree played through the command line that matches itself and catches a changed word."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "parity.py"


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("parity", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_first_difference_is_named_by_its_path() -> None:
    parity = _module()
    before = {"transcript": [{"seq": 1, "text": "We support 1.1."}, {"seq": 2, "text": "Thank you."}]}
    after = {"transcript": [{"seq": 1, "text": "We support 1.1."}, {"seq": 2, "text": "Thanks."}]}
    assert parity._first_difference(before, before) is None
    assert parity._first_difference(before, after).startswith("/transcript/1/text:")
    shorter = {"transcript": before["transcript"][:1]}
    assert parity._first_difference(before, shorter) == "/transcript: 2 items vs 1"
    assert parity._first_difference({"a": 1}, {"b": 1}) == "/a: only before"
    long = "x" * 200
    assert "(character 150)" in parity._first_difference(long, long[:150] + "y" + long[151:])


def test_only_ids_and_wall_clock_times_are_left_out() -> None:
    parity = _module()
    export = {"game": {"id": 7, "seed": 3, "created_at": "2026-12-07T07:42:40.635010Z"},
              "rounds": [{"at": "2026-12-07T07:43:22+00:00", "n": 1, "text": "At 2026-12-07T07:43 we met."}]}  # fmt: skip
    assert parity.normalised(export) == {
        "game": {"seed": 3, "created_at": "<time>"},
        "rounds": [{"at": "<time>", "n": 1, "text": "At 2026-12-07T07:43 we met."}],
    }


def test_the_spread_covers_every_seat_bot_and_seed() -> None:
    parity = _module()
    roles = [{"id": r} for r in ["BRA", "CAN", "CHN", "EU", "TZA", "USA", "AMAP", "MFF", "WCPA"]]
    scenarios = [("mercury", "negotiation", {"roles": roles}), ("cafe", "roleplay", {})]
    full = argparse.Namespace(seeds="1-18", spread="full", kinds="negotiation", scenarios="mercury")
    games = parity.plan(scenarios, full)
    assert len(games) == 324 and len({g["name"] for g in games}) == 324
    rotate = argparse.Namespace(seeds="1-3", spread="rotate", kinds=None, scenarios=None)
    games = parity.plan(scenarios, rotate)
    assert {(g["role"], g["human"]) for g in games if g["kind"] == "negotiation"} == {
        (r["id"], p) for r in roles for p in ("passive", "advocate")
    }
    assert [(g["human"], g["seed"]) for g in games if g["kind"] == "roleplay"] == [
        ("seeker", 1), ("quitter", 2), ("seeker", 3),
    ]  # fmt: skip


@pytest.mark.skipif(
    bool(os.environ.get("DATABASE_URL")), reason="the script plays on its own SQLite files: once a run"
)
def test_a_dump_matches_itself_and_a_changed_word_is_found(tmp_path: Path) -> None:
    dump = tmp_path / "dump"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "dump", "--out", str(dump), "--kinds", "roleplay", "--scenarios",
         "cafe-barista", "--seeds", "1", "--spread", "rotate", "--jobs", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    games = json.loads((dump / "manifest.json").read_text(encoding="utf-8"))["games"]
    assert [g["human"] for g in games] == ["seeker", "quitter"]
    played = json.loads((dump / f"{games[0]['name']}.json").read_text(encoding="utf-8"))
    assert played["game"]["seed"] == 1 and "id" not in played["game"] and played["transcript"]

    def compare(after: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(SCRIPT), "compare", "--before-dump", str(dump), "--after-dump", str(after)],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip

    same = compare(dump)
    assert same.returncode == 0 and "2 games identical, 0 differ" in same.stdout, same.stdout + same.stderr
    changed = tmp_path / "changed"
    shutil.copytree(dump, changed)
    played["transcript"][1]["text"] += " Really."
    (changed / f"{games[0]['name']}.json").write_text(json.dumps(played), encoding="utf-8")
    differs = compare(changed)
    assert differs.returncode == 1
    assert f"DIFFERS {games[0]['name']}: /transcript/1/text" in differs.stdout
