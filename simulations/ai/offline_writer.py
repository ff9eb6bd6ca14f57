"""The offline model's writer: turns the facts block of a prompt into an in-character message.

It writes only from the scenario's own lines (the role's arguments and talk lines) and the game's facts, chosen
with a stream seeded by (seed, role, turn), so the same game always produces the same words.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from . import offline_debrief


def _rng(facts: dict[str, Any]) -> random.Random:
    key = f"{facts.get('seed')}:{facts.get('role', {}).get('id')}:{facts.get('turn')}:{facts.get('purpose')}"
    return random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))


def write(facts: dict[str, Any]) -> str:
    purpose = facts.get("purpose")
    if purpose in ("talk_open", "talk", "talk_final"):
        return _talk(facts, _rng(facts))
    if purpose == "speech":
        return _speech(facts, _rng(facts))
    if purpose == "summary":
        return offline_debrief.write(facts)
    raise ValueError(f"offline writer cannot write purpose {purpose!r}")


def _line(rng: random.Random, lines: list[str]) -> str:
    return rng.choice(lines) if lines else ""


def _persuaded(facts: dict[str, Any], rng: random.Random) -> list[str]:
    out = []
    for change in facts.get("recent_changes", []):
        template = _line(rng, facts["talk"].get("persuaded", []))
        label = change["option_label"]
        at_start = template.startswith("{option}") or ". {option}" in template
        out.append(template.replace("{option}", label if at_start else label[0].lower() + label[1:]))
    return out


def _position(facts: dict[str, Any], issue_id: str, rng: random.Random) -> str:
    stance = facts["stance"][issue_id]
    pref = stance["preferred"]
    args = facts["arguments"].get(pref["id"], {})
    sentence = (
        f"On {stance['title'].lower()}, our delegation supports {pref['label'].lower()} ({pref['id']})."
    )
    return f"{sentence} {_line(rng, args.get('support', []))}".strip()


def _conditions(facts: dict[str, Any], issue_id: str) -> str:
    open_conditions = facts["stance"][issue_id].get("conditions_open", [])
    if not open_conditions:
        return ""
    cond = open_conditions[0]
    return f"We could consider {cond['accept_label'].lower()} if {cond['needs']} were on the table."


def _response(facts: dict[str, Any], rng: random.Random) -> str:
    heard = facts.get("last_heard") or {}
    if not heard:
        return ""
    name = heard["speaker"]
    parts: list[str] = []
    for opt in heard.get("supports", [])[:2]:
        stance = facts["stance"].get(opt["issue"], {})
        acceptable = {o["id"] for o in stance.get("acceptable", [])}
        if opt["id"] in acceptable:
            parts.append(f"We welcome what {name} said in favour of {opt['label'].lower()}.")
        else:
            args = facts["arguments"].get(opt["id"], {})
            parts.append(
                f"We have heard {name} on {opt['label'].lower()}. {_line(rng, args.get('oppose', []))}"
            )
    for offer in heard.get("offers", [])[:1]:
        parts.append(f"We take careful note of the offer of {offer} from {name}.")
    for ask in heard.get("asks", [])[:1]:
        parts.append(f"We hear the request from {name} for {ask}.")
    if not parts:
        parts.append(f"We thank {name} for those words.")
    return " ".join(parts)


def _talk(facts: dict[str, Any], rng: random.Random) -> str:
    talk = facts["talk"]
    partner = facts["partner"]["name"]
    issues = list(facts["stance"])
    own = facts.get("messages_so_far", 0)
    parts: list[str] = []
    if facts["purpose"] == "talk_open" or (own == 0 and not facts.get("last_heard")):
        parts.append(_line(rng, talk.get("openers", [])))
    else:
        parts.append(_response(facts, rng))
    parts += _persuaded(facts, rng)
    focus = facts.get("focus_issue") or issues[(own + rng.randrange(len(issues))) % len(issues)]
    parts.append(_position(facts, focus, rng))
    cond = _conditions(facts, focus)
    if cond:
        parts.append(cond)
    if facts["purpose"] == "talk_final":
        parts.append(_line(rng, talk.get("closers", [])))
    else:
        parts.append(_line(rng, talk.get("asks", [])))
    text = " ".join(p for p in parts if p)
    return text.replace("{partner}", partner)


def _speech(facts: dict[str, Any], rng: random.Random) -> str:
    if not facts.get("has_new", True) and not facts.get("recent_changes"):
        return "PASS"  # nothing new to add: the seat passes
    issue = facts["issue"]
    stance = facts["stance"][issue["id"]]
    pref = stance["preferred"]
    args = facts["arguments"]
    parts = ["Thank you, Chair."]
    parts.append(_response(facts, rng))
    parts += _persuaded(facts, rng)
    support = list(args.get(pref["id"], {}).get("support", []))
    rng.shuffle(support)
    parts.append(f"On {issue['title'].lower()}, {facts['role']['name']} supports {pref['label'].lower()}.")
    parts += support[:2]
    leading = facts.get("leading")
    if leading and leading["id"] != pref["id"]:
        acceptable = {o["id"] for o in stance.get("acceptable", [])}
        if leading["id"] in acceptable:
            parts.append(
                f"We could nevertheless live with {leading['label'].lower()} if that is where the room is."
            )
        else:
            parts.append(_line(rng, args.get(leading["id"], {}).get("oppose", [])))
    cond = _conditions(facts, issue["id"])
    if cond:
        parts.append(cond)
    return " ".join(p for p in parts if p)
