"""Prompt building: what one AI seat is told for one turn, from what that seat may see.

Prompts are template files in `prompt_templates/<version>/` (``string.Template``: ``$name`` placeholders); every
model call records the version, which includes a digest of the files, so an edited template is a new version.
A prompt carries the seat's own briefs, persona and stance, its rolling memory (a bounded digest of older entries
plus a recent window, see `memory.py`) and a machine-readable facts block. Real models read the prose; the offline
provider writes from the facts block.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from string import Template
from typing import Any

from simulations.engine.visibility import visible_to
from simulations.kinds.negotiation import machine, offline_debrief, rules
from simulations.kinds.negotiation.debrief_facts import DebriefFacts
from simulations.kinds.negotiation.machine import Step
from simulations.kinds.negotiation.memory import build_memory
from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.situation import negotiation_facts, option_ref, situation_text
from simulations.kinds.negotiation.state import GameState

TEMPLATE_SET = "v2"
TEMPLATE_DIR = Path(__file__).resolve().parent / "prompt_templates" / TEMPLATE_SET
FACTS_OPEN, FACTS_CLOSE = "<<FACTS>>", "<<END FACTS>>"
PASS = "PASS"
TASKS = {"talk_open", "talk", "talk_final", "speech"}


@lru_cache(maxsize=1)
def _templates() -> dict[str, Template]:
    return {p.stem: Template(p.read_text(encoding="utf-8")) for p in sorted(TEMPLATE_DIR.glob("*.txt"))}


@lru_cache(maxsize=1)
def prompt_version() -> str:
    digest = hashlib.sha256()
    for path in sorted(TEMPLATE_DIR.glob("*.txt")):
        digest.update(path.name.encode() + path.read_bytes())
    return f"{TEMPLATE_SET}-{digest.hexdigest()[:8]}"


def render(name: str, **values: object) -> str:
    return _templates()[name].substitute({k: str(v) for k, v in values.items()}).strip()


@dataclass(frozen=True)
class SeenEntry:
    seq: int
    speaker: str
    kind: str
    visibility: str
    audience: list[str]
    text: str
    # Where it was said: what a page's round and issue headings follow (prompts do not use them).
    round: int = 0
    issue: str = ""


@dataclass(frozen=True)
class Prompt:
    messages: list[dict[str, str]]
    context: list[int]  # the transcript sequence numbers the prompt was built from (digest and window)
    facts: dict[str, Any]
    version: str


def _stance_facts(scenario: Scenario, state: GameState, role: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for issue in scenario.issues:
        stance = state.stances[role][issue.id]
        conditions = [
            {
                "accept": option_ref(scenario, c.accept),
                "accept_label": issue.option(c.accept).label,
                "offers": [{"id": o, "label": scenario.offer(o).label} for o in c.if_offered],
                "needs": " and ".join(scenario.offer(o).label for o in c.if_offered),
            }
            for c in stance.conditions
            if c.if_offered
        ]
        out[issue.id] = {
            "title": issue.title,
            "preferred": option_ref(scenario, stance.preferred),
            "acceptable": [option_ref(scenario, o) for o in stance.acceptable],
            "conditions_open": conditions,
            "red_lines": list(stance.red_lines),
        }
    return out


def build_prompt(
    scenario: Scenario,
    state: GameState,
    step: Step,
    entries: list[SeenEntry],
    recent_changes: list[dict[str, Any]],
    *,
    with_facts: bool = True,
) -> Prompt:
    """The messages for one AI turn; `entries` may hold anything, only what the seat may see is used."""
    role_id, purpose = step.role, step.purpose
    assert role_id is not None and purpose in TASKS
    role = scenario.role(role_id)
    seen = _one_talk_at_a_time(state, role_id, [e for e in entries if visible_to(e, role_id)])
    memory = build_memory(scenario, seen, role_id)
    variant = role.opening(state.round1.openings[role_id])
    facts: dict[str, Any] = {
        "purpose": purpose,
        "seed": state.seed,
        "turn": state.event_seq + 1,
        "role": {"id": role.id, "name": role.name, "persona": variant.persona.name},
        "stance": _stance_facts(scenario, state, role_id),
    }
    values: dict[str, object] = {}
    issue_id: str | None = None
    if purpose.startswith("talk"):
        convo = state.active_conversation  # in Round 2's lanes, the state is focused on the step's lane
        assert convo is not None
        student = state.talker_of(convo)
        assert student is not None
        partner = scenario.display_name(student)
        facts["partner"] = {"id": student, "name": partner}
        facts["messages_so_far"] = convo.partner_turns + int(convo.partner_final)
        values = {
            "partner_name": partner, "message_number": convo.partner_turns + 1,
            "messages_each": scenario.talk_messages_each,
        }  # fmt: skip
    else:
        issue_state = state.active_issue
        assert issue_state is not None
        issue = scenario.issue(issue_state.issue_id)
        leading, _ = rules.select_proposal(scenario, state, issue.id)
        facts["issue"] = {"id": issue.id, "title": issue.title}
        facts["leading"] = option_ref(scenario, leading)
        facts["has_new"] = machine.ai_has_something_new(scenario, state, role_id)
        facts["debate_round"] = issue_state.debate_round
        issue_id = issue.id
        values = {
            "issue_number": state.round3.active_issue_index + 1, "issue_title": issue.title,
            "debate_round": issue_state.debate_round, "leading": f"{leading} {issue.option(leading).label}",
        }  # fmt: skip
    facts.update(negotiation_facts(scenario, state, seen, role_id, purpose, recent_changes, issue_id))
    values["situation"] = situation_text(facts)
    system = _system_text(scenario, state, role_id, memory.digest, render(purpose, **values))
    if with_facts:  # only the offline model reads it; real models get the same content in the prose above
        system += f"\n\n{FACTS_OPEN}\n{json.dumps(facts, ensure_ascii=False, sort_keys=True)}\n{FACTS_CLOSE}"
    # Each entry is quoted (JSON string escaping), so a newline in someone's text can never start a line that
    # looks like another speaker's entry.
    transcript = "\n".join(
        f"[{e.seq}] {scenario.display_name(e.speaker)}: {json.dumps(e.text, ensure_ascii=False)}"
        for e in memory.window
    )
    user = f"The latest exchanges (most recent last):\n{transcript or '(nothing yet)'}\n\nYour turn."
    return Prompt(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        context=sorted(
            {
                *memory.digest_seqs,
                *(e.seq for e in memory.window),
                *(h["seq"] for h in facts["addressed"]),
                *(r["seq"] for r in facts["requests"]),
            }
        ),
        facts=facts,
        version=prompt_version(),
    )


def _one_talk_at_a_time(state: GameState, role_id: str, seen: list[SeenEntry]) -> list[SeenEntry]:
    """In Round 2's lanes (a game several students share) a delegation may be in two talks at once: it answers each
    from that talk alone, the other open talk's lines left out until that talk has closed, so that nothing said in
    one can reach the other while both run (a pair of parties has one talk: its audience names it)."""
    if not state.round2.lanes:
        return seen
    talk = state.active_conversation  # the state is focused on the step's lane
    others = [
        {state.talker_of(c), c.partner}
        for c in state.round2.conversations
        if c is not talk and c.phase != "CLOSED" and role_id in (state.talker_of(c), c.partner)
    ]
    if not others:
        return seen
    return [e for e in seen if e.visibility != "private" or set(e.audience) not in others]


def _system_text(scenario: Scenario, state: GameState, role_id: str, digest: list[str], task: str) -> str:
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
    return render(
        "system",
        persona_name=variant.persona.name,
        persona_title=variant.persona.title,
        role_name=role.name,
        chair_name=scenario.chair.name,
        title=scenario.title,
        posture=variant.summary,
        public_brief=role.public_brief.strip(),
        interests=brief.interests.strip(),
        priorities="; ".join(brief.priorities),
        red_lines="; ".join(brief.red_lines),
        can_trade="; ".join(brief.can_trade),
        positions="\n".join(positions),
        memory="\n".join(f"- {line}" for line in digest) or "- (nothing older than the latest exchanges)",
        task=task,
    )


def build_summary_prompt(facts: DebriefFacts, *, with_facts: bool = True) -> Prompt:
    """The debrief call: the facts in prose for a real model (and as a facts block for the offline model)."""
    data = facts.model_dump(mode="json")
    system = render("summary", human_name=facts.student, facts=offline_debrief.render(facts))
    if with_facts:
        system += f"\n\n{FACTS_OPEN}\n{json.dumps(data, ensure_ascii=False, sort_keys=True)}\n{FACTS_CLOSE}"
    return Prompt(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": "Write the debrief."}],
        context=[],
        facts=data,
        version=prompt_version(),
    )


def build_judge_prompt(scenario: Scenario, speaker: str, text: str) -> Prompt:
    options = "; ".join(f"{o.id}: {o.label}" for i in scenario.issues for o in i.options)
    offers = "; ".join(f"{o.id}: {o.label}" for o in scenario.offers)
    content = render(
        "judge", title=scenario.title, options=options, offers=offers,
        speaker=scenario.display_name(speaker), text=text,
    )  # fmt: skip
    return Prompt(
        messages=[{"role": "user", "content": content}], context=[], facts={}, version=prompt_version()
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
