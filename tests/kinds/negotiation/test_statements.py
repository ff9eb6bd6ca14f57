"""What delegations state counts: the student's words in proposals, public statements in the state, the judge's
reading of talks from the event payload, refused model readings falling back to the rules."""

from __future__ import annotations

from typing import Any

import pytest

from simulations.kinds.negotiation import judge, machine, rules
from simulations.kinds.negotiation.bots import Decision, Passive
from simulations.kinds.negotiation.machine import Step
from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import SCHEMA_VERSION, GameState
from tests.kinds.negotiation.driver import new_pure_game

SAYS_4_2 = "The United States supports 4.2, out of scope pending assessment, once the convention is secure."


class SpeaksOnIssue4(Passive):
    """A passive US student who speaks once, in public, for 4.2 (its brief prefers 4.1)."""

    def decide(self, scenario: Scenario, state: GameState, step: Step) -> Decision:
        issue = state.active_issue
        if step.purpose == "placement":
            return "ISSUE_INTRO_COMPLETE", {"placement": "first"}
        if (
            step.purpose == "speech"
            and issue is not None
            and issue.issue_id == "4"
            and issue.debate_round == 1
        ):
            return "HUMAN_TURN_SPEAK", {"text": SAYS_4_2}
        return super().decide(scenario, state, step)


def test_the_students_public_statement_counts_in_the_chairs_proposal(scenario: Scenario) -> None:
    game = new_pure_game(scenario, 5).play(SpeaksOnIssue4("USA"), until="ISSUE_VOTE")
    while game.state.active_issue is None or game.state.active_issue.issue_id != "4":
        game.step(SpeaksOnIssue4("USA"))
        game.play(SpeaksOnIssue4("USA"), until="ISSUE_VOTE")
    state, issue = game.state, game.state.active_issue
    assert issue is not None and issue.issue_id == "4" and state.status == "ISSUE_VOTE"
    assert state.stances["USA"]["4"].preferred == "4.1"  # the brief's default never moved
    assert state.stated["USA"]["4"] == "4.2"  # what the student said
    assert rules.position(state, "USA", "4") == "4.2"
    assert "USA" in rules.support_counts(scenario, state, "4")["4.2"]
    assert ("USA" in issue.supporters) == (
        issue.proposal == "4.2"
    )  # the chair lists the student where it spoke


def test_openings_state_positions_in_public(scenario: Scenario) -> None:
    game = new_pure_game(scenario, 3).play(Passive("EU"), until="ROUND_2_SELECT_CONVO_1")
    stated = game.state.stated
    assert len(stated) >= 6  # most openings say where the seat stands
    for role, said in stated.items():
        variant = scenario.role(role).opening(game.state.round1.openings[role])
        reading = judge.read_signals(scenario, variant.text, speaker=role)
        assert said == judge.stated_options(reading)
        for issue_id, option in said.items():
            assert option in [o.id for o in scenario.issue(issue_id).options]


def _in_first_talk(scenario: Scenario) -> Any:
    game = new_pure_game(scenario, 9).play(Passive("USA"), until="ROUND_2_SELECT_CONVO_1")
    game.apply("CONVO_1_STARTED", {"partner": "CHN", "starter": "human"})
    return game


def test_a_talk_message_is_judged_from_the_payloads_signals(scenario: Scenario) -> None:
    """A model's validated reading is what moves the listener, in private talks as in debate."""
    game = _in_first_talk(scenario)
    before = game.state.stances["CHN"]["2"].pressure.get("2.2", {})
    outcome = game.apply(
        "HUMAN_MESSAGE_SUBMITTED", {"text": "Thank you.", "signals": {"support": {"2": ["2.2"]}}}
    )
    (seq, judgement), = outcome.judgements  # fmt: skip
    assert judgement.source == "llm" and judgement.signals.support == {"2": ["2.2"]}
    assert seq == outcome.entries[0].seq
    assert game.state.stances["CHN"]["2"].pressure["2.2"]["USA"] > before.get("USA", 0.0)
    # Said in private: known to the two parties, not part of the public record the lean panel shows.
    assert game.state.stated_in_talks["USA"]["CHN"] == {"2": "2.2"}
    assert game.state.stated.get("USA", {}).get("2") != "2.2"


@pytest.mark.parametrize(
    ("signals", "note"),
    [
        ({"support": {"9": ["9.9"]}}, judge.InvalidSignals.MESSAGE),
        ({"support": {"2": ["4.1"]}}, judge.InvalidSignals.MESSAGE),
        ({"votes": "all yes"}, judge.InvalidSignals.MESSAGE),
        (None, judge.MODEL_UNUSABLE),
    ],
)
def test_a_refused_model_reading_falls_back_to_the_rules_and_says_so(
    scenario: Scenario, signals: Any, note: str
) -> None:
    game = _in_first_talk(scenario)
    text = "We support 2.1, emissions in scope."
    outcome = game.apply("HUMAN_MESSAGE_SUBMITTED", {"text": text, "signals": signals})
    (_, judgement), = outcome.judgements  # fmt: skip
    assert (judgement.source, judgement.note) == ("fallback", note)
    assert judgement.signals == judge.read_signals(scenario, text, speaker="USA")
    assert game.state.stated_in_talks["USA"]["CHN"] == {"2": "2.1"}


def test_without_a_model_the_rules_read(scenario: Scenario) -> None:
    game = _in_first_talk(scenario)
    outcome = game.apply("HUMAN_MESSAGE_SUBMITTED", {"text": "We support 4.2 and oppose 4.1."})
    (_, judgement), = outcome.judgements  # fmt: skip
    assert judgement.source == "rules" and judgement.note == ""
    assert (judgement.signals.support, judgement.signals.oppose) == ({"4": ["4.2"]}, {"4": ["4.1"]})


def test_a_schema_1_snapshot_resumes_with_an_empty_statements_record(scenario: Scenario) -> None:
    game = new_pure_game(scenario, 4).play(Passive("CAN"), until="ROUND_2_SELECT_CONVO_1")
    snapshot = game.state.model_dump(mode="json")
    del snapshot["stated"], snapshot["stated_in_talks"]
    snapshot["schema_version"] = 1
    resumed = machine.resume(scenario, snapshot)
    assert (
        resumed.schema_version == SCHEMA_VERSION
        and resumed.stated == {}
        and resumed.status == game.state.status
    )
