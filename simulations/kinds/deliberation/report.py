"""`review-report.md`: the deliberation log in seed 004's format, a vote/abstain table per round, the verdict and
its fix items (pure: renders from the state alone).

Every text a person or a model wrote (file names, opinions, statements, conditions, fix items, the tools' messages
about the code, the scenario's own names) is set on one line of the report as inert text (`inline`): it can start
no heading, list item, table cell, link, image or HTML element of its own, so nothing written can pass for the
verdict. The rule is the one `simulations.services.files.export.quoted` applies to the other kinds' exports, written here
again because this module stays free of Django (tests/kinds/deliberation/test_report.py holds the two together)."""

from __future__ import annotations

import html
import re
import unicodedata
from itertools import groupby

from .scenario import DeliberationScenario
from .state import MAX_ROUNDS, Ballot, ConclusionCause, DeliberationState, LogEntry

CAUSES = {
    ConclusionCause.SYNTHESIS: "synthesis reached",
    ConclusionCause.IRRECONCILABLE_VETO: "irreconcilable veto",
    ConclusionCause.ROUND_LIMIT: f"{MAX_ROUNDS}-round limit reached without consensus",
}


# Inline Markdown that text could use to style itself as something else (services.files.export's `_INLINE`): emphasis,
# code, links and images, table pipes, strike-through, the backslash itself. `<`, `>` and `&` are HTML-escaped.
_INLINE = re.compile(r"([\\`*_\[\]|~!])")
_ORDERED_ITEM = re.compile(r"^\d+(?=[.)])")
# Bidi embeddings, overrides and isolates reorder what a reader sees; other controls (ESC, BEL...) reach a terminal
# that shows the file. Stored text has neither since the forms refuse them, but an older game or an import may.
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def inline(text: str) -> str:
    """Text as inert Markdown on one line: its line breaks and runs of spaces become one space, every character
    that Markdown or HTML would read is escaped, controls are shown as U+FFFD."""
    flat = _BIDI_CONTROLS.sub("", " ".join(text.split()))
    flat = "".join("\ufffd" if unicodedata.category(ch) == "Cc" else ch for ch in flat)
    escaped = _INLINE.sub(r"\\\1", html.escape(flat, quote=False))
    item = _ORDERED_ITEM.match(escaped)  # as `quoted` does, should the text ever start a line
    if item:
        return f"{escaped[: item.end()]}\\{escaped[item.end() :]}"
    return f"\\{escaped}" if escaped[:1] in ("#", "-", "+", "=", ":") else escaped


def _quote(text: str) -> str:
    return '"' + inline(text) + '"'


def ballot_label(ballot: Ballot, threshold: float) -> str:
    if ballot.stance != ballot.declared:
        return (f"{ballot.stance.value} (asked {ballot.declared.value}; confidence {ballot.confidence:.2f} "
                f"below threshold {threshold:.2f})")  # fmt: skip
    return f"{ballot.stance.value} (confidence {ballot.confidence:.2f})"


def _entry_line(sc: DeliberationScenario, st: DeliberationState, e: LogEntry) -> str:
    if e.kind == "transition":
        return f"- **Transition**: {inline(e.text)}"
    if e.kind == "mediation":
        return f"- **Chairperson mediation**: {_quote(e.text)}"
    persona = sc.persona(e.speaker)
    if e.kind == "opinion":
        rnd = next(r for r in st.rounds if r.number == e.round)
        ballot = rnd.ballots[e.speaker]
        said = ballot_label(ballot, persona.confidence_threshold) + ": " + e.text
        return f"- **{inline(persona.label)}**: {_quote(said)}"
    return f"- **{inline(persona.label)}**: {_quote(e.text)}"


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
        out.append(f"| {inline(scenario.persona(seat).label)} | " + " | ".join(cells) + " |")
    quorum = [
        f"{r.quorum.synthesis}/{r.quorum.effective} ({r.quorum.abstain} abstained)" if r.quorum else "—"
        for r in rounds
    ]
    out.append("| *Synthesis / effective members* | " + " | ".join(quorum) + " |")
    return out


def render_findings(state: DeliberationState) -> list[str]:
    out: list[str] = []
    for sub in state.submissions:
        out += [
            "",
            f"**Version {sub.version}** — {inline(sub.label)} ({sub.source}): {len(sub.findings)} finding(s)",
        ]
        if sub.findings:
            out += [
                "",
                "| Severity | Tool | Code | Line | Message | House rule |",
                "| --- | --- | --- | --- | --- | --- |",
            ]
            out += [
                f"| {f.severity.value} | {inline(f.tool)} | {inline(f.code)} | {f.line} | {inline(f.message)}"
                f"{' — the line reads: ' + inline(f.quote) if f.quote else ''} | {inline(f.rule)} |"
                for f in sub.findings
            ]
        out += [f"- *Note*: {inline(note)}" for note in sub.notes]
    return out


def render_report(scenario: DeliberationScenario, state: DeliberationState) -> str:
    first = state.submissions[0]
    verdict = state.verdict.value if state.verdict else f"pending (now {state.status.value})"
    cause = f" — {CAUSES[state.cause]}" if state.cause else ""
    lines = [
        f"# Review report — {inline(first.label)}",
        "",
        f"- **Scenario**: {inline(scenario.title)}",
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
        lines += ["", *[f"> Warning: {inline(w)}" for w in state.warnings]]
    lines += ["", "### Fix items", ""]
    lines += [f"- [ ] {inline(item)}" for item in state.fix_items] or ["None."]
    return "\n".join(lines) + "\n"
