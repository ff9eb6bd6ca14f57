"""The Mercury parity script (scripts/mercury_parity.py): it finds a difference, and a tree matches itself."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "mercury_parity.py"


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mercury_parity", SCRIPT)
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


@pytest.mark.skipif(
    bool(os.environ.get("DATABASE_URL")), reason="the script plays on its own SQLite files: once a run"
)
def test_a_tree_plays_the_same_games_as_itself() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "compare", "--before", ".", "--after", ".", "--seeds", "3",
         "--roles", "TZA", "--policies", "advocate", "--jobs", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 games identical, 0 differ" in done.stdout
