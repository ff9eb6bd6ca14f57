"""The student's messages that moved nothing, and why (the review, issue #66).

Built from what the game recorded, never judged again differently: each message's reading as the engine applied
it (the export's `judge_readings`: `judge.describe` of `judge.judge_message` with the event's stored payload), the
stance changes with the event that caused them, the trades struck, and the final state (red lines, unmet
conditions, pressure). A message moved nothing when no stance change names it as its cause and it struck no
trade. Why, in three kinds:

- **not read**: nothing in it could be read as backing, opposing, an offer, an ask or a trade;
- **not credible**: it offered what the student's seat cannot give (`judge.credible_offers`);
- **not enough**: it was read, but what it said was short of moving anyone who heard it: the option was already
  accepted, is a red line, or the arguments stayed short of the listener's threshold (`rules.accept_threshold`)
  — or it only opposed or asked, which move no one by themselves, or its trade was not taken.

Pure: no Django.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from simulations.kinds.negotiation.offline_debrief import the
from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import GameState

Why = Literal["not_read", "not_credible", "not_enough"]
WHY_LABELS: dict[str, str] = {
    "not_read": "not read",
    "not_credible": "read, not credible",
    "not_enough": "read, not enough",
}
EXCERPT_CHARS = 140
MAX_NAMED = 3  # listeners named in one reason
_SENTENCE = re.compile(r"(?<=[.!?;])\s+")


@dataclass(frozen=True)
class Unmoved:
    seq: int
    where: str  # "private talk with Brazil" | "debate on issue 2"
    quote: str
    why: Why
    reason: str  # one or two sentences, in the review's words

    @property
    def why_label(self) -> str:
        return WHY_LABELS[self.why]


@dataclass(frozen=True)
class Said:
    """One of the student's messages or speeches, with the event that committed it."""

    seq: int
    kind: str  # message | speech
    text: str
    audience: list[str]
    issue: str | None


def unmoved(
    scenario: Scenario,
    state: GameState,
    said: Sequence[Said],
    readings: Mapping[int, dict[str, Any]],
    changes: Sequence[Mapping[str, Any]],
) -> list[Unmoved]:
    """Every message of the student (`state.human_role`) that moved nothing, in order, with why.
    `readings`: transcript seq -> the recorded reading (`event_seq`, `items`); `changes`: the game's stance
    changes as exported (`event_seq`, `role`, `issue`, `field`, `before`, `after`, `cause_seq`)."""
    human = state.human_role
    assert human is not None
    moved = {c.get("cause_seq") for c in changes if c.get("field") in ("acceptable", "preferred")}
    traded = {c.made_seq for c in state.commitments if c.by == human}
    out = []
    for line in said:
        if line.seq in moved or line.seq in traded:
            continue
        reading = readings.get(line.seq, {"items": [], "event_seq": 0})
        why, reason = _why(scenario, state, line, reading, changes)
        out.append(Unmoved(line.seq, _where(scenario, human, line), excerpt(line.text), why, reason))
    return out


def _why(
    scenario: Scenario,
    state: GameState,
    line: Said,
    reading: Mapping[str, Any],
    changes: Sequence[Mapping[str, Any]],
) -> tuple[Why, str]:
    items: list[dict[str, Any]] = list(reading.get("items", []))
    human = state.human_role
    assert human is not None
    if not items:
        return "not_read", (
            "Nothing in it could be read as backing or opposing an option, an offer, an ask or a trade: name the "
            "option (its number or its words) and say where you stand."
        )
    offers = [i for i in items if i["kind"] == "offer"]
    false = [scenario.offer(i["offer"]).label for i in offers if not i.get("credible")]
    if false:
        return "not_credible", (
            f"It offered {_listing(false)}, which {the(scenario.display_name(human))} cannot provide: an offer counts "
            "only from a delegation able to make it."
        )
    listeners = _listeners(scenario, state, line)
    backed = [(i["issue"], i["option"]) for i in items if i["kind"] in ("support", "conditional")]
    parts = [
        _short_of(scenario, state, listeners, issue, option, reading.get("event_seq", 0), changes)
        for issue, option in dict.fromkeys(backed)
    ]
    trades = [i for i in items if i["kind"] == "trade"]
    for trade in trades:
        partner = _capital(_names([scenario.display_name(r) for r in listeners])) or "Your partner"
        parts.append(
            f"{partner} did not take the trade (your support for {trade['promise']} in return for its support for "
            f"{trade['want']}): a delegation takes a trade only for the option it prefers on the other issue, never "
            "across a red line, and only a voting country can promise a vote."
        )
    credible = [scenario.offer(i["offer"]).label for i in offers]
    if credible:
        parts.append(
            f"No delegation that heard it was waiting for {_listing(credible)} alone to accept an option."
        )
    if not parts:
        kinds = {i["kind"] for i in items}
        if "ask" in kinds:
            asked = _listing([scenario.offer(i["offer"]).label for i in items if i["kind"] == "ask"])
            parts.append(
                f"It asked for {asked}: an ask tells others your price, but only the offer itself moves."
            )
        if "oppose" in kinds:
            parts.append(
                "Opposing an option moves no one by itself: only backing, offers and trades add weight."
            )
    return "not_enough", " ".join(parts)


def _listeners(scenario: Scenario, state: GameState, line: Said) -> list[str]:
    """Whose stance the message could move: the partner of a private talk; in debate, the voting countries."""
    human = state.human_role
    if line.kind == "message":
        return [r for r in line.audience if r != human and r != scenario.chair.id]
    return [r for r in scenario.voters if r not in state.humans]


def _short_of(
    scenario: Scenario,
    state: GameState,
    listeners: Iterable[str],
    issue: str,
    option: str,
    event_seq: int,
    changes: Sequence[Mapping[str, Any]],
) -> str:
    """Why backing `option` moved none of `listeners`, one clause per kind of listener."""
    label = f"{option} ({_lower(scenario.issue(issue).option(option).label)})"
    already, red, later, short = [], [], [], []
    for role in listeners:
        if role in state.humans:
            continue
        if _accepted_at(scenario, role, issue, option, event_seq, changes):
            already.append(role)
            continue
        stance = state.stances[role][issue]
        if option in stance.red_lines and option not in stance.acceptable:
            red.append(role)
        elif option in stance.acceptable:
            later.append(role)  # it came to accept it after this message, from other words or an offer
        else:
            short.append(role)
    name = scenario.display_name
    out = []
    if short:
        needs = _needs(scenario, state, short, issue, option)
        out.append(
            f"{_names([name(r) for r in short])} had not heard enough for {label} to move "
            f"{_them(short)}: the arguments stayed short of what {_it(short)} needed to accept it{needs}."
        )
    if red:
        out.append(f"{label} is a red line for {_names([name(r) for r in red])}: no argument moves it.")
    if later:
        out.append(f"{_names([name(r) for r in later])} came to accept {label} only later.")
    if already and not (short or red or later):
        out.append(
            f"{_names([name(r) for r in already])} already accepted {label}: there was nothing to move."
        )
    elif already:
        out.append(f"{_names([name(r) for r in already])} already accepted it.")
    return " ".join(_capital(o) for o in out) or f"Nobody who heard it could still be moved on {label}."


def _accepted_at(
    scenario: Scenario,
    role: str,
    issue: str,
    option: str,
    event_seq: int,
    changes: Sequence[Mapping[str, Any]],
) -> bool:
    """Whether `role` accepted `option` just before the event `event_seq`: its brief, then every recorded change
    before that event, in order."""
    accepted = option in scenario.role(role).stances[issue].acceptable
    for c in changes:
        if c.get("event_seq", 0) >= event_seq or c.get("role") != role or c.get("issue") != issue:
            continue
        if c.get("field") == "acceptable" and c.get("after") == option:
            accepted = True
        elif c.get("field") == "withdrawn" and c.get("before") == option:
            accepted = False
    return accepted


def _needs(scenario: Scenario, state: GameState, roles: list[str], issue: str, option: str) -> str:
    """The offers the first of `roles` still needed for `option` (its unmet scenario condition), as a clause."""
    for role in roles:
        stance = state.stances[role][issue]
        for cond in stance.conditions:
            if cond.accept == option and cond.if_offered:
                offers = _listing([scenario.offer(o).label for o in cond.if_offered])
                who = scenario.display_name(role)
                return f" ({who} would have accepted it for {offers})"
    return ""


def _where(scenario: Scenario, human: str, line: Said) -> str:
    if line.kind == "message":
        partner = next((r for r in line.audience if r != human), None)
        return f"private talk with {scenario.display_name(partner)}" if partner else "private talk"
    numbers = {i.id: n for n, i in enumerate(scenario.issues, start=1)}
    return f"debate on issue {numbers.get(line.issue or '', '?')}"


def excerpt(text: str) -> str:
    """The message's first sentence, on one line, at most EXCERPT_CHARS long."""
    first = next((s for s in _SENTENCE.split(text.strip()) if s.strip()), text)
    first = " ".join(first.split())
    if len(first) <= EXCERPT_CHARS:
        return first
    return first[:EXCERPT_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + " …"


def counts(items: Sequence[Unmoved]) -> dict[str, int]:
    """How many messages moved nothing for each reason (every reason present, in order)."""
    return {why: sum(1 for u in items if u.why == why) for why in WHY_LABELS}


def _lower(label: str) -> str:
    first = label.split(" ", 1)[0]
    return label if len(first) > 1 and first.isupper() else label[:1].lower() + label[1:]


def _listing(items: list[str]) -> str:
    items = list(dict.fromkeys(items))
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _names(names: list[str]) -> str:
    names = [the(n) for n in names]
    shown = names[:MAX_NAMED]
    more = len(names) - len(shown)
    if more:
        return ", ".join(shown) + f" and {more} other{'s' if more > 1 else ''}"
    return _listing(shown)


def _capital(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:]


def _them(roles: list[str]) -> str:
    return "it" if len(roles) == 1 else "them"


def _it(roles: list[str]) -> str:
    return "it" if len(roles) == 1 else "they"
