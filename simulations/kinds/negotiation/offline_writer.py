"""The offline model's writer: turns the facts block of a prompt into an in-character message.

It writes only from the scenario's own lines (the role's arguments and talk lines) and the game's facts, chosen
with a stream seeded by (seed, role, turn), so the same game always produces the same words. Talk messages and
debate speeches are composed by `negotiator` (how an offline seat answers and pursues its goals).
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from simulations.kinds.negotiation import negotiator, offline_debrief


def _rng(facts: dict[str, Any]) -> random.Random:
    key = f"{facts.get('seed')}:{facts.get('role', {}).get('id')}:{facts.get('turn')}:{facts.get('purpose')}"
    return random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))


def write(facts: dict[str, Any]) -> str:
    purpose = facts.get("purpose")
    if purpose in ("talk_open", "talk", "talk_final"):
        return negotiator.talk(facts, _rng(facts))
    if purpose == "speech":
        return negotiator.speech(facts, _rng(facts))
    if purpose == "summary":
        return offline_debrief.write(facts)
    raise ValueError(f"offline writer cannot write purpose {purpose!r}")
