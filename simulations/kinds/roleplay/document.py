"""One practice conversation's state, as checkpointed: the seed's `visited_states` (and the states forks blocked),
the conversation, and every judgment with its explanation."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .scenario import START

SCHEMA_VERSION = 1
MAX_MESSAGE = 2000  # characters a student may send at once
MAX_EXCHANGES = 40  # student messages before the conversation ends as FAIL (the seed's "takes too long")


class Status(StrEnum):
    STUDENT_TURN = "STUDENT_TURN"  # the student writes
    JUDGING = "JUDGING"  # the judge reads the student's message against the open transitions
    CHARACTER_TURN = "CHARACTER_TURN"  # the character answers, from the prompt the visited states built
    ENDED = "ENDED"  # SUCCESS or FAIL reached and the character's last words said


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Message(_Doc):
    role: Literal["student", "character"]
    text: str


class Judgment(_Doc):
    """What the judge made of one student message (the seed's `{is_transition, to_state, explanation}`), and what
    the machine did with it."""

    turn: int  # the student message it read (1-based)
    is_transition: bool
    to_state: str = ""
    key: str = ""  # the transition taken ("S:T", "INITIAL:X", "GLOBAL:SUCCESS"), "" if none
    type: str = ""  # initial | parallel | fork | terminal
    explanation: str = ""
    refused: str = ""  # a target the judge named that was not open: refused and logged, no transition
    blocked: list[str] = Field(default_factory=list)  # states a fork taken here blocked for good


class RoleplayState(_Doc):
    schema_version: int = SCHEMA_VERSION
    seed: int
    username: str  # how the character addresses the student ({username})
    status: Status = Status.STUDENT_TURN
    visited: list[str] = Field(default_factory=lambda: [START])
    blocked: list[str] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)
    judgments: list[Judgment] = Field(default_factory=list)
    event_seq: int = 0

    @property
    def turns(self) -> int:
        """Student messages so far."""
        return sum(1 for m in self.messages if m.role == "student")

    @property
    def outcome(self) -> str:
        """SUCCESS or FAIL once reached, else ""."""
        return next((v for v in self.visited if v in ("SUCCESS", "FAIL")), "")

    def last_student_message(self) -> str:
        return next((m.text for m in reversed(self.messages) if m.role == "student"), "")
