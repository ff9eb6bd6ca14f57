"""What only the built-in offline model reads: the whole deliberation, sent as one facts message, so that its
personas decide from the real findings (`offline.decide`); and its answer to such a request."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from . import machine, offline
from .machine import Event
from .scenario import DeliberationScenario
from .state import DeliberationState

FACTS_OPEN, FACTS_CLOSE = "<deliberation-facts>", "</deliberation-facts>"


def facts_message(scenario: DeliberationScenario, state: DeliberationState, seat: str) -> dict[str, str]:
    """What only the offline model reads: the whole deliberation, so its personas decide from the real findings."""
    facts = {
        "seat": seat,
        "scenario": scenario.model_dump(mode="json"),
        "state": state.model_dump(mode="json"),
    }
    return {"role": "user", "content": f"{FACTS_OPEN}{json.dumps(facts)}{FACTS_CLOSE}"}


def offline_answer(messages: Sequence[dict[str, Any]]) -> str | None:
    for message in messages:
        content = str(message.get("content", ""))
        start, end = content.find(FACTS_OPEN), content.find(FACTS_CLOSE)
        if start != -1 and end > start:
            facts = json.loads(content[start + len(FACTS_OPEN) : end])
            break
    else:
        return None
    scenario = DeliberationScenario.model_validate(facts["scenario"])
    state = DeliberationState.model_validate(facts["state"])
    step = machine.next_step(scenario, state)
    move = offline.decide(scenario, state, step)
    assert move.payload is not None
    reply: dict[str, Any] = move.payload.model_dump(mode="json", exclude={"stand_in"})
    if move.event == Event.OPINION_GIVEN:
        reply.pop("seat", None)
    elif move.event == Event.COMPROMISE_OFFERED:
        reply["offer"] = True
    else:
        reply = {"offer": False, "text": reply["text"]}
    return json.dumps(reply)
