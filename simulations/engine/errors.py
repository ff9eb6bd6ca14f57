"""Typed engine errors. Messages are built from constants so tests can assert them exactly."""

from __future__ import annotations

from collections.abc import Sequence


class MachineError(Exception):
    """Base class: the event was refused and nothing changed."""


class IllegalEvent(MachineError):
    def __init__(self, state: str, event: str, allowed: Sequence[str]) -> None:
        self.state, self.event, self.allowed = state, event, list(allowed)
        super().__init__(
            f"Event {event} is not allowed in state {state}. Allowed now: {', '.join(allowed) or 'nothing'}."
        )


class InvalidMove(MachineError):
    UNKNOWN_ROLE = "that role is not a playable seat"
    UNKNOWN_VARIANT = "that opening variant does not belong to the role"
    BAD_PARTNER = "that delegation cannot be your partner"
    SAME_PARTNER = "the second talk needs a different partner"
    BAD_STARTER = "starter must be 'human' or 'partner'"
    BAD_PLACEMENT = "placement must be 'first', 'random' or 'skip'"
    EMPTY_TEXT = "the message is empty"
    TEXT_TOO_LONG = "the message is longer than the limit"
    BAD_BALLOT = "ballot must be 'yes' or 'no'"
    BAD_STATUS = "the stored status is not a resumable state"
    INCONSISTENT = "the stored state is not consistent with that status"
    WRONG_ACTOR = "it is not this actor's turn"
    BAD_SIGNALS = "the judge's reading of the message is invalid"
    UNKNOWN_FIELD = "the move carries a field this event does not take"
    BAD_PAYLOAD = "the move's details are not valid"

    # The reasons that say the move is someone else's to make now (a 409, as a turn already played): any other
    # reason is about what the move carries (a 400, a field to correct).
    TURN_REASONS: tuple[str, ...] = (WRONG_ACTOR,)

    # A kind's own reasons in a student's words, by the reason's beginning (first match; "" matches any): a kind
    # whose machine refuses moves the platform has no sentence for (a veto without a critical flaw) names them.
    STUDENT_SENTENCES: dict[str, str] = {}

    def __init__(self, state: str, event: str, reason: str) -> None:
        self.state, self.event, self.reason = state, event, reason
        super().__init__(f"Event {event} rejected in state {state}: {reason}.")


class ResumeError(MachineError):
    """A stored snapshot cannot be resumed (wrong schema version or missing fields)."""


class ScenarioError(Exception):
    """A scenario file or folder is not valid; the message names the file and the field."""
