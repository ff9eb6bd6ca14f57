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
from .machine import MAX_STEPS, Also, Judged
from .scenario import RoleplayScenario, fill

PROMPT_VERSION = "roleplay-2"
FACTS = "roleplay-facts"
log = logging.getLogger(__name__)

JUDGE_RULES = """\
Decide whether {username}'s most recent message meets one of the conditions below. Be conservative:
1. Every part of a condition must be plainly met by what {username} actually wrote; AND means all parts, OR means
   any one.
2. Do not infer, assume or fill in what was not said. A hypothetical, a joke or an ambiguous remark does not count.
3. When in doubt, there is no transition.
4. A condition that names states ("has reached X") holds only if those states are listed as reached.
5. Choose one transition: if several conditions are met, the first in the list. If the same message then also
   plainly meets a condition that taking it opens (or another one listed), you may add it under "also", in order.

States reached so far: {reached}

Open transitions (to_state: condition):
{options}

Answer with one JSON object and nothing else:
{{"is_transition": true or false, "to_state": "<one to_state from the list, or empty>", "explanation": "<one \
sentence: which words of the message meet which condition, or why none is met>", "also": [optional, \
{{"to_state": "<a further state>", "explanation": "<one sentence>"}}]}}"""


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
    listed = "\n".join(f"- {o.target}: {o.condition}{_examples(scenario, o)}" for o in options)
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


EXAMPLES = 4  # paraphrases a condition's line shows the model judge: what counts, not a list to match


def _examples(scenario: RoleplayScenario, option: graph.Option) -> str:
    """A few of the scenario's cues for the condition, as examples of what counts (the offline judge's reading is
    by these; a model judge reads the condition, with them as a hint of its meaning)."""
    from .offline import cues_of

    said = [cue.replace(" & ", " … ") for cues in cues_of(scenario, option).values() for cue in cues[:2]]
    return f" (for example: {'; '.join(said[:EXAMPLES])})" if said else ""


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
    option = graph.option_for(graph.available(scenario, state.visited, state.blocked), judged.to_state)
    if option is None:
        log.warning(
            "roleplay judge named %r, which is not an open transition; no transition taken", judged.to_state
        )
        return Judged(
            is_transition=False, explanation=judged.explanation, refused=judged.to_state or "(none)"
        )
    return judged.model_copy(update={"also": _further(scenario, state, option, data.get("also"))})


def _further(
    scenario: RoleplayScenario, state: RoleplayState, first: graph.Option, answer: object
) -> list[Also]:
    """The further steps a model listed, each kept only while it is open once the ones before it are taken (the
    first that is not ends the list, logged): the machine checks them again."""
    visited, blocked = graph.enter(scenario, state.visited, state.blocked, first)
    kept: list[Also] = []
    for item in answer if isinstance(answer, list) else []:
        named = item.get("to_state") if isinstance(item, dict) else item
        target = str(named or "").rsplit(":", 1)[-1].strip()
        option = graph.option_for(graph.available(scenario, visited, blocked), target)
        if option is None or graph.terminal(visited) or len(kept) >= MAX_STEPS - 1:
            log.warning("roleplay judge listed %r as a further step, which is not open then; dropped", target)
            break
        explanation = str(item.get("explanation") or "") if isinstance(item, dict) else ""
        kept.append(Also(to_state=option.target, explanation=explanation[:1200]))
        visited, blocked = graph.enter(scenario, visited, blocked, option)
    return kept


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
