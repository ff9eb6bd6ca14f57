"""review-report.md follows the seed's log format; every expectation is derived from the deliberation's state."""

from __future__ import annotations

import re

from simulations.kinds.deliberation import machine
from simulations.kinds.deliberation.amendments import sample_amendment
from simulations.kinds.deliberation.report import render_report
from simulations.kinds.deliberation.scenario import DeliberationScenario
from simulations.kinds.deliberation.state import Submission

from . import engine_loop

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
