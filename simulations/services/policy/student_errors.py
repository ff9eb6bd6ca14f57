"""What a student reads when a move is refused: the engine's errors are exact and name states and events (tests and
logs want that); a student wants to know what happened and what to do, in words of the game.

Every kind's move view passes its refusals through `for_student`; the engine's own sentence stays in the log."""

from __future__ import annotations

import logging

from simulations.engine.errors import IllegalEvent, InvalidMove, MachineError
from simulations.services.ledger.turns import StaleTurn
from simulations.services.policy.message_text import CONTROL_CHARACTERS, NO_VISIBLE_TEXT

log = logging.getLogger("mercury.moves")

ALREADY_PLAYED = (
    "That turn was already played, perhaps in another tab — here is where the game is now. "
    "What you typed is kept in the box."
)
NOT_YOUR_TURN = "It is not your turn yet — here is where the game is now. What you typed is kept in the box."
NOT_OPEN_NOW = (
    "That move is not open at this point of the game — the page now shows what you can do. "
    "What you typed is kept in the box."
)

# InvalidMove's reasons, in the student's words (a reason not listed falls back to a general sentence).
_REASONS = {
    InvalidMove.EMPTY_TEXT: "Your message is empty: write something, then send it.",
    InvalidMove.TEXT_TOO_LONG: "Your message is longer than the limit: shorten it, then send it again.",
    NO_VISIBLE_TEXT: "Your message has nothing visible in it (only spaces or invisible characters): write something, "
    "then send it.",
    CONTROL_CHARACTERS: "Your message contains control characters that cannot be stored: remove them, then send it "
    "again.",
    InvalidMove.BAD_PARTNER: "That delegation cannot be your partner: choose one from the list.",
    InvalidMove.SAME_PARTNER: "Your second talk needs a different partner: choose another delegation.",
    InvalidMove.BAD_STARTER: "Choose who speaks first, then start the talk.",
    InvalidMove.BAD_PLACEMENT: "Choose where you want to speak, then open the debate.",
    InvalidMove.BAD_BALLOT: "Choose Yes or No, then cast your vote.",
    InvalidMove.UNKNOWN_ROLE: "Choose one of the delegations on this page.",
    InvalidMove.UNKNOWN_VARIANT: "Choose one of the openings offered for your delegation.",
    InvalidMove.WRONG_ACTOR: NOT_YOUR_TURN,
}
GENERAL = "That move could not be made here. The page now shows where the game is; try again from there."


def for_student(exc: Exception) -> str:
    """The sentence shown for a refused move. Errors already written for people (a model failure, a rate limit,
    a form problem) pass through unchanged."""
    if isinstance(exc, StaleTurn):
        return ALREADY_PLAYED
    if isinstance(exc, IllegalEvent):  # posted at the game's current version: not a turn someone else played
        log.info("refused move: %s", exc)
        return NOT_OPEN_NOW
    if isinstance(exc, InvalidMove):
        log.info("refused move: %s", exc)
        own = (sentence for start, sentence in exc.STUDENT_SENTENCES.items() if exc.reason.startswith(start))
        return next(own, None) or _REASONS.get(exc.reason, GENERAL)
    if isinstance(exc, MachineError):
        log.info("refused move: %s", exc)
        return GENERAL
    return str(exc)


# A failed AI turn's card: its heading by the failure's cause (the sentence under it says what to do).
FAILURE_TITLES = {
    "refused_connection": "The model server could not be reached",
    "timeout": "The model took too long to answer",
    "rate_limited": "The model server is busy",
    "server_error": "The model server had an error",
    "auth": "The model server refused the key",
    "budget": "This game's model budget is used up",
    "truncated": "The model's answer was cut off",
}


def failure_title(cause: str) -> str:
    return FAILURE_TITLES.get(cause, "This turn could not be played")
