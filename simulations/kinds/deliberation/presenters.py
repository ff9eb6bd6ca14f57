"""What a person sees of a deliberation: the committee, the submissions with their verification results, the
rounds grouped as the report groups them, who holds the floor, the vote chart. Pure reads of the stored state;
the templates under simulations/kinds/deliberation/templates/deliberation/ draw them (and escape every text)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from simulations.services.policy.form_keys import new_form_key

from . import machine
from .report import CAUSES
from .scenario import DeliberationScenario, PersonaRole
from .state import MAX_ROUNDS, Ballot, DeliberationState, RoundRecord, Severity, Stance, State, Submission

# The seed's state names, in words for the lobby and the page (a person never reads a bare state name).
PHASES = {
    State.PROPOSAL: "Proposal: the code is tabled",
    State.DEBATE: "Debate: members give their opinions",
    State.VETO: "Veto: a critical flaw blocks the change",
    State.SYNTHESIS: "Synthesis: the chair drafts the agreement",
    State.ABSTAIN: "Abstentions: the chair checks the quorum",
    State.CONCLUSION: "Concluded",
}
STANCE_WORDS = {
    Stance.SYNTHESIS: "Agrees (synthesis)",
    Stance.OBJECT: "Objects",
    Stance.VETO: "Vetoes",
    Stance.ABSTAIN: "Abstains",
}
VERDICT_WORDS = {
    "APPROVED": "Approved",
    "REQUEST_CHANGES": "Changes requested",
    "INCONCLUSIVE": "Inconclusive: escalate to a human reviewer",
}
ROLE_WORDS = {
    PersonaRole.PROPOSER: "wrote the change; answers a veto with amended code or declines",
    PersonaRole.CHAIRPERSON: "tables the code, applies the quorum rules and mediates; does not vote",
    PersonaRole.OPERATIONS_KNOWLEDGE_MANAGER: "runs production; holds the absolute veto",
    PersonaRole.BUSINESS_DRIVER: "owns the delivery date; may offer a cost-of-delay compromise after a veto",
    PersonaRole.SECURITY: "judges security findings",
    PersonaRole.MEMBER: "elected member",
}
ROLE_NAMES = {
    PersonaRole.PROPOSER: "Proposer",
    PersonaRole.CHAIRPERSON: "Chairperson",
    PersonaRole.OPERATIONS_KNOWLEDGE_MANAGER: "Operations knowledge manager",
    PersonaRole.BUSINESS_DRIVER: "Business driver",
    PersonaRole.SECURITY: "Security",
    PersonaRole.MEMBER: "Member",
}
# The vote chart's bar, in SVG units (presentation attributes: no inline style under the CSP).
CHART_WIDTH = 300


# Short names of the states, for a transition line ("Debate → Veto").
STATE_WORDS = {
    State.PROPOSAL: "Proposal",
    State.DEBATE: "Debate",
    State.VETO: "Veto",
    State.SYNTHESIS: "Synthesis",
    State.ABSTAIN: "Abstention",
    State.CONCLUSION: "Conclusion",
}


def transition_words(text: str) -> str:
    """A logged transition ("DEBATE → VETO", the report's form) in words for the page."""
    names = [part.strip() for part in text.split("→")]
    try:
        return " → ".join(STATE_WORDS[State(name)] for name in names)
    except ValueError:
        return text


# What a member said it does, for a vote counted otherwise ("Abstains (objects with low confidence)").
DECLARED_WORDS = {
    Stance.SYNTHESIS: "agrees",
    Stance.OBJECT: "objects",
    Stance.VETO: "vetoes",
    Stance.ABSTAIN: "abstains",
}


def vote_words(ballot: Ballot) -> str:
    """The vote as counted, and what the member said when the two differ: a badge never contradicts the text."""
    if ballot.stance != ballot.declared:
        return f"{STANCE_WORDS[ballot.stance]} ({DECLARED_WORDS[ballot.declared]} with low confidence)"
    return STANCE_WORDS[ballot.stance]


def ballot_words(ballot: Ballot, threshold: float) -> str:
    """How a vote was counted, in words: a vote below its seat's threshold counts as an abstention."""
    if ballot.stance != ballot.declared:
        said = DECLARED_WORDS[ballot.declared]
        return (f"Confidence {ballot.confidence:.2f}, below this seat's threshold {threshold:.2f}: counted as an "
                f"abstention (the member {said}, but not confidently enough for the vote to count).")  # fmt: skip
    return f"Confidence {ballot.confidence:.2f}."


def phase_label(phase: str) -> str:
    try:
        return PHASES[State(phase)]
    except ValueError:
        return phase.replace("_", " ").capitalize()


def viewer(state: DeliberationState, game: Any) -> str | None:
    """The seat the page is drawn for: a class group's student's own (`Game.viewer_seat`), else the person's."""
    return getattr(game, "viewer_seat", None) or state.human_seat


def committee(
    scenario: DeliberationScenario, state: DeliberationState, you: str | None
) -> list[dict[str, Any]]:
    """The committee's personas, `you` the reader's seat; the seats other students hold are marked."""
    return [
        {
            "id": p.id, "label": p.label, "duty": ROLE_WORDS[p.role], "votes": p.votes, "can_veto": p.can_veto,
            "threshold": f"{p.confidence_threshold:.2f}", "expertise": ", ".join(p.expertise), "brief": p.brief,
            "you": p.id == you, "student": p.id in state.humans and p.id != you,
        }
        for p in scenario.personas
    ]  # fmt: skip


def submission_view(sub: Submission) -> dict[str, Any]:
    counts = Counter((f.tool, f.severity) for f in sub.findings)
    by_tool = [
        {
            "tool": tool,
            "counts": [(sev.value, counts[(tool, sev)]) for sev in Severity if counts[(tool, sev)]],
        }
        for tool in dict.fromkeys(f.tool for f in sub.findings)
    ]
    return {
        "version": sub.version, "label": sub.label, "source": sub.source, "code": sub.code,
        "findings": sub.findings, "by_tool": by_tool, "notes": sub.notes,
        "critical": len(sub.critical_findings),
    }  # fmt: skip


@dataclass
class Section:
    state: str
    entries: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class RoundView:
    number: int
    sections: list[Section]
    record: RoundRecord | None


_QUOTED_CODE = re.compile(r"`([^`\n]+)`")


def text_parts(text: str) -> list[tuple[str, str]]:
    """A line of the debate split into ("text", ...) and ("code", ...) parts: what a persona quotes in backticks
    is shown as code (the template escapes every part)."""
    pieces = _QUOTED_CODE.split(text)
    return [("code" if i % 2 else "text", piece) for i, piece in enumerate(pieces) if piece]


def rounds_view(
    scenario: DeliberationScenario, state: DeliberationState, you: str | None = None
) -> list[RoundView]:
    """The log by round, then by the state each line was said in (the report's sections); `you`: the reader's
    seat (default: the person's)."""
    you = you or state.human_seat
    records = {r.number: r for r in state.rounds}
    out: list[RoundView] = []
    for number, in_round in groupby(state.log, key=lambda e: e.round):
        sections = []
        for section_state, entries in groupby(in_round, key=lambda e: e.state):
            section = Section(state=PHASES[section_state])
            for e in entries:
                persona = scenario.persona(e.speaker)
                ballot = records[number].ballots.get(e.speaker) if e.kind == "opinion" else None
                text = transition_words(e.text) if e.kind == "transition" else e.text
                section.entries.append({
                    "speaker": persona.label, "kind": e.kind, "text": text, "parts": text_parts(text),
                    "chair": e.speaker == scenario.chair, "you": e.speaker == you,
                    "stance": vote_words(ballot) if ballot else "", "vote": ballot.stance.value if ballot else "",
                    "ballot": ballot_words(ballot, persona.confidence_threshold) if ballot else "",
                })  # fmt: skip
            sections.append(section)
        out.append(RoundView(number=number, sections=sections, record=records.get(number)))
    return out


def stance_choices(scenario: DeliberationScenario, seat: str) -> list[tuple[str, str]]:
    stances = [Stance.SYNTHESIS, Stance.OBJECT, Stance.ABSTAIN]
    if scenario.persona(seat).can_veto:
        stances.append(Stance.VETO)
    return [(s.value, STANCE_WORDS[s]) for s in stances]


def action(scenario: DeliberationScenario, step: machine.Step, you: str | None = None) -> dict[str, Any]:
    """What the panel offers now: a form when the reader's seat (`you`) holds the floor, else who is speaking
    (another student of a class group, or a persona)."""
    if step.done:
        return {"kind": "review"}
    who = scenario.persona(step.seat).label if step.seat else "The chairperson"
    if step.human and you is not None and step.seat != you:
        return {"kind": "waiting", "who": f"{who}, another student of your group"}
    if not step.human:
        return {"kind": "waiting", "who": who}
    assert step.seat is not None
    if step.actor == machine.Actor.MEMBER:
        persona = scenario.persona(step.seat)
        return {"kind": "opinion", "who": who, "stances": stance_choices(scenario, step.seat),
                "threshold": f"{persona.confidence_threshold:.2f}"}  # fmt: skip
    if step.actor == machine.Actor.PROPOSER:
        return {"kind": "amend", "who": who}
    return {"kind": "compromise", "who": who}


def verdict_view(scenario: DeliberationScenario, state: DeliberationState) -> dict[str, Any] | None:
    if state.verdict is None:
        return None
    quorum = next((r.quorum for r in reversed(state.rounds) if r.quorum), None)
    return {
        "value": state.verdict.value, "words": VERDICT_WORDS[state.verdict.value],
        "cause": CAUSES[state.cause] if state.cause else "", "fix_items": state.fix_items,
        "warnings": state.warnings, "quorum": quorum,
    }  # fmt: skip


def chart(scenario: DeliberationScenario, record: RoundRecord) -> dict[str, Any]:
    """One round's votes as bar segments (synthesis, objection, veto, abstention) and as text."""
    members = len(scenario.members)
    counts = Counter(b.stance for b in record.ballots.values())
    segments, x = [], 0
    for stance in (Stance.SYNTHESIS, Stance.OBJECT, Stance.VETO, Stance.ABSTAIN):
        width = round(CHART_WIDTH * counts[stance] / members) if members else 0
        segments.append({"stance": stance.value.lower(), "words": STANCE_WORDS[stance], "count": counts[stance],
                         "x": x, "width": width})  # fmt: skip
        x += width
    ballots = [
        {"member": scenario.persona(seat).label, "stance": vote_words(b), "vote": b.stance.value,
         "detail": ballot_words(b, scenario.persona(seat).confidence_threshold)}
        for seat in scenario.members
        if (b := record.ballots.get(seat))
    ]  # fmt: skip
    summary = ", ".join(f"{s['count']} {str(s['words']).lower()}" for s in segments if s["count"])
    return {"number": record.number, "segments": segments, "ballots": ballots, "quorum": record.quorum,
            "summary": summary, "members": members, "width": CHART_WIDTH}  # fmt: skip


def page_context(scenario: DeliberationScenario, state: DeliberationState, *, game: Any) -> dict[str, Any]:
    step = machine.next_step(scenario, state)
    you = viewer(state, game)
    return {
        "game": game,
        "scenario": scenario,
        "phase_label": phase_label(state.status.value),
        "status": state.status.value,
        "round": state.round,
        "max_rounds": MAX_ROUNDS,
        "version": game.version,
        "idem": new_form_key(),  # one key per render: a move made from it commits at most once
        "you": scenario.persona(you).label if you else "",
        "committee": committee(scenario, state, you),
        "submission": submission_view(state.submission),
        "earlier": [submission_view(s) for s in state.submissions[:-1]],
        "rounds": rounds_view(scenario, state, you),
        "action": action(scenario, step, you),
        "verdict": verdict_view(scenario, state),
        "compromise": state.current_round.compromise if state.current_round else None,
        "max_bytes": scenario.checks.max_bytes,
    }
