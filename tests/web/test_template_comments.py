"""Django's `{# … #}` comment ends on its own line: one spread over several lines is not a comment but text that
every student would read on the page. Every template's comments close on the line they open."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_template_comment_spans_lines() -> None:
    templates = [p for p in ROOT.glob("**/templates/**/*.html") if ".venv" not in p.parts]
    assert len(templates) > 40
    unclosed = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in templates
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\{#(?!.*#\})", line)
    ]
    assert not unclosed, unclosed
