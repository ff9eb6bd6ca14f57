"""What a seat's model may put in the transcript: its own words, nothing that speaks for others.

Models sometimes prefix their own name, write a line for the chair or another delegation, or echo transcript
headers. The seat's own label is dropped; any line voiced as someone else (or as an event) is removed; an answer
with nothing left is refused, so the turn is retried and nothing is stored.
"""

from __future__ import annotations

import re
import unicodedata

from simulations.engine.scenario import Scenario

from .gateway import ModelFailure


def _label(names: list[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"^\s*(?:\[\d+\]\s*)?(?:\*\*)?(?:{alternatives})(?:\*\*)?\s*:\s*", re.IGNORECASE)


# Invisible characters (zero-width, bidi controls) and the markdown a label can hide behind.
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_MARKUP = re.compile(r"^[\s>#*_~`|-]+|(?<=\w)[*_~`]+(?=\s*:)")


def _visible(line: str) -> str:
    """The line as a reader sees it: compatibility forms folded (full-width letters), invisible marks removed."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", line))


def clean(scenario: Scenario, role: str, text: str) -> str:
    own_names = [role, scenario.display_name(role)]
    others = [
        n for r in [*scenario.role_ids, scenario.chair.id] if r != role for n in (r, scenario.display_name(r))
    ]
    others += ["Chair", "Chairman", "Chairperson", "System", "Assistant", "User", "Moderator"]
    own, other = _label(own_names), _label(others)
    kept: list[str] = []
    for raw in text.splitlines():
        line = _visible(raw)
        probe = _MARKUP.sub("", line)
        if other.match(probe) or probe.lstrip().startswith(("{", "<<")):
            continue  # voiced as someone else, or an event/markup the model should not write
        kept.append(own.sub("", probe, count=1) if own.match(probe) else line)
    cleaned = "\n".join(kept).strip()
    if not cleaned:
        raise ModelFailure(ModelFailure.MALFORMED)
    return cleaned
