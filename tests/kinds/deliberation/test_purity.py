"""The deliberation's machine and its pure companions import neither django nor litellm."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PURE = (
    "machine",
    "quorum",
    "state",
    "scenario",
    "offline",
    "prompts",
    "report",
    "amendments",
    "checks",
    "code_reading",
)


def test_deliberation_core_imports_neither_django_nor_litellm() -> None:
    code = (
        "import sys\n"
        + "".join(f"import simulations.kinds.deliberation.{m}\n" for m in PURE)
        + "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'litellm', 'channels'))\n"
        + "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": ""})  # fmt: skip
    assert out.stdout.strip() == ""
    assert set(PURE) <= {p.stem for p in (ROOT / "simulations" / "kinds" / "deliberation").glob("*.py")}
