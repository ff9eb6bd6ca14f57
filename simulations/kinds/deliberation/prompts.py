"""What a real model would be asked per persona, and the reply it must return (pure: builds text, parses JSON).

A reply is validated twice: here against the reply model (shape, ranges), then by the machine as an event payload
(whose turn it is, veto rights, critical findings, confidence threshold). Model output never changes the state
any other way.
"""

from __future__ import annotations

import json
import re
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from simulations.engine.model_replies import ReplyError

from .code_reading import mask_secrets
from .machine import (
    MAX_FIX_ITEMS,
    MAX_TEXT_CHARS,
    CompromiseDeclined,
    CompromiseOffer,
    Event,
    Opinion,
    Payload,
)
from .scenario import DeliberationScenario, PersonaRole
from .state import MAX_ROUNDS, DeliberationState, Stance, State

MAX_CODE_LINES = 400  # the prompt shows at most this many numbered lines of the submission


class Reply(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


R = TypeVar("R", bound=Reply)


class PersonaReply(Reply):
    """A member's turn in a debate round."""

    stance: Stance
    confidence: float = Field(ge=0.0, le=1.0)
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    fix_items: list[str] = Field(default_factory=list, max_length=MAX_FIX_ITEMS)


class CompromiseReply(Reply):
    """The business driver's answer to a veto: a cost-of-delay compromise, or none."""

    offer: bool
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    conditions: list[str] = Field(default_factory=list, max_length=10)

    @model_validator(mode="after")
    def _an_offer_has_conditions(self) -> CompromiseReply:
        if self.offer and not self.conditions:
            raise ValueError("a compromise needs at least one condition")
        return self


def masked_code(state: DeliberationState) -> str:
    """The submission as a model may read it: every line a secret was found on masked."""
    sub = state.submission
    return mask_secrets(sub.code, {f.line for f in sub.findings if f.category == "secret"})


def _numbered(code: str) -> str:
    lines = code.splitlines()
    shown = "\n".join(f"{n:>4} | {line}" for n, line in enumerate(lines[:MAX_CODE_LINES], start=1))
    cut = len(lines) - MAX_CODE_LINES
    return shown + (f"\n... {cut} more lines not shown" if cut > 0 else "")


def _verification_results(state: DeliberationState) -> str:
    sub = state.submission
    if not sub.findings:
        found = "No findings: the secrets scan, bandit, ruff and the committee's reading of the code report nothing."
    else:
        found = "\n".join(
            f"- [{f.severity.value}] {f.tool} {f.code} line {f.line}{f' `{f.quote}`' if f.quote else ''}: "
            f"{f.message} (house rule {f.rule}"
            f"{', compromise allowed' if f.compromise_allowed else ''})"
            for f in sub.findings
        )
    notes = "".join(f"\nNote: {n}" for n in sub.notes)
    return found + notes


def _debate_so_far(scenario: DeliberationScenario, state: DeliberationState) -> str:
    lines = [
        f"[round {e.round}, {e.state.value}] {scenario.persona(e.speaker).label}: {e.text}"
        for e in state.log
        if e.kind != "transition"
    ]
    return "\n".join(lines) or "(nothing yet)"


def _house_rules(scenario: DeliberationScenario) -> str:
    return "\n".join(f"- {r.id} ({r.severity.value}): {r.description}" for r in scenario.house_rules)


def build_messages(
    scenario: DeliberationScenario, state: DeliberationState, seat: str
) -> list[dict[str, str]]:
    """Chat messages for the persona in `seat`: its brief, the code, the verification results, the debate."""
    persona = scenario.persona(seat)
    rnd = state.current_round
    if persona.role == PersonaRole.BUSINESS_DRIVER and state.status == State.VETO:
        ask = (
            'A veto stands. Reply with one JSON object: {"offer": true|false, "text": "<your cost-of-delay '
            'argument>", "conditions": ["<condition the merge must meet>", ...]}.'
        )
    else:
        veto = (
            "You hold a veto, for critical findings only."
            if persona.can_veto
            else "You hold no veto: do not answer VETO."
        )
        ask = (
            f"{veto} If your confidence is below {persona.confidence_threshold:.2f} your vote counts as an "
            'abstention. Reply with one JSON object: {"stance": "SYNTHESIS"|"OBJECT"|"VETO"|"ABSTAIN", '
            '"confidence": 0.0-1.0, "text": "<your opinion, quoting the lines you mean>", "fix_items": '
            '["<fix>", ...]}. If what is wrong lies outside your field, abstain and say what you would need to '
            "vote. If a person holds a seat on the committee, answer that person's argument on its merits."
        )
    system = (
        f"You are {persona.label}, {persona.role.value.replace('_', ' ')} on a code review committee. "
        f"{persona.brief.strip()}\nArgue from the code itself as well as the verification results (the tools' "
        "findings and the committee's own reading, tool code-reading), and from your role; quote the lines you "
        "mean. Secrets in the code are masked as ***. The committee has at most "
        f"{MAX_ROUNDS} rounds.\nHouse rules:\n{_house_rules(scenario)}"
    )
    compromise = (
        f"\nThis round debates under the business driver's compromise: {rnd.compromise.text} "
        f"Conditions: {'; '.join(rnd.compromise.conditions)}."
        if rnd and rnd.compromise
        else ""
    )
    user = (
        f"Round {state.round}, state {state.status.value}. Submission v{state.submission.version}: "
        f"{state.submission.label}\n\n{_numbered(masked_code(state))}\n\nVerification results:\n"
        f"{_verification_results(state)}{compromise}\n\nDebate so far:\n{_debate_so_far(scenario, state)}\n\n{ask}"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def _load_json(raw: str) -> object:
    try:
        return json.loads(_FENCE.sub("", raw.strip()))
    except json.JSONDecodeError as exc:
        raise ReplyError(f"the reply is not JSON ({exc.msg} at character {exc.pos})") from None


def _validated(model: type[R], raw: str) -> R:
    try:
        return model.model_validate(_load_json(raw))
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in exc.errors())
        raise ReplyError(f"the reply does not match {model.__name__}: {problems}") from None


def opinion_from_reply(raw: str, *, seat: str) -> Opinion:
    """A member's reply as an OPINION_GIVEN payload (the machine still decides whether it is legal)."""
    reply = _validated(PersonaReply, raw)
    return Opinion(seat=seat, stance=reply.stance, confidence=reply.confidence, text=reply.text,
                   fix_items=reply.fix_items)  # fmt: skip


def compromise_from_reply(raw: str) -> tuple[Event, Payload]:
    reply = _validated(CompromiseReply, raw)
    if reply.offer:
        return Event.COMPROMISE_OFFERED, CompromiseOffer(text=reply.text, conditions=reply.conditions)
    return Event.COMPROMISE_DECLINED, CompromiseDeclined(text=reply.text)


_TEXT_FIELD = re.compile(r'"text"\s*:\s*"')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "n": "\n", "t": "\t", "r": "", "b": "", "f": ""}


def streamed_text(partial: str) -> str:
    """The part of the `text` field that has arrived in a reply still streaming (a page shows the persona's words
    as they come, not the JSON around them); "" until the field begins."""
    found = _TEXT_FIELD.search(partial)
    if not found:
        return ""
    out: list[str] = []
    chars = iter(partial[found.end() :])
    for ch in chars:
        if ch == '"':
            break
        if ch == "\\":
            nxt = next(chars, "")
            if nxt == "u":  # a \\uXXXX escape: shown once complete
                digits = "".join(next(chars, "") for _ in range(4))
                if len(digits) == 4 and all(c in "0123456789abcdefABCDEF" for c in digits):
                    out.append(chr(int(digits, 16)))
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            continue
        out.append(ch)
    return "".join(out)
