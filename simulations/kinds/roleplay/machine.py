"""A practice conversation's machine (pure): the student speaks, the judge reads the message against the open
transitions, the character answers from the prompt the visited states built; SUCCESS or FAIL ends it.

    STUDENT_TURN --STUDENT_SPOKE--> JUDGING --TRANSITION_JUDGED--> CHARACTER_TURN --CHARACTER_REPLIED--> STUDENT_TURN
    STUDENT_TURN --STUDENT_LEFT--> CHARACTER_TURN (FAIL entered: the student ended it before the goal)
    CHARACTER_TURN --CHARACTER_REPLIED--> ENDED once SUCCESS or FAIL is visited (the reply is the character's last words)

The judge's answer is a move like any other: it is checked against the transitions open now (graph.available), so
a model can only ever enter a state the graph offers; a target that is not open is refused here and changes
nothing (the driver records such an answer as "no transition", with the refusal, before it commits).

One message may take several steps (issue #66: "I'm sorry, that was our mistake" both acknowledges and owns it):
the answer's `also` lists further targets, each checked in turn against the transitions open once the ones before
it were taken, forks blocking as they go; each step is its own judgment of the same message. Nothing follows an
ending.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from simulations.engine.errors import IllegalEvent, InvalidMove
from simulations.engine.payloads import restore_snapshot
from simulations.engine.transitions import Transition

from . import graph
from .document import MAX_EXCHANGES, MAX_MESSAGE, SCHEMA_VERSION, Judgment, Message, RoleplayState, Status
from .scenario import RoleplayScenario, fill

STUDENT, JUDGE, SYSTEM = "student", "judge", "system"
# The machine's own explanations of a FAIL no judge chose (the end screen tells them apart: wording.py).
LEFT = "The student ended the conversation before reaching the goal."
RAN_OUT = f"The conversation ran to {MAX_EXCHANGES} messages without reaching the goal."


class Event(StrEnum):
    CONVERSATION_STARTED = "CONVERSATION_STARTED"
    STUDENT_SPOKE = "STUDENT_SPOKE"
    STUDENT_LEFT = "STUDENT_LEFT"
    TRANSITION_JUDGED = "TRANSITION_JUDGED"
    CHARACTER_REPLIED = "CHARACTER_REPLIED"


class Refusal(InvalidMove):
    NOT_OPEN = "that state is not open from here (not an available transition)"
    NO_TARGET = "a transition needs the state it goes to"


class _Payload(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Spoke(_Payload):
    text: str = Field(min_length=1, max_length=MAX_MESSAGE)


class Left(_Payload):
    pass


class Also(_Payload):
    """A further step the same message took, after the one before it."""

    to_state: str = Field(min_length=1, max_length=120)
    explanation: str = Field(default="", max_length=1200)


MAX_STEPS = 6  # steps one message may take (a scenario's states are few; this bounds a model's answer)


class Judged(_Payload):
    """The seed's judge answer, and the further steps the same message took (`also`); `refused` is the driver's
    note of a target it could not take."""

    is_transition: bool
    to_state: str = Field(default="", max_length=120)
    explanation: str = Field(default="", max_length=1200)
    refused: str = Field(default="", max_length=120)
    also: list[Also] = Field(default_factory=list, max_length=MAX_STEPS - 1)


class Replied(_Payload):
    text: str = Field(min_length=1, max_length=6000)


PAYLOADS: dict[Event, type[_Payload]] = {
    Event.STUDENT_SPOKE: Spoke, Event.STUDENT_LEFT: Left, Event.TRANSITION_JUDGED: Judged,
    Event.CHARACTER_REPLIED: Replied,
}  # fmt: skip
WAITS_FOR: dict[Status, tuple[Event, ...]] = {
    Status.STUDENT_TURN: (Event.STUDENT_SPOKE, Event.STUDENT_LEFT),
    Status.JUDGING: (Event.TRANSITION_JUDGED,),
    Status.CHARACTER_TURN: (Event.CHARACTER_REPLIED,),
    Status.ENDED: (),
}
ACTOR = {
    Status.STUDENT_TURN: "human",
    Status.JUDGING: "ai",
    Status.CHARACTER_TURN: "ai",
    Status.ENDED: "done",
}


@dataclass(frozen=True)
class Step:
    event: Event | None
    actor: str  # human | ai | done

    @property
    def done(self) -> bool:
        return self.event is None


def next_step(state: RoleplayState) -> Step:
    events = WAITS_FOR[state.status]
    return Step(events[0] if events else None, ACTOR[state.status])


@dataclass
class Outcome(Transition[Event, RoleplayState]):
    said: list[tuple[int, Message]] = field(default_factory=list)  # (message number, message) written
    changes: list[dict[str, Any]] = field(default_factory=list)


def start(scenario: RoleplayScenario, *, seed: int, username: str) -> Outcome:
    state = RoleplayState(seed=seed, username=username)
    opening = Message(
        role="character", text=fill(scenario.opening, username=username, botname=scenario.botname)
    )
    state.messages.append(opening)
    state.event_seq = 1
    return Outcome(1, Event.CONVERSATION_STARTED, SYSTEM, "", state.status.value, {}, state, [(1, opening)])


def apply(
    scenario: RoleplayScenario, state: RoleplayState, event: Event | str, payload: dict[str, Any]
) -> Outcome:
    """Apply one move to a copy of `state`. Raises IllegalEvent or Refusal and then changes nothing."""
    allowed = [e.value for e in WAITS_FOR[state.status]]
    try:
        ev = Event(event)
    except ValueError:
        raise IllegalEvent(state.status.value, str(event), allowed) from None
    if ev.value not in allowed:
        raise IllegalEvent(state.status.value, ev.value, allowed)
    try:
        parsed = PAYLOADS[ev].model_validate(payload or {})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'payload'}: {e['msg']}" for e in exc.errors())
        raise Refusal(state.status.value, ev.value, f"{Refusal.BAD_PAYLOAD}: {problems}") from None
    new = state.model_copy(deep=True)
    out = Outcome(new.event_seq + 1, ev, SYSTEM, state.status.value, "", parsed.model_dump(mode="json"), new)
    if isinstance(parsed, Spoke):
        _say(out, Message(role="student", text=parsed.text), STUDENT)
        new.status = Status.JUDGING
    elif isinstance(parsed, Left):
        out.actor = STUDENT
        _judged(scenario, out, Judged(is_transition=True, to_state="FAIL", explanation=LEFT))
    elif isinstance(parsed, Judged):
        out.actor = JUDGE
        _judged(scenario, out, parsed)
    elif isinstance(parsed, Replied):
        _say(out, Message(role="character", text=parsed.text), scenario.botname)
        new.status = Status.ENDED if new.outcome else Status.STUDENT_TURN
    new.event_seq = out.seq
    out.target = new.status.value
    return out


def _say(out: Outcome, message: Message, actor: str) -> None:
    out.state.messages.append(message)
    out.said.append((len(out.state.messages), message))
    out.actor = actor


def _judged(scenario: RoleplayScenario, out: Outcome, judged: Judged) -> None:
    state = out.state
    turn = state.turns
    record = Judgment(turn=turn, is_transition=False, explanation=judged.explanation, refused=judged.refused)
    if judged.is_transition:
        if not judged.to_state:
            raise Refusal(out.source, out.event.value, Refusal.NO_TARGET)
        steps = [Also(to_state=judged.to_state, explanation=judged.explanation), *judged.also]
        for step in steps[:-1]:
            _take(scenario, out, step, turn)
        record = _take(scenario, out, steps[-1], turn, log=False)
    elif judged.also:
        raise Refusal(out.source, out.event.value, Refusal.NO_TARGET)
    elif turn >= MAX_EXCHANGES and not state.outcome:
        state.visited.append("FAIL")
        record = Judgment(
            turn=turn, is_transition=True, to_state="FAIL", key="GLOBAL:FAIL", type="terminal",
            explanation=f"{judged.explanation} {RAN_OUT}".strip(), refused=judged.refused,
        )  # fmt: skip
    state.judgments.append(record)
    out.changes.append(record.model_dump(mode="json"))
    state.status = Status.CHARACTER_TURN


def _take(scenario: RoleplayScenario, out: Outcome, step: Also, turn: int, *, log: bool = True) -> Judgment:
    """Take one step of a judged message (the caller records the last one): checked against the transitions open
    now, and refused whole if it is not one of them or an ending was already reached."""
    state = out.state
    option = graph.option_for(graph.available(scenario, state.visited, state.blocked), step.to_state)
    if option is None or state.outcome:
        raise Refusal(out.source, out.event.value, f"{Refusal.NOT_OPEN}: {step.to_state}")
    before = set(state.blocked)
    state.visited, state.blocked = graph.enter(scenario, state.visited, state.blocked, option)
    record = Judgment(
        turn=turn, is_transition=True, to_state=option.target, key=option.key, type=option.type,
        explanation=step.explanation, blocked=[b for b in state.blocked if b not in before],
    )  # fmt: skip
    if log:
        state.judgments.append(record)
        out.changes.append(record.model_dump(mode="json"))
    return record


def restore(snapshot: dict[str, Any]) -> RoleplayState:
    return restore_snapshot(
        RoleplayState, snapshot, schema_version=SCHEMA_VERSION, what="a practice conversation"
    )
