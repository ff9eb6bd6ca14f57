"""No seat ever sees what it must not: canaries planted in every confidential brief and every private talk.

Whole games are played for all nine seats with both bot policies. Every prompt and every output of every model
call is captured, and the stored context manifests are checked too.
"""

from __future__ import annotations

from typing import Any

import pytest

from simulations.ai import gateway
from simulations.kinds.negotiation import prompts
from simulations.kinds.negotiation.bots import Decision, Policy, make_policy
from simulations.kinds.negotiation.headless import play_game
from simulations.kinds.negotiation.machine import Step
from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import GameState
from simulations.models import ModelCall, TranscriptEntry
from simulations.services.ledger.turns import create_game
from tests.kinds.negotiation.conftest import ROLES, brief_canary


def talk_canary(human: str, convo: int) -> str:
    return f"CANARYTALK{human}N{convo}Q7"


class Planting:
    """Wraps a policy: every private message the student sends carries its talk's canary."""

    def __init__(self, base: Policy) -> None:
        self.base, self.name = base, base.name

    def decide(self, scenario: Scenario, state: GameState, step: Step) -> Decision:
        event, payload = self.base.decide(scenario, state, step)
        if event == "HUMAN_MESSAGE_SUBMITTED":
            convo = state.round2.conversations[-1]
            payload = {
                **payload,
                "text": f"{payload['text']} {talk_canary(state.human_role or '', convo.index)}",
            }
        return event, payload


@pytest.mark.django_db
@pytest.mark.content  # what prompts hold: the embedded leg only (stored rows' privacy: tests/security)
def test_no_canary_reaches_a_seat_that_may_not_see_it(
    canary_version: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    captured: list[tuple[str, str, str]] = []  # (role, prompt text, output)
    real = gateway.complete

    def recording(messages: list[dict[str, str]], **kwargs: Any) -> gateway.Completion:
        result = real(messages, **kwargs)
        facts = prompts.read_facts(messages)
        captured.append((facts["role"]["id"], "\n".join(m["content"] for m in messages), result.text))
        return result

    monkeypatch.setattr(gateway, "complete", recording)
    own_brief_seen: set[str] = set()
    partner_saw_talk = 0
    for human in ROLES:
        for policy in ("passive", "advocate"):
            captured.clear()
            game = create_game(scenario_version=canary_version, seed=ROLES.index(human) + 1)
            game = play_game(game_id=game.pk, policy=Planting(make_policy(policy, human)))
            assert game.phase == "REVIEW"
            partners = [c["partner"] for c in game.state["round2"]["conversations"]]
            for role, prompt, output in captured:
                for other in ROLES:
                    if other != role:
                        assert brief_canary(other) not in prompt, (human, policy, role, other)
                        assert brief_canary(other) not in output, (human, policy, role, other)
                if brief_canary(role) in prompt:
                    own_brief_seen.add(role)
                for index, partner in enumerate(partners):
                    canary = talk_canary(human, index)
                    if role in (partner, "debrief"):
                        partner_saw_talk += canary in prompt
                        continue
                    assert canary not in prompt and canary not in output, (human, policy, role, index)
            # The stored manifests: every transcript entry given to a seat was visible to it.
            audiences = dict(TranscriptEntry.objects.filter(game=game).values_list("seq", "audience"))
            for call in ModelCall.objects.filter(game=game).exclude(role="debrief"):
                for seq in call.context:
                    assert not audiences[seq] or call.role in audiences[seq], (human, call.role, seq)
    # The test can fail: seats do see their own brief, and partners do see the talk they are in.
    assert own_brief_seen == set(ROLES)
    assert partner_saw_talk > 0
