"""Whole deliberations on the samples, checked by the real tools and argued by the offline personas."""

from __future__ import annotations

import pytest

from simulations.kinds.deliberation import machine
from simulations.kinds.deliberation.amendments import sample_amendment
from simulations.kinds.deliberation.machine import Event, Opinion, Step
from simulations.kinds.deliberation.offline import AmendedCode, Move
from simulations.kinds.deliberation.scenario import DeliberationScenario
from simulations.kinds.deliberation.state import (
    MAX_ROUNDS,
    ConclusionCause,
    DeliberationState,
    Stance,
    Submission,
    Verdict,
)

from . import engine_loop


def play(sc: DeliberationScenario, sub: Submission, *, seed: int = 11, human_seat: str | None = None,
         amended: AmendedCode | None = None, human: engine_loop.HumanPolicy | None = None) -> tuple[DeliberationState, list[machine.Outcome]]:  # fmt: skip
    outcomes: list[machine.Outcome] = []
    st = machine.new_deliberation(sc, seed=seed, submission=sub, human_seat=human_seat)
    st = engine_loop.play(sc, st, human=human, amended=amended, on_outcome=outcomes.append)
    return st, outcomes


def path(outcomes: list[machine.Outcome]) -> list[str]:
    """The states visited, without self-loops."""
    return [o.target.value for o in outcomes if o.target != o.source]


def test_planted_secret_is_vetoed_then_the_amended_code_is_approved(
    scenario: DeliberationScenario, checked: dict[str, Submission]
) -> None:
    st, outcomes = play(scenario, checked["secret"], amended=sample_amendment(scenario, "secret"))
    assert path(outcomes) == ["DEBATE", "VETO", "PROPOSAL", "DEBATE", "SYNTHESIS", "CONCLUSION"]
    first = st.rounds[0].ballots
    assert first["ops_km"].stance == Stance.VETO  # the operations/knowledge manager's absolute veto
    assert "Secret Keyword" in first["ops_km"].text
    assert (st.verdict, st.cause, st.round, st.submission.version) == (
        Verdict.APPROVED,
        ConclusionCause.SYNTHESIS,
        2,
        2,
    )
    assert st.submission.findings == []  # the amended code was checked again, by the tools


def test_planted_secret_without_an_amendment_is_irreconcilable(
    scenario: DeliberationScenario, checked: dict[str, Submission]
) -> None:
    st, outcomes = play(scenario, checked["secret"])
    assert [o.event for o in outcomes][-2:] == [Event.AMENDMENT_DECLINED, Event.IRRECONCILABLE]
    assert st.verdict == Verdict.REQUEST_CHANGES and any("Secret Keyword" in i for i in st.fix_items)


def test_style_only_issue_requests_changes(
    scenario: DeliberationScenario, checked: dict[str, Submission]
) -> None:
    st, outcomes = play(scenario, checked["style"])
    assert path(outcomes) == ["DEBATE", "ABSTAIN", "CONCLUSION"]
    assert st.rounds[0].ballots["security"].stance == Stance.ABSTAIN  # style is outside security's field
    assert st.verdict == Verdict.REQUEST_CHANGES
    assert {i.split(": ")[1].split()[0] for i in st.fix_items} == {"E711", "E741", "E731"}


def test_deadlock_is_inconclusive_at_round_five(
    scenario: DeliberationScenario, checked: dict[str, Submission]
) -> None:
    st, outcomes = play(scenario, checked["deadlock"])
    assert (st.verdict, st.cause, st.round) == (Verdict.INCONCLUSIVE, ConclusionCause.ROUND_LIMIT, MAX_ROUNDS)
    assert [o.event for o in outcomes].count(Event.COMPROMISE_OFFERED) == MAX_ROUNDS - 1
    assert all(r.ballots["security"].stance == Stance.VETO for r in st.rounds)


def test_clean_code_is_approved(scenario: DeliberationScenario, checked: dict[str, Submission]) -> None:
    st, outcomes = play(scenario, checked["clean"])
    assert path(outcomes) == ["DEBATE", "SYNTHESIS", "CONCLUSION"]
    assert (st.verdict, st.fix_items) == (Verdict.APPROVED, [])


def test_runs_are_deterministic_per_seed_and_worded_differently_across_seeds(
    scenario: DeliberationScenario, checked: dict[str, Submission]
) -> None:
    a, _ = play(scenario, checked["deadlock"], seed=1)
    b, _ = play(scenario, checked["deadlock"], seed=1)
    assert a == b
    texts = {tuple(e.text for e in play(scenario, checked["deadlock"], seed=s)[0].log) for s in range(2, 6)}
    assert len(texts) > 1
    verdicts = {play(scenario, checked["deadlock"], seed=s)[0].verdict for s in range(2, 6)}
    assert verdicts == {Verdict.INCONCLUSIVE}  # the wording varies, the decision does not


def test_a_person_as_proposer_submits_amended_code_after_the_veto(
    scenario: DeliberationScenario, checked: dict[str, Submission]
) -> None:
    asked: list[Step] = []
    fixed = 'import os\n\nSECRET = os.environ["APP_SECRET"]\n'

    def proposer(sc: DeliberationScenario, st: DeliberationState, step: Step) -> Move:
        asked.append(step)
        return Move(
            Event.AMENDED_CODE_SUBMITTED, amended=AmendedCode(code=fixed, filename="gateway.py", label="mine")
        )

    st, _ = play(scenario, checked["secret"], human_seat="proposer", human=proposer)
    assert [s.seat for s in asked] == ["proposer"] and asked[0].events[0] == Event.AMENDED_CODE_SUBMITTED
    assert st.submission.code == fixed and st.verdict == Verdict.APPROVED


def test_a_person_in_the_security_seat_accepting_the_compromise_ends_the_deadlock(
    scenario: DeliberationScenario, checked: dict[str, Submission]
) -> None:
    def security(sc: DeliberationScenario, st: DeliberationState, step: Step) -> Move:
        rnd = st.current_round
        if rnd and rnd.compromise:
            return Move(Event.OPINION_GIVEN, Opinion(seat="security", stance=Stance.SYNTHESIS, confidence=0.8,
                                                     text="Under these conditions I accept."))  # fmt: skip
        return Move(
            Event.OPINION_GIVEN,
            Opinion(seat="security", stance=Stance.VETO, confidence=0.9, text="B602: veto."),
        )

    st, outcomes = play(scenario, checked["deadlock"], human_seat="security", human=security)
    assert st.round == 2 and st.verdict == Verdict.REQUEST_CHANGES
    assert st.rounds[-1].compromise and set(st.rounds[-1].compromise.conditions) <= set(st.fix_items)


def test_a_person_cannot_veto_from_a_seat_without_a_veto(
    scenario: DeliberationScenario, checked: dict[str, Submission]
) -> None:
    def maintainer(sc: DeliberationScenario, st: DeliberationState, step: Step) -> Move:
        return Move(
            Event.OPINION_GIVEN, Opinion(seat="maintainer", stance=Stance.VETO, confidence=0.9, text="veto")
        )

    with pytest.raises(machine.Refusal, match="holds no veto"):
        play(scenario, checked["secret"], human_seat="maintainer", human=maintainer)


@pytest.mark.parametrize("sample", ["deadlock", "secret"])
def test_resume_from_a_stored_state_at_every_step_ends_the_same(
    scenario: DeliberationScenario, checked: dict[str, Submission], sample: str
) -> None:
    amended = sample_amendment(scenario, sample)
    whole, outcomes = play(scenario, checked[sample], seed=4, amended=amended)

    def reuse_check(sc: DeliberationScenario, code: AmendedCode) -> Submission:
        # The amendment was checked by the real tools in the uninterrupted run; reuse that result here.
        return next(o.state.submission for o in outcomes if o.event == Event.AMENDED_CODE_SUBMITTED)

    for outcome in outcomes:
        stored = outcome.state.model_dump(mode="json")  # as a checkpoint would keep it
        resumed = engine_loop.play(scenario, machine.restore(stored), amended=amended, checker=reuse_check)
        assert resumed == whole, f"resumed after {outcome.event} (step {outcome.seq}) diverged"
