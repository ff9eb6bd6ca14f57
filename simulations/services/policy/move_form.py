"""What every kind's move form must carry, posted or sent over the game's websocket, checked the same way in every
kind before the kind reads the move: no NUL byte in any field, the move rate, and the game version the form was
rendered at. Each refusal has one status and one sentence everywhere (`refusal_status`)."""

from __future__ import annotations

from collections.abc import Mapping

from django.http import QueryDict

from simulations.services.policy.rate_limit import RateLimited, check_rate


class MissingVersion(ValueError):
    MESSAGE = "This move did not say which turn it answers (the version field is missing); reload the page."

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


class NulInForm(ValueError):
    MESSAGE = "The form contained a NUL character, which cannot be stored; remove it and send again."

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


# The form's own refusals, in the order they are checked: a bad field is 400, too many moves 429.
FORM_REFUSALS = (NulInForm, RateLimited, MissingVersion)


def read_move_form(fields: Mapping[str, str], *, user_id: int) -> int:
    """Precondition: the user may drive the game. The form's version, after the checks every kind's move shares;
    raises NulInForm, RateLimited (the move still counts against the rate) or MissingVersion."""
    every = (
        (v for _, values in fields.lists() for v in values)
        if isinstance(fields, QueryDict)
        else fields.values()
    )
    if any("\x00" in value for value in every):
        raise NulInForm()
    check_rate(user_id=user_id, action="move")
    return form_version(fields)


def refusal_status(exc: Exception) -> int:
    """The HTTP status of one of FORM_REFUSALS."""
    return 429 if isinstance(exc, RateLimited) else 400


def form_version(fields: Mapping[str, str]) -> int:
    """The game version a move's form was rendered at, posted or sent over the game's websocket. Required: without
    it a re-sent or forged move could not be told from the current turn, and concurrent copies would each commit."""
    raw = fields.get("version", "").strip()
    if not raw.isdigit():
        raise MissingVersion()
    return int(raw)
