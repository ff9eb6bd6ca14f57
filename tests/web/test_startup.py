"""A server process moves what it loaded at start-up out of the garbage collector's way, and hands Python's lock
over sooner than CPython's default (mercury/startup.py)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mercury.startup import YOUNG_GENERATION_THRESHOLD

pytestmark = pytest.mark.configured  # a fresh interpreter reads the settings from this environment

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter: this test process may have frozen already, or never loaded the application.
PROBE = """
import gc, json, sys
before = gc.get_freeze_count()
import mercury.asgi
litellm = sys.modules.get("litellm")
tracked = {id(o) for o in gc.get_objects()}  # frozen objects are in none of the collector's generations
print(json.dumps({
    "before": before, "after": gc.get_freeze_count(), "threshold": gc.get_threshold()[0],
    "litellm": litellm is not None, "litellm_frozen": litellm is not None and id(vars(litellm)) not in tracked,
    "switch": sys.getswitchinterval(),
}))
"""


def _start_up(workers: str, **settings: str) -> dict[str, object]:
    env = os.environ | {"MERCURY_WORKERS": workers} | settings
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_loading_the_asgi_application_freezes_the_start_up_objects() -> None:
    seen = _start_up("external")
    assert seen["before"] == 0 and int(str(seen["after"])) > 10_000  # Django, the views, the URL patterns
    assert seen["threshold"] == YOUNG_GENERATION_THRESHOLD
    assert seen["litellm"] is False  # a web process of the scaled set-up calls no model: it does not load one
    assert gc.isenabled()


def test_a_server_that_drives_games_loads_and_freezes_the_model_library_at_start_up() -> None:
    seen = _start_up("embedded")
    assert seen["litellm"] is True and seen["litellm_frozen"] is True
    assert int(str(seen["after"])) > 200_000  # litellm's modules are most of what a driving process holds


def test_a_server_process_hands_the_lock_over_after_the_configured_interval() -> None:
    assert _start_up("external")["switch"] == pytest.approx(0.001)  # the default, 1 ms
    assert _start_up("external", MERCURY_SWITCH_INTERVAL_MS="2.5")["switch"] == pytest.approx(0.0025)
    assert _start_up("external", MERCURY_SWITCH_INTERVAL_MS="0")["switch"] == pytest.approx(
        0.005
    )  # CPython's
