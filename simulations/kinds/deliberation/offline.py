"""Offline personas: deterministic from the seed, no model. They argue from the real findings and their seat.

- A member judges the findings in its field (the scenario's `expertise`); with nothing in its field it is unsure
  and its confidence falls below its threshold, so the machine records an abstention.
- A member with a veto vetoes a critical finding in its field; others object to critical flaws.
- Non-critical findings in a member's field become its fix items (so style-only code ends REQUEST_CHANGES).
- The business driver judges delivery, not code: it objects to a blocked release, offers a cost-of-delay
  compromise after a veto where the house rules allow one, and agrees to its own compromise.
- The proposer amends when it has amended code (a sample's `amended`), else declines.
- The chairperson closes each step with a line built from the tally and the findings.
Wording varies with the seed; the decision never does.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from simulations.engine import rng

from .machine import (
    PAYLOADS,
    Actor,
    AmendmentDeclined,
    CompromiseOffer,
    Event,
    Opinion,
    Payload,
    Step,
    round_quorum,
)
from .scenario import DeliberationScenario, Persona, PersonaRole
from .state import MAX_ROUNDS, DeliberationState, Finding, Stance


@dataclass(frozen=True)
class AmendedCode:
    """The proposer's amended code: the driver checks it and turns it into an AMENDED_CODE_SUBMITTED payload."""

    code: str
    filename: str
    label: str


@dataclass(frozen=True)
class Move:
    event: Event
    payload: Payload | None = None
    amended: AmendedCode | None = None


def _pick(r: random.Random, options: list[str], **values: object) -> str:
    return r.choice(options).format(**values)


def _cite(findings: list[Finding], limit: int = 3) -> str:
    cited = [f"{f.code} on line {f.line} ({f.message.rstrip('.')})" for f in findings[:limit]]
    more = f" and {len(findings) - limit} more" if len(findings) > limit else ""
    return "; ".join(cited) + more


def decide(
    scenario: DeliberationScenario,
    state: DeliberationState,
    step: Step,
    *,
    amended: AmendedCode | None = None,
) -> Move:
    """The offline move for whoever holds the floor in `step`."""
    r = rng.stream(state.seed, "deliberation", state.event_seq, step.seat)
    if step.actor == Actor.MEMBER:
        assert step.seat is not None
        return Move(Event.OPINION_GIVEN, _opinion(scenario, state, scenario.persona(step.seat), r))
    if step.actor == Actor.PROPOSER:
        if amended is not None and len(state.submissions) == 1:
            return Move(Event.AMENDED_CODE_SUBMITTED, amended=amended)
        text = _pick(r, [
            "I have no other version to offer: the code is what the service needs as it stands.",
            "I cannot amend this in time; I ask the committee to weigh the delivery date.",
            "The change stays as submitted; rewriting it is out of scope for this release.",
        ])  # fmt: skip
        return Move(Event.AMENDMENT_DECLINED, AmendmentDeclined(text=text))
    if step.actor == Actor.BUSINESS_DRIVER:
        return Move(Event.COMPROMISE_OFFERED, _compromise(state, r))
    (event,) = step.events  # the chair's guards are exclusive: exactly one closing event is open
    return Move(event, PAYLOADS[event].model_validate({"text": _chair_line(scenario, state, event, r)}))


def _opinion(sc: DeliberationScenario, st: DeliberationState, persona: Persona, r: random.Random) -> Opinion:
    findings = st.submission.findings
    critical = [f for f in findings if f.critical]
    mine = [f for f in findings if f.category in persona.expertise]
    mine_critical = [f for f in mine if f.critical]
    rnd = st.current_round
    compromise = rnd.compromise if rnd else None
    high = round(0.8 + 0.18 * r.random(), 2)

    if persona.role == PersonaRole.BUSINESS_DRIVER:
        confidence = round(max(persona.confidence_threshold + 0.2, 0.6 + 0.2 * r.random()), 2)
        if critical and compromise:
            text = _pick(r, [
                "Under the compromise we ship on time and the risk is fenced in by conditions. I agree.",
                "The conditions cap the risk; every day of delay costs more than the follow-up work. Agreed.",
            ])  # fmt: skip
            return Opinion(seat=persona.id, stance=Stance.SYNTHESIS, confidence=confidence, text=text,
                           fix_items=list(compromise.conditions))  # fmt: skip
        if critical:
            text = _pick(r, [
                "The release is blocked by {n} critical finding(s); I want the fastest safe way to ship.",
                "{n} critical finding(s) stop the release. I object to shipping as is, and to a long delay.",
            ], n=len(critical))  # fmt: skip
            return Opinion(seat=persona.id, stance=Stance.OBJECT, confidence=confidence, text=text)
        text = _pick(r, [
            "Nothing here blocks the release date; I support merging.",
            "From the delivery side this is ready: no blocking finding, no cost of delay.",
            "Good for the roadmap. I agree to merge as the committee decides on the details.",
        ])  # fmt: skip
        return Opinion(seat=persona.id, stance=Stance.SYNTHESIS, confidence=confidence, text=text)

    if not findings:
        text = _pick(r, [
            "The verification results are clean (secrets scan, bandit, ruff): I agree to merge.",
            "No finding from any tool, and nothing in my field worries me. Approve.",
            "Clean run on every check. From the {title}'s side this can go in.",
        ], title=persona.title)  # fmt: skip
        return Opinion(seat=persona.id, stance=Stance.SYNTHESIS, confidence=high, text=text)

    if not mine:
        # Nothing in this member's field: it is unsure, so its confidence falls below its own threshold.
        unsure = round(max(0.0, persona.confidence_threshold - 0.05 - 0.2 * r.random()), 2)
        text = _pick(r, [
            "The findings ({fields}) are outside my field; I am not confident enough to vote.",
            "I cannot judge {fields} findings with confidence; I leave this to the members who can.",
            "Not my area ({fields}). I abstain rather than guess.",
        ], fields=", ".join(sorted({f.category for f in findings})))  # fmt: skip
        lean = Stance.OBJECT if critical else Stance.SYNTHESIS
        return Opinion(seat=persona.id, stance=lean, confidence=unsure, text=text)

    if mine_critical and persona.can_veto:
        held = " The compromise does not change that." if compromise else ""
        text = _pick(r, [
            "Critical flaw: {cite}. The house rules make this blocking; I veto.{held}",
            "I exercise my veto. The verification results show {cite}, and that cannot be merged.{held}",
            "Veto. {cite}: this is exactly what the house rules call critical.{held}",
        ], cite=_cite(mine_critical), held=held)  # fmt: skip
        return Opinion(seat=persona.id, stance=Stance.VETO, confidence=high, text=text,
                       fix_items=[f.as_fix_item() for f in mine_critical])  # fmt: skip

    if critical:
        text = _pick(r, [
            "I object: {cite} must be resolved before I can agree.",
            "Not mergeable while {cite} stands.",
        ], cite=_cite(critical))  # fmt: skip
        return Opinion(seat=persona.id, stance=Stance.OBJECT, confidence=high, text=text,
                       fix_items=[f.as_fix_item() for f in mine])  # fmt: skip

    text = _pick(r, [
        "Mergeable once fixed: {cite}.",
        "No blocker, but {count} fix item(s) in my field: {cite}. I agree on that condition.",
        "I agree to the change with fixes: {cite}.",
    ], cite=_cite(mine), count=len(mine))  # fmt: skip
    return Opinion(seat=persona.id, stance=Stance.SYNTHESIS, confidence=high, text=text,
                   fix_items=[f.as_fix_item() for f in mine])  # fmt: skip


def _compromise(st: DeliberationState, r: random.Random) -> CompromiseOffer:
    # A base cost fixed for the whole deliberation, so the figure grows round by round as delay accumulates.
    per_day = (8 + rng.stream(st.seed, "cost-of-delay").randint(0, 8)) * 250 * st.round
    conditions = [f"fix {f.code} on line {f.line} within one sprint (follow-up ticket)"
                  for f in st.submission.critical_findings]  # fmt: skip
    conditions.append(r.choice([
        "ship behind a feature flag, off by default",
        "limit the change to the internal network until the fix lands",
        "add monitoring and an on-call runbook entry for this path",
    ]))  # fmt: skip
    text = _pick(r, [
        "Each day of delay costs about €{cost:,}. Ship now under conditions and fix in the next sprint.",
        "Cost of delay is roughly €{cost:,} a day. I propose a compromise: merge with conditions that cap the risk.",
    ], cost=per_day)  # fmt: skip
    return CompromiseOffer(text=text, conditions=conditions)


def _chair_line(sc: DeliberationScenario, st: DeliberationState, event: Event, r: random.Random) -> str:
    sub = st.submission
    q = round_quorum(sc, st)
    tally = (
        f"{q.tally.synthesis} synthesis, {q.tally.objections} objecting, {q.tally.veto} veto, "
        f"{q.tally.abstain} abstaining of {q.tally.members}"
        if q
        else ""
    )
    crit = len(sub.critical_findings)
    lines: dict[Event, list[str]] = {
        Event.TABLE_CODE: [
            "I table version {v} of '{label}'. Verification results: {n} finding(s), {crit} critical.",
            "Version {v} of '{label}' is before the committee; the checks report {n} finding(s) ({crit} critical).",
        ],
        Event.VETO_EXERCISED: [
            "The round closes with {tally}. A single veto overrides synthesis: the change is vetoed.",
            "Tally: {tally}. The veto stands; I ask the proposer and the business driver for a way forward.",
        ],
        Event.CONSENSUS_REACHED: ["Tally: {tally}. That is consensus; I will synthesize the agreement."],
        Event.ABSTENTION_DECLARED: [
            "Tally: {tally}. Abstainers leave the denominator; I run the quorum check."
        ],
        Event.CONSENSUS_NOT_REACHED: ["Tally: {tally}. Less than two thirds agree; we debate again."],
        Event.QUORUM_MET: ["Quorum met without the abstainers ({tally}). The agreement is final."],
        Event.QUORUM_NOT_MET: ["Quorum not met ({tally}); another round of debate."],
        Event.AGREEMENT_FINALIZED: ["I record the agreement and close the review."],
        Event.IRRECONCILABLE: [
            "No amendment and no compromise: the veto is irreconcilable. The review ends with changes requested.",
        ],
        Event.ROUND_LIMIT_REACHED: [
            "Round {round} of {max} ends without consensus; I conclude the review is inconclusive and escalate to a human.",
        ],
    }
    return _pick(r, lines[event], v=sub.version, label=sub.label, n=len(sub.findings), crit=crit, tally=tally,
                 round=st.round, max=MAX_ROUNDS)  # fmt: skip
