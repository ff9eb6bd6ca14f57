"""Prompt building: what one AI seat is told for one turn, from what that seat may see.

Each prompt carries the seat's own briefs, its current stance, the recent transcript it is allowed to see, and a
machine-readable facts block. Real models read the prose; the offline provider writes from the facts block.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from simulations.engine import judge, rules
from simulations.engine.mercury import Step
from simulations.engine.scenario import Scenario
from simulations.engine.state import GameState
from simulations.engine.visibility import visible_to

PROMPT_VERSION = "mercury-prompts/1"
RECENT_WINDOW = 12
FACTS_OPEN, FACTS_CLOSE = "<<FACTS>>", "<<END FACTS>>"

INSTRUCTIONS = {
    "talk": "This is a private talk in Round 2. Reply to your counterpart in 50-120 words: answer what they "
    "said, state what you want, and ask for something concrete.",
    "talk_final": "The chair has called time. Give your final message of this private talk in 40-100 words: "
    "sum up what you can and cannot accept.",
    "speech": "It is your turn in the Round 3 public debate on the issue below. Speak for 60-140 words on that "
    "issue only: your position, your reasons, and what would move you.",
    "summary": "Write the debrief of this game for the student, in 120-250 words, from the facts below.",
}


@dataclass(frozen=True)
class SeenEntry:
    seq: int
    speaker: str
    kind: str
    visibility: str
    audience: list[str]
    text: str


@dataclass(frozen=True)
class Prompt:
    messages: list[dict[str, str]]
    context: list[int]  # the transcript sequence numbers given to the model
    facts: dict[str, Any]
    version: str = PROMPT_VERSION


def _option_ref(scenario: Scenario, option_id: str) -> dict[str, str]:
    for issue in scenario.issues:
        for option in issue.options:
            if option.id == option_id:
                return {"id": option.id, "label": option.label, "issue": issue.id}
    raise KeyError(option_id)


def _stance_facts(scenario: Scenario, state: GameState, role: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for issue in scenario.issues:
        stance = state.stances[role][issue.id]
        conditions = [
            {
                "accept_label": issue.option(c.accept).label,
                "needs": " and ".join(scenario.offer(o).label for o in c.if_offered),
            }
            for c in stance.conditions
            if c.if_offered
        ]
        out[issue.id] = {
            "title": issue.title,
            "preferred": _option_ref(scenario, stance.preferred),
            "acceptable": [_option_ref(scenario, o) for o in stance.acceptable],
            "conditions_open": conditions,
        }
    return out


def _last_heard(scenario: Scenario, seen: list[SeenEntry], role: str) -> dict[str, Any] | None:
    for entry in reversed(seen):
        if entry.speaker == role:
            return None  # nothing new since this seat last spoke
        if entry.kind in ("message", "speech", "opening"):
            signals = judge.read_signals(scenario, entry.text)
            return {
                "speaker": scenario.display_name(entry.speaker),
                "supports": [
                    _option_ref(scenario, o) for opts in signals.support.values() for o in sorted(opts)
                ],
                "offers": [scenario.offer(o).label for o in sorted(signals.offers)],
            }
    return None


def build_prompt(
    scenario: Scenario,
    state: GameState,
    step: Step,
    entries: list[SeenEntry],
    recent_changes: list[dict[str, Any]],
) -> Prompt:
    """The messages for one AI turn; `entries` may hold anything, only what the seat may see is used."""
    role_id = step.role
    assert role_id is not None and step.purpose in INSTRUCTIONS
    role = scenario.role(role_id)
    seen = [e for e in entries if visible_to(e, role_id)]
    window = seen[-RECENT_WINDOW:]
    variant = role.opening(state.round1.openings[role_id])
    own_messages = 0
    facts: dict[str, Any] = {
        "purpose": step.purpose,
        "seed": state.seed,
        "turn": state.event_seq + 1,
        "role": {"id": role.id, "name": role.name, "persona": variant.persona.name},
        "stance": _stance_facts(scenario, state, role_id),
        "talk": role.talk.model_dump(),
        "last_heard": _last_heard(scenario, seen, role_id),
        "recent_changes": recent_changes,
    }
    relevant: set[str] = {s.preferred for s in state.stances[role_id].values()}
    if step.purpose in ("talk", "talk_final"):
        convo = state.round2.conversations[-1]
        assert state.human_role is not None
        own_messages = convo.partner_turns + int(convo.partner_final)
        facts["partner"] = {"id": state.human_role, "name": scenario.display_name(state.human_role)}
        facts["messages_so_far"] = own_messages
    if step.purpose == "speech":
        issue_state = state.active_issue
        assert issue_state is not None
        issue = scenario.issue(issue_state.issue_id)
        leading, _ = rules.select_proposal(scenario, state, issue.id)
        facts["issue"] = {"id": issue.id, "title": issue.title}
        facts["leading"] = _option_ref(scenario, leading)
        relevant |= {o.id for o in issue.options}
    if facts["last_heard"]:
        relevant |= {o["id"] for o in facts["last_heard"]["supports"]}
    arguments = role.arguments
    facts["arguments"] = {
        opt: {"support": arguments[issue_id].support[opt], "oppose": arguments[issue_id].oppose[opt]}
        for opt in sorted(relevant, key=rules.option_sort_key)
        for issue_id in [_option_ref(scenario, opt)["issue"]]
    }
    system = (
        _system_text(scenario, state, role_id, step.purpose)
        + f"\n\n{FACTS_OPEN}\n"
        + json.dumps(facts, ensure_ascii=False, sort_keys=True)
        + f"\n{FACTS_CLOSE}"
    )
    transcript = "\n".join(f"[{e.seq}] {scenario.display_name(e.speaker)}: {e.text}" for e in window)
    user = f"Transcript you have seen (most recent last):\n{transcript or '(nothing yet)'}\n\nYour turn."
    return Prompt(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        context=[e.seq for e in window],
        facts=facts,
    )


def _system_text(scenario: Scenario, state: GameState, role_id: str, purpose: str) -> str:
    role = scenario.role(role_id)
    variant = role.opening(state.round1.openings[role_id])
    brief = role.confidential_brief
    positions = []
    for issue in scenario.issues:
        st = state.stances[role_id][issue.id]
        positions.append(
            f"- {issue.title}: you prefer {st.preferred} ({issue.option(st.preferred).label}); "
            f"you can accept {', '.join(st.acceptable)}."
        )
    return "\n".join(
        [
            f"You are {variant.persona.name}, {variant.persona.title}, speaking for {role.name} in a UN-style "
            f"negotiation chaired by {scenario.chair.name}: {scenario.title}.",
            f"Your posture: {variant.summary}",
            f"Public brief: {role.public_brief.strip()}",
            f"Confidential interests (never quote them): {brief.interests.strip()}",
            f"Priorities: {'; '.join(brief.priorities)}. Red lines: {'; '.join(brief.red_lines)}.",
            f"What you can trade: {'; '.join(brief.can_trade)}.",
            "Your current positions:",
            *positions,
            "Speak only for your own delegation, in plain text, without headings. Never claim a vote, a decision "
            "of the chair or a rule change; the chair alone runs the meeting.",
            INSTRUCTIONS[purpose],
        ]
    )


def build_summary_prompt(facts: dict[str, Any]) -> Prompt:
    system = (
        "You are the debrief writer of a negotiation-training game. " + INSTRUCTIONS["summary"]
        + f"\n\n{FACTS_OPEN}\n{json.dumps(facts, ensure_ascii=False, sort_keys=True)}\n{FACTS_CLOSE}"
    )  # fmt: skip
    return Prompt(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": "Write the debrief."}],
        context=[],
        facts=facts,
    )


def read_facts(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The facts block of a prompt (used by the offline provider)."""
    for message in messages:
        content = str(message.get("content", ""))
        start = content.find(FACTS_OPEN)
        end = content.find(FACTS_CLOSE)
        if start != -1 and end > start:
            facts: dict[str, Any] = json.loads(content[start + len(FACTS_OPEN) : end])
            return facts
    raise ValueError("prompt has no facts block")
