"""What the judge and the character are asked, and how their answers are read.

The judge gets the character's accumulated prompt (for context), the states reached, the open transitions with
their conditions, and the seed's conservative rules (in our words); it answers `{is_transition, to_state,
explanation}`. The character gets the accumulated prompt as its system message and the conversation so far. The
offline model is also handed the scenario and the state as facts (it reads no prose).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from simulations.engine.model_replies import ReplyError, attach_facts, json_object, read_facts

from . import graph
from .document import RoleplayState
from .machine import Judged
from .scenario import RoleplayScenario, fill

PROMPT_VERSION = "roleplay-1"
FACTS = "roleplay-facts"
log = logging.getLogger(__name__)

JUDGE_RULES = """\
Decide whether {username}'s most recent message meets one of the conditions below. Be conservative:
1. Every part of a condition must be plainly met by what {username} actually wrote; AND means all parts, OR means
   any one.
2. Do not infer, assume or fill in what was not said. A hypothetical, a joke or an ambiguous remark does not count.
3. When in doubt, there is no transition.
4. A condition that names states ("has reached X") holds only if those states are listed as reached.
5. At most one transition: if several conditions are met, choose the first in the list.

States reached so far: {reached}

Open transitions (to_state: condition):
{options}

Answer with one JSON object and nothing else:
{{"is_transition": true or false, "to_state": "<one to_state from the list, or empty>", "explanation": "<one \
sentence: which words of the message meet which condition, or why none is met>"}}"""


@dataclass(frozen=True)
class Request:
    op: str  # "judge" | "reply"
    messages: list[dict[str, str]]
    facts: dict[str, Any]

    @property
    def purpose(self) -> str:
        return "transition" if self.op == "judge" else "reply"


def _conversation(scenario: RoleplayScenario, state: RoleplayState) -> list[dict[str, str]]:
    return [
        {"role": "assistant" if m.role == "character" else "user", "content": m.text} for m in state.messages
    ]


def judge_request(scenario: RoleplayScenario, state: RoleplayState, document: dict[str, Any]) -> Request:
    options = graph.by_priority(graph.available(scenario, state.visited, state.blocked))
    listed = "\n".join(f"- {o.target}: {o.condition}" for o in options)
    reached = ", ".join(v for v in state.visited if v != "START") or "none yet"
    rules = JUDGE_RULES.format(username="{username}", reached=reached, options=listed)
    system = "\n\n".join(
        [
            "You are the judge of a practice conversation. You do not speak in it.",
            "The character's instructions, for context:\n"
            + graph.accumulated_prompt(scenario, state.visited, username=state.username),
            fill(rules, username=state.username, botname=scenario.botname),
        ]
    )
    messages = [{"role": "system", "content": system}, *_conversation(scenario, state)]
    return Request(
        "judge", messages, {"op": "judge", "scenario": document, "state": state.model_dump(mode="json")}
    )


def reply_request(scenario: RoleplayScenario, state: RoleplayState, document: dict[str, Any]) -> Request:
    system = graph.accumulated_prompt(scenario, state.visited, username=state.username)
    messages = [{"role": "system", "content": system}, *_conversation(scenario, state)]
    return Request(
        "reply", messages, {"op": "reply", "scenario": document, "state": state.model_dump(mode="json")}
    )


def with_facts(req: Request) -> list[dict[str, str]]:
    return attach_facts(req.messages, FACTS, req.facts)


def judged_from_reply(scenario: RoleplayScenario, state: RoleplayState, text: str) -> Judged:
    """The judge's answer as a TRANSITION_JUDGED payload. A target that is not open now becomes "no transition"
    with the refusal noted (and logged): the model never moves the conversation where the graph does not go.
    Raises ReplyError when the answer is not the JSON asked for."""
    data = json_object(text)
    target = str(data.get("to_state") or "").strip()
    target = target.rsplit(":", 1)[-1].strip()  # "GLOBAL:SUCCESS" or "Source:Target" mean the target
    try:
        judged = Judged.model_validate(
            {"is_transition": data.get("is_transition"), "to_state": target[:120],
             "explanation": str(data.get("explanation") or "")[:1200]}
        )  # fmt: skip
    except ValidationError as exc:
        raise ReplyError(
            f"the judge's answer is not {{is_transition, to_state, explanation}}: {exc.errors()[0]['msg']}"
        ) from None
    if not judged.is_transition:
        return judged.model_copy(update={"to_state": ""})
    if graph.option_for(graph.available(scenario, state.visited, state.blocked), judged.to_state) is None:
        log.warning(
            "roleplay judge named %r, which is not an open transition; no transition taken", judged.to_state
        )
        return Judged(
            is_transition=False, explanation=judged.explanation, refused=judged.to_state or "(none)"
        )
    return judged


def reply_text(text: str) -> str:
    """The character's words as stored: trimmed; a reply that is empty is not usable."""
    cleaned = text.strip()
    if not cleaned:
        raise ReplyError("the character's reply is empty")
    return cleaned[:6000]


def offline_answer(messages: Sequence[dict[str, Any]]) -> str | None:
    """The offline judge's or character's answer to one of our prompts (None: not ours)."""
    import json

    from . import offline
    from .scenario import RoleplayScenario as Scenario

    facts = read_facts(list(messages), FACTS)
    if facts is None:
        return None
    scenario = Scenario.model_validate(facts["scenario"])
    state = RoleplayState.model_validate(facts["state"])
    if facts["op"] == "judge":
        return json.dumps(offline.judge(scenario, state))
    return offline.reply(scenario, state)
