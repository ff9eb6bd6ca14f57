"""What a seat's model may put in the transcript: its own words, nothing that speaks for others.

Models sometimes prefix their own name, write a line for the chair or another delegation, or echo transcript
headers. The seat's own label is dropped; any line voiced as someone else (or as an event) is removed; an answer
with nothing left is refused, so the turn is retried and nothing is stored.
"""

from __future__ import annotations

import re

from simulations.engine.scenario import Scenario

from .gateway import ModelFailure


def _label(names: list[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"^\s*(?:\[\d+\]\s*)?(?:\*\*)?(?:{alternatives})(?:\*\*)?\s*:\s*", re.IGNORECASE)


def clean(scenario: Scenario, role: str, text: str) -> str:
    own_names = [role, scenario.display_name(role)]
    others = [
        n for r in [*scenario.role_ids, scenario.chair.id] if r != role for n in (r, scenario.display_name(r))
    ]
    others += ["Chair", "Chairman", "Chairperson", "System", "Assistant", "User", "Moderator"]
    own, other = _label(own_names), _label(others)
    kept: list[str] = []
    for line in text.splitlines():
        if other.match(line) or line.lstrip().startswith(("{", "<<")):
            continue  # voiced as someone else, or an event/markup the model should not write
        kept.append(own.sub("", line, count=1))
    cleaned = "\n".join(kept).strip()
    if not cleaned:
        raise ModelFailure(ModelFailure.MALFORMED)
    return cleaned
