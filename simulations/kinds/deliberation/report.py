"""`review-report.md`: the deliberation log in seed 004's format, a vote/abstain table per round, the verdict and
its fix items (pure: renders from the state alone)."""

from __future__ import annotations

from itertools import groupby

from .scenario import DeliberationScenario
from .state import MAX_ROUNDS, Ballot, ConclusionCause, DeliberationState, LogEntry

CAUSES = {
    ConclusionCause.SYNTHESIS: "synthesis reached",
    ConclusionCause.IRRECONCILABLE_VETO: "irreconcilable veto",
    ConclusionCause.ROUND_LIMIT: f"{MAX_ROUNDS}-round limit reached without consensus",
}


def _quote(text: str) -> str:
    return '"' + " ".join(text.split()) + '"'


def ballot_label(ballot: Ballot, threshold: float) -> str:
    if ballot.stance != ballot.declared:
        return (f"{ballot.stance.value} (asked {ballot.declared.value}; confidence {ballot.confidence:.2f} "
                f"below threshold {threshold:.2f})")  # fmt: skip
    return f"{ballot.stance.value} (confidence {ballot.confidence:.2f})"


def _entry_line(sc: DeliberationScenario, st: DeliberationState, e: LogEntry) -> str:
    if e.kind == "transition":
        return f"- **Transition**: {e.text}"
    if e.kind == "mediation":
        return f"- **Chairperson mediation**: {_quote(e.text)}"
    persona = sc.persona(e.speaker)
    if e.kind == "opinion":
        rnd = next(r for r in st.rounds if r.number == e.round)
        ballot = rnd.ballots[e.speaker]
        return f"- **{persona.label}**: {_quote(ballot_label(ballot, persona.confidence_threshold) + ': ' + e.text)}"
    return f"- **{persona.label}**: {_quote(e.text)}"


def render_log(scenario: DeliberationScenario, state: DeliberationState) -> list[str]:
    out: list[str] = []
    for (number, section_state), entries in groupby(state.log, key=lambda e: (e.round, e.state)):
        out += ["", f"### Round {number} — {section_state.value}", "", f"- **State**: {section_state.value}"]
        out += [_entry_line(scenario, state, e) for e in entries]
    return out


def render_votes(scenario: DeliberationScenario, state: DeliberationState) -> list[str]:
    rounds = [r for r in state.rounds if r.ballots]
    if not rounds:
        return ["", "No votes yet."]
    out = ["", "| Member | " + " | ".join(f"Round {r.number}" for r in rounds) + " |",
           "| --- |" + " --- |" * len(rounds)]  # fmt: skip
    for seat in scenario.members:
        cells = [r.ballots[seat].stance.value if seat in r.ballots else "—" for r in rounds]
        out.append(f"| {scenario.persona(seat).label} | " + " | ".join(cells) + " |")
    quorum = [
        f"{r.quorum.synthesis}/{r.quorum.effective} ({r.quorum.abstain} abstained)" if r.quorum else "—"
        for r in rounds
    ]
    out.append("| *Synthesis / effective members* | " + " | ".join(quorum) + " |")
    return out


def render_findings(state: DeliberationState) -> list[str]:
    out: list[str] = []
    for sub in state.submissions:
        out += ["", f"**Version {sub.version}** — {sub.label} ({sub.source}): {len(sub.findings)} finding(s)"]
        if sub.findings:
            out += [
                "",
                "| Severity | Tool | Code | Line | Message | House rule |",
                "| --- | --- | --- | --- | --- | --- |",
            ]
            out += [
                f"| {f.severity.value} | {f.tool} | {f.code} | {f.line} | {f.message.replace('|', '/')} | {f.rule} |"
                for f in sub.findings
            ]
        out += [f"- *Note*: {note}" for note in sub.notes]
    return out


def render_report(scenario: DeliberationScenario, state: DeliberationState) -> str:
    first = state.submissions[0]
    verdict = state.verdict.value if state.verdict else f"pending (now {state.status.value})"
    cause = f" — {CAUSES[state.cause]}" if state.cause else ""
    lines = [
        f"# Review report — {first.label}",
        "",
        f"- **Scenario**: {scenario.title}",
        f"- **Verdict**: {verdict}{cause}",
        f"- **Rounds**: {state.round} of at most {MAX_ROUNDS}",
        "",
        "## Deliberation log",
        *render_log(scenario, state),
        "",
        "## Votes per round",
        *render_votes(scenario, state),
        "",
        "## Verification results",
        *render_findings(state),
        "",
        "## Verdict",
        "",
        f"**{verdict}**{cause}",
    ]
    if state.warnings:
        lines += ["", *[f"> Warning: {w}" for w in state.warnings]]
    lines += ["", "### Fix items", ""]
    lines += [f"- [ ] {item}" for item in state.fix_items] or ["None."]
    return "\n".join(lines) + "\n"
