"""The offline model's writer: turns the facts block of a prompt into an in-character message.

It writes only from the scenario's own lines (the role's arguments and talk lines) and the game's facts, chosen
with a stream seeded by (seed, role, turn), so the same game always produces the same words. Talk messages and
debate speeches are composed by `negotiator` (how an offline seat answers and pursues its goals).
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from . import negotiator


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
        return _summary(facts)
    raise ValueError(f"offline writer cannot write purpose {purpose!r}")


def _summary(facts: dict[str, Any]) -> str:
    human = facts["human"]
    results = facts["results"]
    lines = [f"Debrief for {human['name']}."]
    aims = "; ".join(f"{a['title']}: {a['label'].lower()}" for a in human["aims"])
    lines.append(f"You came to the table aiming for {aims}.")
    got = sum(1 for r in results if r["aim_met"])
    lines.append(f"The outcome matched your aim on {got} of {len(results)} issues.")
    for result in results:
        if result["adopted"]:
            lines.append(f"{result['title']}: {result['proposal_label'].lower()} was adopted unanimously.")
        else:
            why = "; ".join(result["why"])
            lines.append(f"{result['title']}: {result['proposal_label'].lower()} was rejected ({why}).")
    moved = facts.get("moved_by_human", [])
    if moved:
        shown = "; ".join(f"{m['role']} on {m['title'].lower()}, {m['reason']}" for m in moved[:6])
        lines.append(f"Your words moved delegations {len(moved)} times: {shown}.")
    else:
        lines.append("No delegation changed its position in response to your messages.")
    for commitment in facts.get("commitments", [])[:4]:
        lines.append(f"Commitment: {commitment}.")
    missed = facts.get("missed", [])
    if missed:
        lines.append("Openings you left unused: " + "; ".join(missed[:4]) + ".")
    return " ".join(lines)
