"""Offline personas: deterministic from the seed, no model. They argue from the real findings and their seat.

- The findings are the tools' and the committee's own reading of the code (code_reading.py, tool
  "code-reading"); a persona cites each one with its line quoted as written (a secret's line masked).
- A member judges the findings in its field (the scenario's `expertise`); with nothing in its field it is unsure
  and its confidence falls below its threshold, so the machine records an abstention, and it says what it would
  need to vote.
- When a person holds a member's seat, the others answer that person's argument on its merits: the line it
  names (is there a finding there?) and its stance against the findings.
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
import re
from dataclasses import dataclass

from simulations.engine import rng

from .machine import (
    MAX_TEXT_CHARS,
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
from .reading_sources import value_sources
from .scenario import DeliberationScenario, Persona, PersonaRole
from .state import MAX_ROUNDS, DeliberationState, Finding, Severity, Stance


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


def _cite_one(f: Finding) -> str:
    quoted = f" `{f.quote}`" if f.quote else ""
    return f"{f.code} on line {f.line}{quoted} ({f.message.rstrip('.')})"


def _cite(findings: list[Finding], limit: int = 3) -> str:
    cited = [_cite_one(f) for f in findings[:limit]]
    more = f" and {len(findings) - limit} more" if len(findings) > limit else ""
    return "; ".join(cited) + more


# What a member outside a finding's field would need before it could vote on it.
_NEEDS = {
    "secret": "to know whether the value on line {line} is a live credential and where it should be read from",
    "security": "a test that feeds hostile input to line {line} and shows what it does",
    "correctness": "a test that pins the behaviour of line {line} on its boundary",
    "style": "the house style rule line {line} breaks, and whether the on-call reader is slowed by it",
    "tests": "the test that calls the function on line {line}",
}


def _need(findings: list[Finding]) -> str:
    first = min(findings, key=lambda f: (not f.critical, f.line))
    need = _NEEDS.get(first.category, "the {category} reviewer's reading of line {line}")
    return need.format(line=first.line, category=first.category)


_SAID = {
    Stance.VETO: "vetoes",
    Stance.OBJECT: "objects",
    Stance.SYNTHESIS: "agrees",
    Stance.ABSTAIN: "abstains",
}


def _experts_view(
    sc: DeliberationScenario, st: DeliberationState, me: Persona, findings: list[Finding]
) -> str:
    """What a member whose field the findings are in has said (this round, else the last): an abstainer defers
    to that reading rather than repeat itself round after round; "" when no such member has spoken yet."""
    fields = {f.category for f in findings}
    for rnd in reversed(st.rounds[-2:]):
        for seat, ballot in rnd.ballots.items():
            expert = sc.persona(seat)
            # A person's argument is answered on its merits (_answer_person), not deferred to.
            person = seat in st.humans
            if (
                seat != me.id
                and not person
                and fields & set(expert.expertise)
                and ballot.stance != Stance.ABSTAIN
            ):
                return f"The {expert.title} has read it and {_SAID[ballot.stance]}; I defer to that reading. "
    return ""


_LINE_REF = re.compile(r"\bline\s+(\d+)", re.IGNORECASE)
_WORD = re.compile(r"[a-z_][a-z0-9_]{2,}")
_PLAIN = {
    "the", "and", "but", "this", "that", "here", "there", "safe", "fine", "line", "code", "with", "from", "only",
    "because", "merge", "merged", "not", "for", "are", "our", "its", "it's", "can", "will", "would", "should",
    "agree", "object", "think", "any", "all", "is", "was", "has", "have", "you", "one", "what", "why", "who",
}  # fmt: skip
# What would settle a security finding, by the words of its code, message or line.
_REMEDIES = [
    ("shell", "passing the command as a list of arguments, without shell=True"),
    ("system", "passing the command as a list of arguments to subprocess.run, without a shell"),
    ("eval", "`ast.literal_eval`, or a table of the operations allowed"),
    ("exec", "a table of the operations allowed instead of running text"),
    ("pickle", "a data format that cannot carry code, such as JSON"),
    ("yaml", "`yaml.safe_load`"),
    ("sql", "query parameters (`?` placeholders) instead of text spliced into the query"),
    ("select", "query parameters (`?` placeholders) instead of text spliced into the query"),
]


def _argued(text: str, findings: list[Finding]) -> Finding | None:
    """The finding a person's words are about: the one sharing most words with its code, message and line."""
    words = set(_WORD.findall(text.lower())) - _PLAIN
    scored = [
        (len(words & set(_WORD.findall(f"{f.code} {f.message} {f.quote}".lower()))), -i, f)
        for i, f in enumerate(findings)
    ]
    best = max(scored, default=None, key=lambda s: (s[0], s[1]))
    return best[2] if best is not None and best[0] > 0 else None


def _remedy(f: Finding) -> str:
    about = f"{f.code} {f.message} {f.quote}".lower()
    return next((fix for word, fix in _REMEDIES if word in about), "a fix the house rules accept")


def _on_merits(who: str, ballot_stance: Stance, f: Finding, code: str) -> str:
    """The answer to a person arguing about finding `f`, from what the code shows on its line."""
    said = _cite_one(f)
    if ballot_stance in (Stance.OBJECT, Stance.VETO):
        return f"The {who} objects to line {f.line}, and the code bears that out: {said}. "
    if f.category != "security":
        return (
            f"The {who} would keep line {f.line} as written, but that does not answer the reading: {said}. "
        )
    sources = value_sources(code, f.line)
    fix = _remedy(f)
    open_ = [v for v in sources if v.kind == "parameter" and v.checked_on is None]
    checked = [v for v in sources if v.checked_on is not None]
    if open_:
        v = open_[0]
        origin = f"`{v.name}`, built from `{v.via}`," if v.via else f"`{v.name}`"
        return (f"The {who} holds that line {f.line} is safe, but `{f.quote}` takes {origin} straight from "
                f"whoever calls `{v.function}`, and nothing checks it before line {f.line}: the caller decides "
                f"what runs. {fix[0].upper() + fix[1:]} would settle it. ")  # fmt: skip
    if checked:
        v = checked[0]
        return (f"The {who} has a point: `{v.name}` is checked on line {v.checked_on} before it reaches line "
                f"{f.line}. The house rules still count `{f.quote}` critical; {fix} would remove the doubt. ")  # fmt: skip
    fixed = ", ".join(f"`{v.name}`" for v in sources) or "nothing from outside"
    return (f"The {who} is right that line {f.line} runs only what the code fixes itself ({fixed}); the house "
            f"rules still count it critical, and {fix} costs little. ")  # fmt: skip


def _answer_person(sc: DeliberationScenario, st: DeliberationState, me: Persona) -> str:
    """One sentence answering a person in a member's seat (in a class group's game, the first of them who spoke),
    on the merits: the line it names, else the finding its words are about (what the code shows there), else its
    stance against the findings; "" when no person has spoken in this or the last round."""
    heard = [
        (seat, ballot)
        for seat in st.humans
        if seat != me.id and seat in sc.members
        for rnd in reversed(st.rounds[-2:])
        if (ballot := rnd.ballots.get(seat)) is not None
    ]
    if not heard:
        return ""
    seat, ballot = heard[0]
    who = sc.persona(seat).title
    findings = st.submission.findings
    lines = [int(n) for n in _LINE_REF.findall(ballot.text)]
    if lines:
        n = lines[0]
        on_line = [f for f in findings if f.line == n]
        if on_line:
            return f"The {who} points at line {n}, and rightly: {_cite_one(on_line[0])}. "
        return f"The {who} points at line {n}, but neither the tools nor my reading find a flaw there. "
    argued = _argued(ballot.text, findings)
    if argued is not None and argued.category != "secret":
        return _on_merits(who, ballot.declared, argued, st.submission.code)
    critical = [f for f in findings if f.critical]
    if ballot.declared == Stance.SYNTHESIS and critical:
        return f"The {who} would merge, but that does not answer {_cite_one(critical[0])}. "
    if ballot.declared in (Stance.OBJECT, Stance.VETO) and not findings:
        return f"The {who} objects but names no line, and I find no flaw to fix. "
    if ballot.declared in (Stance.OBJECT, Stance.VETO) and findings:
        return f"The {who} objects; the findings bear that out: {_cite_one(findings[0])}. "
    if ballot.declared == Stance.SYNTHESIS and not findings:
        return f"The {who} agrees, and I find nothing either. "
    return ""


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
        return Move(Event.COMPROMISE_OFFERED, _compromise(scenario, state, r))
    (event,) = step.events  # the chair's guards are exclusive: exactly one closing event is open
    return Move(event, PAYLOADS[event].model_validate({"text": _chair_line(scenario, state, event, r)}))


def _opinion(sc: DeliberationScenario, st: DeliberationState, persona: Persona, r: random.Random) -> Opinion:
    opinion = _own_opinion(sc, st, persona, r)
    answer = _answer_person(sc, st, persona)
    if not answer:
        return opinion
    return opinion.model_copy(update={"text": (answer + opinion.text)[:MAX_TEXT_CHARS]})


def _own_opinion(
    sc: DeliberationScenario, st: DeliberationState, persona: Persona, r: random.Random
) -> Opinion:
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
                "The release is blocked by {n} critical finding(s), first {cite}; I want the fastest safe way to "
                "ship.",
                "{n} critical finding(s) stop the release, first {cite}. I object to shipping as is, and to a long "
                "delay.",
            ], n=len(critical), cite=_cite_one(critical[0]))  # fmt: skip
            return Opinion(seat=persona.id, stance=Stance.OBJECT, confidence=confidence, text=text)
        text = _pick(r, [
            "Nothing here blocks the release date; I support merging.",
            "From the delivery side this is ready: no blocking finding, no cost of delay.",
            "Good for the roadmap. I agree to merge as the committee decides on the details.",
        ])  # fmt: skip
        return Opinion(seat=persona.id, stance=Stance.SYNTHESIS, confidence=confidence, text=text)

    if not findings:
        text = _pick(r, [
            "The verification results are clean (secrets scan, bandit, ruff, and my own reading of the code): "
            "I agree to merge.",
            "No finding from any tool, and reading the code I find nothing in my field that worries me. Approve.",
            "Clean run on every check, and the code reads clean. From the {title}'s side this can go in.",
        ], title=persona.title)  # fmt: skip
        return Opinion(seat=persona.id, stance=Stance.SYNTHESIS, confidence=high, text=text)

    if not mine:
        # Nothing in this member's field: it is unsure, so its confidence falls below its own threshold, and it
        # says what it would need before it could vote.
        unsure = round(max(0.0, persona.confidence_threshold - 0.05 - 0.2 * r.random()), 2)
        text = _pick(r, [
            "The findings ({fields}) are outside my field: {cite}. To vote I would need {need}; until then I "
            "abstain.",
            "I cannot judge {fields} findings with confidence ({cite}). I abstain; to vote I would need {need}.",
            "Not my field ({fields}): {cite}. I abstain rather than guess; what I would need to vote is {need}.",
        ], fields=", ".join(sorted({f.category for f in findings})), cite=_cite(findings, limit=1),
           need=_need(findings))  # fmt: skip
        text = _experts_view(sc, st, persona, findings) + text
        # It declares the abstention its words give (a badge then agrees with the text), below its threshold.
        return Opinion(seat=persona.id, stance=Stance.ABSTAIN, confidence=unsure, text=text)

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

    if any(f.severity == Severity.MAJOR for f in mine):
        # A major flaw read in the code is a bug a reviewer would not let through: changes are requested, and
        # the member agrees to the change only on those fixes.
        text = _pick(r, [
            "This is wrong as written, so changes first: {cite}. I agree to the change once that is fixed.",
            "Reading the code I find {count} flaw(s) in my field that must be fixed first: {cite}. On that "
            "condition I agree.",
        ], cite=_cite(mine), count=len(mine))  # fmt: skip
    else:
        text = _pick(r, [
            "Mergeable once fixed: {cite}.",
            "No blocker, but {count} fix item(s) in my field: {cite}. I agree on that condition.",
            "I agree to the change with fixes: {cite}.",
        ], cite=_cite(mine), count=len(mine))  # fmt: skip
    return Opinion(seat=persona.id, stance=Stance.SYNTHESIS, confidence=high, text=text,
                   fix_items=[f.as_fix_item() for f in mine])  # fmt: skip


def _compromise(sc: DeliberationScenario, st: DeliberationState, r: random.Random) -> CompromiseOffer:
    # The scenario's figures applied to the findings on the table: the cost of the days fixing them first would
    # take. It changes when the findings do, not round by round.
    delivery = sc.delivery
    critical = st.submission.critical_findings
    days = delivery.delay_days([f.severity for f in critical])
    total = round(days * delivery.cost_per_day)
    conditions = [f"fix {f.code} on line {f.line} within one sprint (follow-up ticket)" for f in critical[:9]]
    conditions.append(r.choice([
        "ship behind a feature flag, off by default",
        "limit the change to the internal network until the fix lands",
        "add monitoring and an on-call runbook entry for this path",
    ]))  # fmt: skip
    text = _pick(r, [
        "Each day of delay costs about {cur}{cost:,}. Fixing {n} critical finding(s) first ({cite}) takes about "
        "{days:g} day(s): {cur}{total:,} of delay. Ship now under conditions and fix in the next sprint.",
        "Cost of delay is roughly {cur}{cost:,} a day, and {n} critical finding(s) ({cite}) need about {days:g} "
        "day(s) of work: {cur}{total:,}. I propose a compromise: merge with conditions that cap the risk.",
    ], cur=delivery.currency, cost=delivery.cost_per_day, n=len(critical), cite=_cite(critical, limit=2),
       days=days, total=total)  # fmt: skip
    return CompromiseOffer(text=text[:MAX_TEXT_CHARS], conditions=conditions)


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
