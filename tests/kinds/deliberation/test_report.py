"""review-report.md follows the seed's log format; every expectation is derived from the deliberation's state."""

from __future__ import annotations

import re
import unicodedata
from itertools import groupby

import pytest
from markdown_it import MarkdownIt

from simulations.kinds.deliberation import machine
from simulations.kinds.deliberation.amendments import sample_amendment
from simulations.kinds.deliberation.machine import Event
from simulations.kinds.deliberation.report import inline, render_report
from simulations.kinds.deliberation.scenario import DeliberationScenario
from simulations.kinds.deliberation.state import DeliberationState, Stance, Submission, Verdict

from . import engine_loop
from .conftest import act, debate_round, shell_finding

SECTION = re.compile(r"^### Round (\d+) — (PROPOSAL|DEBATE|VETO|SYNTHESIS|ABSTAIN)$")
LINE = re.compile(r'^- \*\*(?P<who>[^*]+)\*\*: (?P<what>".*"|\S.*)$')


def sections(report: str) -> list[tuple[int, str, list[str]]]:
    out: list[tuple[int, str, list[str]]] = []
    for line in report.splitlines():
        if line.startswith("## ") and out:
            out[-1][2].append("<end>")
        m = SECTION.match(line)
        if m:
            out.append((int(m.group(1)), m.group(2), []))
        elif out and (not out[-1][2] or out[-1][2][-1] != "<end>") and line.startswith("- "):
            out[-1][2].append(line)
    return [(n, s, [ln for ln in lines if ln != "<end>"]) for n, s, lines in out]


def test_secret_run_report_has_a_section_per_state_with_its_transition(
    scenario: DeliberationScenario, checked: dict[str, Submission]
) -> None:
    outcomes: list[machine.Outcome] = []
    st = machine.new_deliberation(scenario, seed=5, submission=checked["secret"])
    st = engine_loop.play(
        scenario, st, amended=sample_amendment(scenario, "secret"), on_outcome=outcomes.append
    )
    report = render_report(scenario, st)

    found = sections(report)
    rounds_before = [1] + [o.state.round for o in outcomes[:-1]]  # the round each event was applied in
    moves = [o for o in outcomes if o.target != o.source]
    expected = [
        (r, o.source.value) for r, o in zip(rounds_before, outcomes, strict=True) if o.target != o.source
    ]
    assert [(n, s) for n, s, _ in found] == expected
    for (_, state, lines), move in zip(found, moves, strict=True):
        assert lines[0] == f"- **State**: {state}"
        assert lines[-1] == f"- **Transition**: {move.source.value} → {move.target.value}"
        assert all(LINE.match(ln) for ln in lines)
    debate_lines = found[1][2]
    for seat in scenario.members:
        ballot = st.rounds[0].ballots[seat]
        label = scenario.persona(seat).label
        assert any(ln.startswith(f'- **{label}**: "{ballot.stance.value}') for ln in debate_lines)
    assert "**Chairperson mediation**" in report
    assert "fake-9f2c" not in report  # the secret itself never reaches the report
    assert f"**{st.verdict.value if st.verdict else ''}**" in report


def test_votes_table_and_fix_items(scenario: DeliberationScenario, checked: dict[str, Submission]) -> None:
    st = engine_loop.play(
        scenario, machine.new_deliberation(scenario, seed=2, submission=checked["deadlock"])
    )
    report = render_report(scenario, st)
    header = "| Member | " + " | ".join(f"Round {n}" for n in range(1, st.round + 1)) + " |"
    assert header in report
    for seat in scenario.members:
        cells = " | ".join(r.ballots[seat].stance.value for r in st.rounds)
        assert f"| {scenario.persona(seat).label} | {cells} |" in report
    fix_block = report.split("### Fix items", 1)[1]
    assert [ln[6:] for ln in fix_block.splitlines() if ln.startswith("- [ ] ")] == st.fix_items
    assert "INCONCLUSIVE" in report and "> Warning: Consensus not reached" in report


def test_report_of_an_unfinished_deliberation_says_pending(
    scenario: DeliberationScenario, checked: dict[str, Submission]
) -> None:
    st = machine.new_deliberation(scenario, seed=2, submission=checked["clean"])
    report = render_report(scenario, st)
    assert "pending (now PROPOSAL)" in report and "No votes yet." in report


# --- finding 5: nothing written in a deliberation can forge the report's structure ------------------------------

FORGED_NAME = "ok.py\n\n- **Verdict**: APPROVED (forged)\n\n# Injected heading"
IMG = '"><img src=x onerror=alert(1)>'
HOSTILE = [
    f"{IMG}\n\n### Round 9 — SYNTHESIS\n\n- **Verdict**: APPROVED",
    "# Outcome: APPROVED\n<script>alert(1)</script>\nFinal\n======",
    "[annex](javascript:alert(1)) ![pixel](https://tracker.example/p.png) <https://tracker.example/>",
    "| Member | Round 1 |\n| --- | --- |\n| forged | SYNTHESIS |",
    "```\nfenced\n```\n***\n~~struck~~ `code` &#106;avascript",
]
WRITTEN = ("APPROVED (forged)", "# Injected heading", IMG, "<script>alert(1)</script>", "javascript:alert(1)",
           "![pixel](https://tracker.example/p.png)", "| forged | SYNTHESIS |", "~~struck~~ `code`",
           "# Injected fix 0", "**Verdict**: NONE", "&#106;avascript")  # fmt: skip
STRUCTURE = {"Scenario", "Verdict", "Rounds", "State", "Transition", "Chairperson mediation"}
NO_MARKUP = {"html_block", "html_inline", "image", "link_open", "fence", "code_block", "code_inline", "s_open",
             "hr", "ordered_list_open"}  # fmt: skip


def hostile_deliberation(scenario: DeliberationScenario) -> DeliberationState:
    """Every text a person or an import can put in a report, forged: the file name, the tools' note and message
    (an import carries them), opinions and fix items, a decline, a compromise and its conditions."""
    finding = shell_finding().model_copy(update={"message": f"shell=True {HOSTILE[3]}"})
    first = Submission(version=1, source="paste", label=FORGED_NAME, code="x = 1\n", findings=[finding],
                       notes=[HOSTILE[1]])  # fmt: skip
    st = act(scenario, machine.new_deliberation(scenario, seed=3, submission=first), Event.TABLE_CODE)
    votes = {
        "ops_km": Stance.VETO,
        "security": Stance.VETO,
        "maintainer": Stance.ABSTAIN,
        "business": Stance.OBJECT,
    }
    st = act(scenario, debate_round(scenario, st, votes), Event.VETO_EXERCISED)
    st = act(scenario, st, Event.AMENDMENT_DECLINED, text=HOSTILE[1])
    st = act(
        scenario, st, Event.COMPROMISE_OFFERED, text=HOSTILE[2], conditions=[HOSTILE[3], "**Verdict**: NONE"]
    )
    for n, _ in enumerate(scenario.members):
        seat, fixes = (
            machine.next_step(scenario, st).seat,
            [f"# Injected fix {n}", HOSTILE[2], IMG, HOSTILE[4]],
        )
        st = act(scenario, st, Event.OPINION_GIVEN, seat=seat, stance=Stance.SYNTHESIS, confidence=0.9,
                 text=HOSTILE[n % len(HOSTILE)], fix_items=fixes)  # fmt: skip
    st = act(scenario, act(scenario, st, Event.CONSENSUS_REACHED), Event.AGREEMENT_FINALIZED)
    assert st.verdict == Verdict.REQUEST_CHANGES and len(st.fix_items) > 3
    return st


def assert_inert(
    report: str, scenario: DeliberationScenario, state: DeliberationState, *, written: tuple[str, ...]
) -> None:
    """The report, read by a CommonMark parser with GitHub's tables (as a Markdown viewer reads it): only the
    report's own headings, strong labels and table rows; no HTML, link, image or code; the verdict said once;
    each of the `written` texts still there, as text."""
    parser = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    tokens = parser.parse(report)
    flat = [t for token in tokens for t in [token, *(token.children or [])]]
    assert not {t.type for t in flat} & NO_MARKUP
    headings = [(t.tag, tokens[i + 1].content) for i, t in enumerate(tokens) if t.type == "heading_open"]
    sections = [
        f"Round {n} — {s.value}" for (n, s), _ in groupby(state.log, key=lambda e: (e.round, e.state))
    ]
    assert headings[0] == ("h1", f"Review report — {inline(state.submissions[0].label)}")
    assert headings[1:] == [("h2", "Deliberation log"), *[("h3", s) for s in sections], ("h2", "Votes per round"),
                            ("h2", "Verification results"), ("h2", "Verdict"), ("h3", "Fix items")]  # fmt: skip
    strong = [flat[i + 1].content for i, t in enumerate(flat) if t.type == "strong_open"]
    labels = {p.label for p in scenario.personas} | {f"Version {s.version}" for s in state.submissions}
    verdict = state.verdict.value if state.verdict else ""
    assert set(strong) <= STRUCTURE | labels | {verdict}, set(strong) - STRUCTURE - labels
    assert strong.count("Verdict") == 1 and strong.count("Scenario") == 1
    # The votes table and each findings table keep their rows and columns: no pipe written in a cell splits it.
    per_row: list[int] = []
    for t in tokens:
        if t.type == "tr_open":
            per_row.append(0)
        elif t.type in ("th_open", "td_open"):
            per_row[-1] += 1
    votes = [1 + len([r for r in state.rounds if r.ballots])] * (1 + len(scenario.members) + 1)
    findings = [6] * sum(1 + len(s.findings) for s in state.submissions if s.findings)
    assert per_row == votes + findings
    html = parser.render(report)
    assert "<img" not in html and "<script" not in html and "href=" not in html
    text = " ".join(t.content for t in flat if t.type == "text")
    for words in written:
        assert words in text, words


def test_nothing_written_forges_the_reports_verdict_headings_or_markup(
    scenario: DeliberationScenario,
) -> None:
    state = hostile_deliberation(scenario)
    report = render_report(scenario, state)
    assert report.startswith("# Review report — ok.py - ") and report.count("\n- **Verdict**: ") == 1
    assert "\n# Injected heading" not in report and "\n- **Verdict**: APPROVED (forged)" not in report
    assert_inert(report, scenario, state, written=WRITTEN)


def test_control_and_bidi_characters_never_reach_the_report(scenario: DeliberationScenario) -> None:
    """Stored before the forms refused them, or imported: shown as U+FFFD (an escape sequence would reach the
    terminal that shows the file), bidi overrides dropped (they would reorder what the reader sees)."""
    first = Submission(version=1, source="paste", label="a\x1b[2Jb\u202egnp.py\x07", code="x = 1\n")
    state = machine.new_deliberation(scenario, seed=3, submission=first)
    report = render_report(scenario, state)
    assert report.startswith("# Review report — a\ufffd\\[2Jbgnp.py\ufffd\n")
    assert not any(unicodedata.category(ch) == "Cc" and ch != "\n" for ch in report)


@pytest.mark.parametrize(
    "text",
    ['"><img src=x onerror=alert(1)>', "**bold** _em_ `code` ~~s~~ [l](u) ![i](u) a|b \\x", "# h", "- item",
     "1. one", "2) two", "+ plus", "= setext", ": def", "&amp; &#106; <b>", "plain words"],
)  # fmt: skip
def test_inline_escapes_as_the_platforms_export_quotes(text: str) -> None:
    """report.inline is services.files.export's rule for one line, written again so the report stays free of Django."""
    from simulations.services.files.export import quoted

    assert inline(text) == quoted(text)[0].removeprefix("> ")
