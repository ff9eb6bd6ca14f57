"""What every kind's move form must carry, posted or sent over the game's websocket: the game version it was rendered
at, and no NUL byte in any field."""

from __future__ import annotations

from collections.abc import Mapping


class MissingVersion(ValueError):
    MESSAGE = "This move did not say which turn it answers (the version field is missing); reload the page."

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


class NulInForm(ValueError):
    MESSAGE = "The form contained a NUL character, which cannot be stored; remove it and send again."

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


def form_version(fields: Mapping[str, str]) -> int:
    """The game version a move's form was rendered at, posted or sent over the game's websocket. Required: without
    it a re-sent or forged move could not be told from the current turn, and concurrent copies would each commit."""
    raw = fields.get("version", "").strip()
    if not raw.isdigit():
        raise MissingVersion()
    return int(raw)
