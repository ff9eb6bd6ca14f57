"""One test per row of the deliberation table (seed 004), then refusals. States are reached through the machine."""

from __future__ import annotations

import pytest

from simulations.engine.errors import IllegalEvent
from simulations.kinds.deliberation import machine
from simulations.kinds.deliberation.machine import Actor, Event, Refusal
from simulations.kinds.deliberation.scenario import DeliberationScenario
from simulations.kinds.deliberation.state import (
    MAX_ROUNDS,
    ConclusionCause,
    DeliberationState,
    Stance,
    State,
    Verdict,
)

from .conftest import act, all_members, debate_round, fresh, secret_finding, shell_finding, style_finding

S = Stance


def tabled(sc: DeliberationScenario, *findings: object) -> DeliberationState:
    return act(sc, fresh(sc, *findings), Event.TABLE_CODE, text="tabled")  # type: ignore[arg-type]


def vetoed(sc: DeliberationScenario, *findings: object) -> DeliberationState:
    votes = {"ops_km": S.VETO, "security": S.VETO, "maintainer": S.ABSTAIN, "business": S.OBJECT}
    st = debate_round(sc, tabled(sc, *findings), votes)
    return act(sc, st, Event.VETO_EXERCISED)


def compromised_round(sc: DeliberationScenario, st: DeliberationState) -> DeliberationState:
    st = act(sc, st, Event.AMENDMENT_DECLINED, text="no amendment")
    return act(
        sc, st, Event.COMPROMISE_OFFERED, text="delay costs 2000 a day", conditions=["fix B602 next sprint"]
    )


def test_proposal_tabled_opens_debate_round_one(scenario: DeliberationScenario) -> None:
    st = fresh(scenario)
    assert machine.next_step(scenario, st).actor == Actor.CHAIR
    st = act(scenario, st, Event.TABLE_CODE)
    assert st.status == State.DEBATE and st.round == 1 and st.rounds[-1].number == 1
    assert machine.next_step(scenario, st).seat == scenario.members[0]


def test_opinions_are_taken_in_speaking_order_then_the_chair_closes(scenario: DeliberationScenario) -> None:
    st = tabled(scenario)
    seen = []
    for _ in scenario.members:
        step = machine.next_step(scenario, st)
        seen.append(step.seat)
        st = act(
            scenario, st, Event.OPINION_GIVEN, seat=step.seat, stance="SYNTHESIS", confidence=0.9, text="ok"
        )
    assert seen == scenario.members
    assert set(st.rounds[-1].ballots) == set(scenario.members)
    assert machine.next_step(scenario, st).actor == Actor.CHAIR


def test_critical_flaw_is_vetoed(scenario: DeliberationScenario) -> None:
    st = debate_round(
        scenario, tabled(scenario, secret_finding()), {**all_members(scenario, S.SYNTHESIS), "ops_km": S.VETO}
    )
    # A single veto overrides three syntheses.
    assert machine.allowed_events(scenario, st) == [Event.VETO_EXERCISED]
    st = act(scenario, st, Event.VETO_EXERCISED)
    assert st.status == State.VETO and st.rounds[-1].quorum and st.rounds[-1].quorum.veto == 1


def test_consensus_reaches_synthesis(scenario: DeliberationScenario) -> None:
    st = debate_round(
        scenario, tabled(scenario), {**all_members(scenario, S.SYNTHESIS), "business": S.OBJECT}
    )
    assert machine.allowed_events(scenario, st) == [Event.CONSENSUS_REACHED]  # 3 of 4 >= 2/3
    assert act(scenario, st, Event.CONSENSUS_REACHED).status == State.SYNTHESIS


def test_confidence_below_threshold_is_an_abstention(scenario: DeliberationScenario) -> None:
    threshold = scenario.persona("security").confidence_threshold
    st = debate_round(scenario, tabled(scenario), all_members(scenario, S.SYNTHESIS),
                      confidence={"security": threshold - 0.01})  # fmt: skip
    ballot = st.rounds[-1].ballots["security"]
    assert (ballot.declared, ballot.stance) == (S.SYNTHESIS, S.ABSTAIN)
    assert machine.allowed_events(scenario, st) == [Event.ABSTENTION_DECLARED]
    assert act(scenario, st, Event.ABSTENTION_DECLARED).status == State.ABSTAIN


def test_confidence_at_threshold_counts(scenario: DeliberationScenario) -> None:
    threshold = scenario.persona("security").confidence_threshold
    st = debate_round(
        scenario, tabled(scenario), all_members(scenario, S.SYNTHESIS), confidence={"security": threshold}
    )
    assert st.rounds[-1].ballots["security"].stance == S.SYNTHESIS


def test_split_without_abstention_debates_again(scenario: DeliberationScenario) -> None:
    votes = {"ops_km": S.SYNTHESIS, "security": S.SYNTHESIS, "maintainer": S.OBJECT, "business": S.OBJECT}
    st = debate_round(scenario, tabled(scenario), votes)
    assert machine.allowed_events(scenario, st) == [Event.CONSENSUS_NOT_REACHED]
    st = act(scenario, st, Event.CONSENSUS_NOT_REACHED)
    assert (st.status, st.round, st.cursor) == (State.DEBATE, 2, 0)
    assert st.rounds[-2].quorum and st.rounds[-2].quorum.synthesis == 2


def test_split_in_round_five_is_inconclusive(scenario: DeliberationScenario) -> None:
    votes = {"ops_km": S.SYNTHESIS, "security": S.SYNTHESIS, "maintainer": S.OBJECT, "business": S.OBJECT}
    st = tabled(scenario)
    for _ in range(MAX_ROUNDS - 1):
        st = act(scenario, debate_round(scenario, st, votes), Event.CONSENSUS_NOT_REACHED)
    st = debate_round(scenario, st, votes)
    assert st.round == MAX_ROUNDS
    assert machine.allowed_events(scenario, st) == [Event.ROUND_LIMIT_REACHED]
    st = act(scenario, st, Event.ROUND_LIMIT_REACHED)
    assert (st.status, st.verdict, st.cause) == (
        State.CONCLUSION,
        Verdict.INCONCLUSIVE,
        ConclusionCause.ROUND_LIMIT,
    )


def test_amended_code_starts_a_new_round_at_proposal(scenario: DeliberationScenario) -> None:
    st = vetoed(scenario, secret_finding())
    step = machine.next_step(scenario, st)
    assert (step.actor, step.seat) == (Actor.PROPOSER, "proposer")
    amended = st.submission.model_copy(update={"findings": [], "code": "import os\n"})
    st = act(scenario, st, Event.AMENDED_CODE_SUBMITTED, submission=amended.model_dump())
    assert (st.status, st.round, st.submission.version, st.submission.findings) == (State.PROPOSAL, 2, 2, [])


def test_declined_amendment_passes_to_the_business_driver_where_a_compromise_is_allowed(
    scenario: DeliberationScenario,
) -> None:
    st = act(scenario, vetoed(scenario, shell_finding()), Event.AMENDMENT_DECLINED, text="cannot amend")
    step = machine.next_step(scenario, st)
    assert (st.status, step.actor, step.seat) == (State.VETO, Actor.BUSINESS_DRIVER, "business")


def test_compromise_reenters_debate_and_becomes_fix_items_when_agreed(scenario: DeliberationScenario) -> None:
    st = compromised_round(scenario, vetoed(scenario, shell_finding()))
    assert (st.status, st.round) == (State.DEBATE, 2)
    assert st.rounds[-1].compromise and st.rounds[-1].compromise.conditions == ["fix B602 next sprint"]
    st = debate_round(scenario, st, all_members(scenario, S.SYNTHESIS))
    st = act(scenario, act(scenario, st, Event.CONSENSUS_REACHED), Event.AGREEMENT_FINALIZED)
    assert st.verdict == Verdict.REQUEST_CHANGES and st.fix_items == ["fix B602 next sprint"]


def test_declined_compromise_leaves_the_chair_to_declare_irreconcilable(
    scenario: DeliberationScenario,
) -> None:
    st = act(scenario, vetoed(scenario, shell_finding()), Event.AMENDMENT_DECLINED, text="no")
    st = act(scenario, st, Event.COMPROMISE_DECLINED, text="no compromise from me")
    assert machine.allowed_events(scenario, st) == [Event.IRRECONCILABLE]


def test_irreconcilable_veto_requests_changes(scenario: DeliberationScenario) -> None:
    st = act(scenario, vetoed(scenario, secret_finding()), Event.AMENDMENT_DECLINED, text="no")
    # A secret admits no compromise (house rules): the business driver never gets the floor.
    assert machine.next_step(scenario, st).actor == Actor.CHAIR
    st = act(scenario, st, Event.IRRECONCILABLE)
    assert (st.status, st.verdict, st.cause) == (
        State.CONCLUSION,
        Verdict.REQUEST_CHANGES,
        ConclusionCause.IRRECONCILABLE_VETO,
    )
    assert any("Secret Keyword" in item for item in st.fix_items)


def test_veto_standing_in_round_five_is_inconclusive(scenario: DeliberationScenario) -> None:
    votes = {"ops_km": S.ABSTAIN, "security": S.VETO, "maintainer": S.ABSTAIN, "business": S.SYNTHESIS}
    st = vetoed(scenario, shell_finding())
    while st.round < MAX_ROUNDS:
        st = act(
            scenario, debate_round(scenario, compromised_round(scenario, st), votes), Event.VETO_EXERCISED
        )
    assert machine.allowed_events(scenario, st) == [Event.ROUND_LIMIT_REACHED]  # no amendment, no compromise
    st = act(scenario, st, Event.ROUND_LIMIT_REACHED)
    assert (st.verdict, st.round) == (Verdict.INCONCLUSIVE, MAX_ROUNDS)


@pytest.mark.parametrize(("fix", "verdict"), [(False, Verdict.APPROVED), (True, Verdict.REQUEST_CHANGES)])
def test_synthesis_is_finalized(scenario: DeliberationScenario, fix: bool, verdict: Verdict) -> None:
    st = tabled(scenario, style_finding()) if fix else tabled(scenario)
    for seat in scenario.members:
        items = ["use `is not None` on line 2"] if fix and seat == "maintainer" else []
        st = act(scenario, st, Event.OPINION_GIVEN, seat=seat, stance="SYNTHESIS", confidence=0.9, text="ok",
                 fix_items=items)  # fmt: skip
    st = act(scenario, act(scenario, st, Event.CONSENSUS_REACHED), Event.AGREEMENT_FINALIZED)
    assert (st.status, st.verdict, st.cause) == (State.CONCLUSION, verdict, ConclusionCause.SYNTHESIS)


def test_abstentions_then_quorum_met_concludes_with_majority_abstain_warning(
    scenario: DeliberationScenario,
) -> None:
    votes = {**all_members(scenario, S.ABSTAIN), "maintainer": S.SYNTHESIS}  # 1 synthesis + 3 abstain
    st = act(scenario, debate_round(scenario, tabled(scenario), votes), Event.ABSTENTION_DECLARED)
    assert machine.allowed_events(scenario, st) == [Event.QUORUM_MET]
    st = act(scenario, st, Event.QUORUM_MET)
    assert (st.status, st.verdict) == (State.CONCLUSION, Verdict.APPROVED)
    assert any(w.startswith("Majority abstained") for w in st.warnings)


def test_abstentions_without_quorum_debate_again(scenario: DeliberationScenario) -> None:
    votes = {"ops_km": S.SYNTHESIS, "security": S.ABSTAIN, "maintainer": S.OBJECT, "business": S.ABSTAIN}
    st = act(scenario, debate_round(scenario, tabled(scenario), votes), Event.ABSTENTION_DECLARED)
    assert machine.allowed_events(scenario, st) == [Event.QUORUM_NOT_MET]  # 1/2 < 2/3
    st = act(scenario, st, Event.QUORUM_NOT_MET)
    assert (st.status, st.round) == (State.DEBATE, 2)


def test_abstentions_without_quorum_in_round_five_are_inconclusive(scenario: DeliberationScenario) -> None:
    votes = {"ops_km": S.SYNTHESIS, "security": S.ABSTAIN, "maintainer": S.OBJECT, "business": S.ABSTAIN}
    st = tabled(scenario)
    for _ in range(MAX_ROUNDS - 1):
        st = act(scenario, act(scenario, debate_round(scenario, st, votes), Event.ABSTENTION_DECLARED),
                 Event.QUORUM_NOT_MET)  # fmt: skip
    st = act(scenario, debate_round(scenario, st, votes), Event.ABSTENTION_DECLARED)
    assert machine.allowed_events(scenario, st) == [Event.ROUND_LIMIT_REACHED]
    st = act(scenario, st, Event.ROUND_LIMIT_REACHED)
    assert (st.verdict, st.round) == (Verdict.INCONCLUSIVE, MAX_ROUNDS)
    assert machine.next_step(scenario, st).done


ROW_TESTS = {
    (State.PROPOSAL, Event.TABLE_CODE): test_proposal_tabled_opens_debate_round_one,
    (State.DEBATE, Event.OPINION_GIVEN): test_opinions_are_taken_in_speaking_order_then_the_chair_closes,
    (State.DEBATE, Event.VETO_EXERCISED): test_critical_flaw_is_vetoed,
    (State.DEBATE, Event.CONSENSUS_REACHED): test_consensus_reaches_synthesis,
    (State.DEBATE, Event.ABSTENTION_DECLARED): test_confidence_below_threshold_is_an_abstention,
    (State.DEBATE, Event.CONSENSUS_NOT_REACHED): test_split_without_abstention_debates_again,
    (State.DEBATE, Event.ROUND_LIMIT_REACHED): test_split_in_round_five_is_inconclusive,
    (State.VETO, Event.AMENDED_CODE_SUBMITTED): test_amended_code_starts_a_new_round_at_proposal,
    (
        State.VETO,
        Event.AMENDMENT_DECLINED,
    ): test_declined_amendment_passes_to_the_business_driver_where_a_compromise_is_allowed,
    (State.VETO, Event.COMPROMISE_OFFERED): test_compromise_reenters_debate_and_becomes_fix_items_when_agreed,
    (
        State.VETO,
        Event.COMPROMISE_DECLINED,
    ): test_declined_compromise_leaves_the_chair_to_declare_irreconcilable,
    (State.VETO, Event.IRRECONCILABLE): test_irreconcilable_veto_requests_changes,
    (State.VETO, Event.ROUND_LIMIT_REACHED): test_veto_standing_in_round_five_is_inconclusive,
    (State.SYNTHESIS, Event.AGREEMENT_FINALIZED): test_synthesis_is_finalized,
    (
        State.ABSTAIN,
        Event.QUORUM_MET,
    ): test_abstentions_then_quorum_met_concludes_with_majority_abstain_warning,
    (State.ABSTAIN, Event.QUORUM_NOT_MET): test_abstentions_without_quorum_debate_again,
    (
        State.ABSTAIN,
        Event.ROUND_LIMIT_REACHED,
    ): test_abstentions_without_quorum_in_round_five_are_inconclusive,
}


def test_every_row_of_the_table_has_a_test() -> None:
    assert set(ROW_TESTS) == {(t.source, t.event) for t in machine.TRANSITIONS}


# --- refusals ---------------------------------------------------------------------------------------------


def test_illegal_event_names_the_state_and_the_allowed_events(scenario: DeliberationScenario) -> None:
    st = tabled(scenario)
    with pytest.raises(IllegalEvent) as err:
        machine.apply(scenario, st, Event.TABLE_CODE)
    assert (err.value.state, err.value.event, err.value.allowed) == (
        "DEBATE",
        "TABLE_CODE",
        ["OPINION_GIVEN"],
    )
    assert "Allowed now: OPINION_GIVEN" in str(err.value)


def test_closing_a_round_early_and_unknown_events_are_illegal(scenario: DeliberationScenario) -> None:
    st = tabled(scenario)
    for event in (Event.CONSENSUS_REACHED, "NOT_AN_EVENT"):
        with pytest.raises(IllegalEvent):
            machine.apply(scenario, st, event)


def test_nothing_is_allowed_after_conclusion(scenario: DeliberationScenario) -> None:
    st = act(scenario, vetoed(scenario, secret_finding()), Event.AMENDMENT_DECLINED, text="no")
    st = act(scenario, st, Event.IRRECONCILABLE)
    with pytest.raises(IllegalEvent) as err:
        machine.apply(scenario, st, Event.TABLE_CODE)
    assert err.value.allowed == []


@pytest.mark.parametrize(
    ("seat", "stance", "critical", "reason"),
    [
        ("security", "SYNTHESIS", False, Refusal.WRONG_SEAT),  # ops_km speaks first
        ("ops_km", "VETO", False, Refusal.NO_CRITICAL_FLAW),
    ],
)
def test_opinion_refusals(
    scenario: DeliberationScenario, seat: str, stance: str, critical: bool, reason: str
) -> None:
    st = tabled(scenario, secret_finding()) if critical else tabled(scenario)
    with pytest.raises(Refusal) as err:
        machine.apply(
            scenario,
            st,
            Event.OPINION_GIVEN,
            {"seat": seat, "stance": stance, "confidence": 0.9, "text": "x"},
        )
    assert reason in str(err.value)


def test_a_member_without_veto_right_cannot_veto(scenario: DeliberationScenario) -> None:
    st = tabled(scenario, secret_finding())
    st = act(scenario, st, Event.OPINION_GIVEN, seat="ops_km", stance="SYNTHESIS", confidence=0.9, text="x")
    st = act(scenario, st, Event.OPINION_GIVEN, seat="security", stance="SYNTHESIS", confidence=0.9, text="x")
    with pytest.raises(Refusal) as err:
        machine.apply(
            scenario,
            st,
            Event.OPINION_GIVEN,
            {"seat": "maintainer", "stance": "VETO", "confidence": 0.9, "text": "x"},
        )
    assert Refusal.NO_VETO_RIGHT in str(err.value)


def test_a_refused_event_changes_nothing(scenario: DeliberationScenario) -> None:
    st = tabled(scenario)
    before = st.model_dump()
    with pytest.raises(Refusal) as err:
        machine.apply(
            scenario,
            st,
            Event.OPINION_GIVEN,
            {"seat": "ops_km", "stance": "SYNTHESIS", "confidence": 1.5, "text": ""},
        )
    assert "confidence" in str(err.value) and "text" in str(err.value)
    assert st.model_dump() == before


def test_compromise_needs_a_condition(scenario: DeliberationScenario) -> None:
    st = act(scenario, vetoed(scenario, shell_finding()), Event.AMENDMENT_DECLINED, text="no")
    with pytest.raises(Refusal):
        machine.apply(scenario, st, Event.COMPROMISE_OFFERED, {"text": "ship it", "conditions": []})


def test_human_seat_is_reported_by_next_step(scenario: DeliberationScenario) -> None:
    st = act(scenario, fresh(scenario, human_seat="security"), Event.TABLE_CODE)
    st = act(scenario, st, Event.OPINION_GIVEN, seat="ops_km", stance="SYNTHESIS", confidence=0.9, text="x")
    step = machine.next_step(scenario, st)
    assert (step.seat, step.human) == ("security", True)
    with pytest.raises(ValueError, match="seat"):
        fresh(scenario, human_seat="chair")


def test_restore_refuses_another_schema(scenario: DeliberationScenario) -> None:
    from simulations.engine.errors import ResumeError

    st = tabled(scenario)
    assert machine.restore(st.model_dump(mode="json")) == st
    with pytest.raises(ResumeError):
        machine.restore({**st.model_dump(mode="json"), "schema_version": 99})


def test_every_event_has_its_own_payload_model() -> None:
    assert set(machine.PAYLOADS) == set(Event)
    assert len(set(machine.PAYLOADS.values())) == len(Event)
    assert {t.event for t in machine.TRANSITIONS} == set(Event)
