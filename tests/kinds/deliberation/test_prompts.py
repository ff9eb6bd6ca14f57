"""A real model's prompt carries the persona, the code, the verification results and the debate; its reply is
validated, and it can only change the state as an event the machine accepts."""

from __future__ import annotations

import json

import pytest

from simulations.kinds.deliberation import machine, prompts
from simulations.kinds.deliberation.machine import Event
from simulations.kinds.deliberation.scenario import DeliberationScenario
from simulations.kinds.deliberation.state import Stance, Submission


def test_prompt_carries_persona_code_findings_and_debate(
    scenario: DeliberationScenario, checked: dict[str, Submission]
) -> None:
    st = machine.new_deliberation(scenario, seed=1, submission=checked["deadlock"])
    st = machine.apply(scenario, st, Event.TABLE_CODE, {"text": "Tabled for review."}).state
    system, user = prompts.build_messages(scenario, st, "security")
    assert "Security Lead (Sam)" in system["content"] and "no-hardcoded-secrets" in system["content"]
    assert 'subprocess.run("rsync -a build/ " + target, shell=True' in user["content"]
    assert (
        '[critical] bandit B602 line 9 `subprocess.run("rsync -a build/ " + target, shell=True, check=True)`'
        in user["content"]
        and "compromise allowed" in user["content"]
    )
    assert "Tabled for review." in user["content"] and "You hold a veto" in user["content"]
    (_, maintainer_user) = prompts.build_messages(scenario, st, "maintainer")
    assert "You hold no veto" in maintainer_user["content"]


def test_valid_reply_becomes_an_opinion_the_machine_accepts(
    scenario: DeliberationScenario, checked: dict[str, Submission]
) -> None:
    st = machine.apply(scenario, machine.new_deliberation(scenario, seed=1, submission=checked["secret"]),
                       Event.TABLE_CODE).state  # fmt: skip
    raw = '```json\n{"stance": "VETO", "confidence": 0.93, "text": "Secret on line 3.", "fix_items": ["move it"]}\n```'
    opinion = prompts.opinion_from_reply(raw, seat="ops_km")
    st = machine.apply(scenario, st, Event.OPINION_GIVEN, opinion).state
    assert st.rounds[-1].ballots["ops_km"].stance == Stance.VETO


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("I veto this.", "not JSON"),
        (json.dumps({"stance": "MAYBE", "confidence": 0.5, "text": "x"}), "stance"),
        (json.dumps({"stance": "VETO", "confidence": 2, "text": "x"}), "confidence"),
        (json.dumps({"stance": "VETO", "confidence": 0.9, "text": "x", "state": "CONCLUSION"}), "state"),
    ],
)
def test_invalid_replies_are_refused_with_the_reason(raw: str, problem: str) -> None:
    with pytest.raises(prompts.ReplyError, match=problem):
        prompts.opinion_from_reply(raw, seat="ops_km")


def test_a_valid_reply_the_rules_forbid_is_refused_by_the_machine(
    scenario: DeliberationScenario, checked: dict[str, Submission]
) -> None:
    st = machine.new_deliberation(scenario, seed=1, submission=checked["clean"])
    st = machine.apply(scenario, st, Event.TABLE_CODE).state
    opinion = prompts.opinion_from_reply(
        '{"stance": "VETO", "confidence": 0.99, "text": "I just dislike it."}', seat="ops_km"
    )
    with pytest.raises(machine.Refusal, match="critical finding"):
        machine.apply(scenario, st, Event.OPINION_GIVEN, opinion)


def test_business_driver_reply_maps_to_offer_or_decline() -> None:
    event, payload = prompts.compromise_from_reply(
        '{"offer": true, "text": "Delay costs 3k a day.", "conditions": ["flag"]}'
    )
    assert event == Event.COMPROMISE_OFFERED and isinstance(payload, machine.CompromiseOffer)
    event, _ = prompts.compromise_from_reply('{"offer": false, "text": "No compromise on this."}')
    assert event == Event.COMPROMISE_DECLINED
    with pytest.raises(prompts.ReplyError, match="at least one condition"):
        prompts.compromise_from_reply('{"offer": true, "text": "ship"}')
