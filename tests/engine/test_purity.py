"""The engine must import neither django nor litellm (DESIGN.md): it is pure game logic."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_engine_imports_neither_django_nor_litellm() -> None:
    modules = sorted(p.stem for p in (ROOT / "simulations" / "engine").glob("*.py") if p.stem != "__init__")
    assert {"mercury", "rules", "rng", "state", "scenario", "judge"} <= set(modules)
    code = (
        "import sys\n"
        + "".join(f"import simulations.engine.{m}\n" for m in modules)
        + "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'litellm'))\n"
        + "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
