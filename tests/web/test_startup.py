"""A server process moves what it loaded at start-up out of the garbage collector's way (mercury/startup.py)."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_loading_the_asgi_application_freezes_the_start_up_objects() -> None:
    # A fresh interpreter: this test process may have frozen already, or never loaded the application.
    probe = (
        "import gc; before = gc.get_freeze_count(); import mercury.asgi; print(before, gc.get_freeze_count())"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    before, after = map(int, out.stdout.split()[-2:])
    assert before == 0 and after > 10_000  # Django, the views, the URL patterns
    assert gc.isenabled()
