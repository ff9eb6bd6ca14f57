"""Seed 004's quorum rules: the three worked examples with the seed's numbers, the 2/3 boundary, the verdicts."""

from __future__ import annotations

from fractions import Fraction

import pytest

from simulations.kinds.deliberation import machine
from simulations.kinds.deliberation.quorum import (
    QuorumOutcome,
    Tally,
    check_quorum,
    tally_ballots,
    verdict_for,
)
from simulations.kinds.deliberation.scenario import DeliberationScenario
from simulations.kinds.deliberation.state import ConclusionCause, Stance, State, Verdict

from .conftest import act, debate_round, fresh, secret_finding


def test_example_1_four_members_three_synthesis_one_abstain() -> None:
    result = check_quorum(Tally(members=4, synthesis=3, abstain=1))
    assert result.tally.effective == 3 and result.share == Fraction(3, 3)
    assert result.outcome == QuorumOutcome.CONCLUSION and not result.majority_abstain_warning


def test_example_2_six_members_veto_overrides_synthesis() -> None:
    result = check_quorum(Tally(members=6, synthesis=3, abstain=2, veto=1))
    assert result.outcome == QuorumOutcome.VETO
    assert result.share == Fraction(3, 4)  # would pass 2/3 without the veto: the veto overrides it


def test_example_3_four_members_one_synthesis_three_abstain_warns() -> None:
    result = check_quorum(Tally(members=4, synthesis=1, abstain=3))
    assert result.tally.effective == 1 and result.share == Fraction(1, 1)
    assert result.outcome == QuorumOutcome.CONCLUSION and result.majority_abstain_warning


def test_example_2_through_the_machine_with_six_members(scenario: DeliberationScenario) -> None:
    data = scenario.model_dump()
    for extra in ("legal", "data"):
        data["personas"].append({"id": extra, "name": extra.title(), "title": extra.title(), "role": "member",
                                 "brief": "x", "votes": True, "confidence_threshold": 0.5})  # fmt: skip
    six = DeliberationScenario.model_validate(data)
    assert len(six.members) == 6
    votes = {"ops_km": Stance.VETO, "security": Stance.ABSTAIN, "maintainer": Stance.SYNTHESIS,
             "business": Stance.SYNTHESIS, "legal": Stance.SYNTHESIS, "data": Stance.ABSTAIN}  # fmt: skip
    st = debate_round(six, act(six, fresh(six, secret_finding()), machine.Event.TABLE_CODE), votes)
    assert machine.allowed_events(six, st) == [machine.Event.VETO_EXERCISED]
    st = act(six, st, machine.Event.VETO_EXERCISED)
    assert st.status == State.VETO
    q = st.rounds[-1].quorum
    assert q is not None and (q.members, q.synthesis, q.abstain, q.veto, q.effective) == (6, 3, 2, 1, 4)


@pytest.mark.parametrize(
    ("tally", "outcome"),
    [
        (Tally(members=3, synthesis=2, objections=1), QuorumOutcome.CONCLUSION),  # exactly 2/3
        (Tally(members=5, synthesis=3, objections=2), QuorumOutcome.NOT_MET),  # 3/5 < 2/3
        (
            Tally(members=5, synthesis=2, abstain=2, objections=1),
            QuorumOutcome.CONCLUSION,
        ),  # 2/3 after abstainers
        (Tally(members=4, abstain=4), QuorumOutcome.NOT_MET),  # nobody left to agree
    ],
)
def test_two_thirds_boundary(tally: Tally, outcome: QuorumOutcome) -> None:
    assert check_quorum(tally).outcome == outcome


def test_tally_must_count_every_member() -> None:
    with pytest.raises(ValueError, match="3 ballots counted for 4"):
        Tally(members=4, synthesis=3)
    with pytest.raises(ValueError, match="no ballot from b"):
        tally_ballots(["a", "b"], {"a": Stance.SYNTHESIS})
    assert tally_ballots(["a", "b"], {"a": Stance.VETO, "b": Stance.OBJECT}) == Tally(
        members=2, veto=1, objections=1
    )


@pytest.mark.parametrize(
    ("cause", "fix_items", "verdict"),
    [
        (ConclusionCause.SYNTHESIS, [], Verdict.APPROVED),
        (ConclusionCause.SYNTHESIS, ["rename l"], Verdict.REQUEST_CHANGES),
        (ConclusionCause.IRRECONCILABLE_VETO, [], Verdict.REQUEST_CHANGES),
        (ConclusionCause.ROUND_LIMIT, [], Verdict.INCONCLUSIVE),
    ],
)
def test_verdict_mapping(cause: ConclusionCause, fix_items: list[str], verdict: Verdict) -> None:
    assert verdict_for(cause, fix_items=fix_items) == verdict
