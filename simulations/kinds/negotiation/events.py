"""The negotiation's events and what each may carry: one enum, one pydantic payload model per event.

The machine's table (machine.TRANSITIONS) names each transition's payload model; `machine.apply` validates the
payload against it before any action runs, so an action reads typed fields and a malformed move is refused with
the reason a student can act on ("the message is empty", "ballot must be 'yes' or 'no'"). What a student may put
in a payload is derived from the same models (`student_fields`): a field the server adds (a judge's `signals`)
is never taken from a form.

The stored ledger keeps the payload exactly as it was committed (a dict), so exports do not change shape.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator

from simulations.engine.errors import InvalidMove
from simulations.kinds.negotiation.state import Ballot, Placement, Starter, Status

MAX_MESSAGE_CHARS = 2000
MAX_SUMMARY_CHARS = 8000  # the debrief is a handout in sections (one per issue), not a message


class Event(StrEnum):
    NEW_GAME_CREATED = "NEW_GAME_CREATED"
    LOAD_EXISTING_GAME = "LOAD_EXISTING_GAME"
    RESUME_READY = "RESUME_READY"
    ROLE_CONFIRMED = "ROLE_CONFIRMED"
    ROUND_1_READY = "ROUND_1_READY"
    OPENING_PRESENTED = "OPENING_PRESENTED"
    ROUND_1_COMPLETE = "ROUND_1_COMPLETE"
    ROUND_2_READY = "ROUND_2_READY"
    CONVO_1_STARTED = "CONVO_1_STARTED"
    HUMAN_MESSAGE_SUBMITTED = "HUMAN_MESSAGE_SUBMITTED"
    AI_MESSAGE_COMMITTED = "AI_MESSAGE_COMMITTED"
    CONVO_1_CLOSED = "CONVO_1_CLOSED"
    CONVO_2_CLOSED = "CONVO_2_CLOSED"
    CONVO_2_STARTED = "CONVO_2_STARTED"
    CONVO_2_SKIPPED = "CONVO_2_SKIPPED"
    # A class group's game: every student's talks side by side (stored before them: the next student's talks).
    ROUND_2_NEXT_STUDENT = "ROUND_2_NEXT_STUDENT"
    ROUND_2_TALKS_OPENED = "ROUND_2_TALKS_OPENED"
    ROUND_2_COMPLETE = "ROUND_2_COMPLETE"
    ROUND_3_READY = "ROUND_3_READY"
    ISSUE_INTRO_COMPLETE = "ISSUE_INTRO_COMPLETE"
    HUMAN_TURN_SPEAK = "HUMAN_TURN_SPEAK"
    HUMAN_TURN_SKIP = "HUMAN_TURN_SKIP"
    AI_TURN_COMMITTED = "AI_TURN_COMMITTED"
    AI_TURN_SKIPPED = "AI_TURN_SKIPPED"
    DEBATE_ROUND_1_COMPLETE = "DEBATE_ROUND_1_COMPLETE"
    DEBATE_ROUND_2_COMPLETE = "DEBATE_ROUND_2_COMPLETE"
    POSITIONS_FINALIZED = "POSITIONS_FINALIZED"
    PROPOSAL_MADE = "PROPOSAL_MADE"
    HUMAN_VOTE_CAST = "HUMAN_VOTE_CAST"
    AI_VOTE_COMMITTED = "AI_VOTE_COMMITTED"
    VOTE_COMPLETE = "VOTE_COMPLETE"
    NEXT_ISSUE = "NEXT_ISSUE"
    ALL_ISSUES_RESOLVED = "ALL_ISSUES_RESOLVED"
    ROUND_3_ENDED = "ROUND_3_ENDED"
    REQUEST_AI_SUMMARY = "REQUEST_AI_SUMMARY"
    AI_SUMMARY_READY = "AI_SUMMARY_READY"


# --- payloads ---------------------------------------------------------------------------------------------


class Payload(BaseModel):
    """A payload carries exactly its fields; a missing or mistyped field is refused with that field's reason."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    REASONS: ClassVar[dict[str, str]] = {}
    # Added by the server, never taken from a form: a judge's reading, the mark of a student's move made by the
    # seat's AI stand-in (a class group's game), and, for an event in one of Round 2's side-by-side lanes, the
    # student's seat it is in and the last event the move was made after (the page's, or the AI step's).
    SERVER_FIELDS: ClassVar[tuple[str, ...]] = ("signals", "stand_in", "seat", "seen")
    stand_in: bool = False
    seat: str | None = None
    seen: int | None = None

    @classmethod
    def student_fields(cls) -> tuple[str, ...]:
        return tuple(name for name in cls.model_fields if name not in cls.SERVER_FIELDS)

    @classmethod
    def read(
        cls, source: str, event: str, raw: dict[str, Any], scenario: object = None, state: object = None
    ) -> Payload:
        """The payload as this model, or InvalidMove with the reason of its first field that fails. Fields
        that name scenario content (a seat, its opening, a partner) are checked against `scenario` and the
        game's `state` when given (the machine always gives them)."""
        try:
            return cls.model_validate(raw, context={"scenario": scenario, "state": state})
        except ValidationError as exc:
            raise InvalidMove(source, event, _reason(cls, exc)) from exc


def _reason(model: type[Payload], exc: ValidationError) -> str:
    first = exc.errors()[0]
    if first["type"] == "value_error":  # a validator's own words (an InvalidMove reason)
        return str(first["ctx"]["error"])
    if first["type"] == "extra_forbidden":
        return InvalidMove.UNKNOWN_FIELD
    field = str(first["loc"][0]) if first["loc"] else ""
    return model.REASONS.get(field, InvalidMove.BAD_PAYLOAD)


class Empty(Payload):
    pass


class RoleChoice(Payload):
    """The first student's seat and opening; `others`: the seats other students hold (a class group's game, set
    by the platform as it starts the game, never taken from a form)."""

    REASONS = {
        "role": InvalidMove.UNKNOWN_ROLE, "variant": InvalidMove.UNKNOWN_VARIANT, "others": InvalidMove.UNKNOWN_ROLE,
    }  # fmt: skip
    SERVER_FIELDS = ("signals", "stand_in", "seat", "seen", "others")
    role: str
    variant: str | None = None  # None: the role's first opening
    others: list[str] = []

    @field_validator("others")
    @classmethod
    def _other_seats(cls, others: list[str], info: ValidationInfo) -> list[str]:
        scenario, role = (info.context or {}).get("scenario"), info.data.get("role")
        if len(set(others)) != len(others) or role in others:
            raise ValueError(InvalidMove.UNKNOWN_ROLE)
        if scenario is not None and any(seat not in scenario.role_ids for seat in others):
            raise ValueError(InvalidMove.UNKNOWN_ROLE)
        return others

    @field_validator("role")
    @classmethod
    def _a_seat(cls, role: str, info: ValidationInfo) -> str:
        scenario = (info.context or {}).get("scenario")
        if scenario is not None and role not in scenario.role_ids:
            raise ValueError(InvalidMove.UNKNOWN_ROLE)
        return role

    @field_validator("variant")
    @classmethod
    def _its_opening(cls, variant: str | None, info: ValidationInfo) -> str | None:
        scenario, role = (info.context or {}).get("scenario"), info.data.get("role")
        if not variant or scenario is None or role is None:  # "" and None: the role's first opening
            return variant
        if variant not in [v.id for v in scenario.role(role).openings]:
            raise ValueError(InvalidMove.UNKNOWN_VARIANT)
        return variant


class TalkStart(Payload):
    REASONS = {"partner": InvalidMove.BAD_PARTNER, "starter": InvalidMove.BAD_STARTER}
    partner: str
    starter: Starter = "partner"

    @field_validator("partner")
    @classmethod
    def _a_new_partner(cls, partner: str, info: ValidationInfo) -> str:
        context = info.context or {}
        scenario, state = context.get("scenario"), context.get("state")
        if scenario is None or state is None:
            return partner
        student = state.round2_student
        if partner not in scenario.role_ids or partner == student:
            raise ValueError(InvalidMove.BAD_PARTNER)
        if any({state.talker_of(c), c.partner} == {student, partner} for c in state.round2.conversations):
            raise ValueError(InvalidMove.SAME_PARTNER)
        return partner


class _Text(Payload):
    LIMIT: ClassVar[int] = MAX_MESSAGE_CHARS
    REASONS = {"text": InvalidMove.EMPTY_TEXT}
    text: str

    @field_validator("text")
    @classmethod
    def _bounded(cls, text: str) -> str:
        if not text.strip():
            raise ValueError(InvalidMove.EMPTY_TEXT)
        if len(text) > cls.LIMIT:
            raise ValueError(InvalidMove.TEXT_TOO_LONG)
        return text


class Spoken(_Text):
    """A message or speech. `signals`: a model judge's reading (absent: the rules read it; refused signals fall
    back to the rules in `judge.judge_message`, so any value is taken here)."""

    signals: Any = None


class Summary(_Text):
    LIMIT = MAX_SUMMARY_CHARS


class PlacementChoice(Payload):
    REASONS = {"placement": InvalidMove.BAD_PLACEMENT}
    placement: Placement


class BallotCast(Payload):
    REASONS = {"ballot": InvalidMove.BAD_BALLOT}
    ballot: Ballot


class ResumeTarget(Payload):
    REASONS = {"status": InvalidMove.BAD_STATUS}
    status: Status
