"""Game logic is pure (docs/architecture.md): the shared engine and every kind's machine import neither django nor litellm."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SIMULATIONS = ROOT / "simulations"

# Per package: the modules that hold rules, tables and state (a kind's prompts, bots and offline writers may
# reach for the platform; its machine may not).
PURE = {
    "simulations.engine": {"rng", "errors", "visibility"},
    "simulations.kinds.negotiation": {"machine", "state", "rules", "scenario", "judge", "reading"},
    "simulations.kinds.deliberation": {"machine", "state", "quorum", "scenario", "report", "code_reading"},
    "simulations.kinds.message_lab": {
        "state",
        "scenario",
        "payloads",
        "document",
        "machine",
        "prompts",
        "offline",
    },
}


@pytest.mark.parametrize("package", sorted(PURE))
def test_game_logic_imports_neither_django_nor_litellm(package: str) -> None:
    folder = SIMULATIONS.joinpath(*package.split(".")[1:])
    present = {p.stem for p in folder.glob("*.py")}
    assert PURE[package] <= present, f"{package} lost a pure module: {sorted(PURE[package] - present)}"
    code = (
        "import sys\n"
        + "".join(f"import {package}.{m}\n" for m in sorted(PURE[package]))
        + "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'litellm'))\n"
        + "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
