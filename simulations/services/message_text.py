"""What a student's message may contain: readable text, nothing that hides or reorders what others see.

NUL and other control characters are refused (PostgreSQL cannot store NUL; none of them is text a reader sees);
bidi embeddings, overrides and isolates are removed (they make stored text read differently from what was sent);
a message with no visible character (only spaces, zero-width or format characters) is refused before it is
committed, so it never uses up the student's turn.
"""

from __future__ import annotations

import re
import unicodedata

# U+202A-U+202E embeddings/overrides, U+2066-U+2069 isolates: dropped (the left/right marks stay harmless).
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
_ALLOWED_CONTROLS = frozenset("\n\r\t")
CONTROL_CHARACTERS = "the message contains control characters (such as NUL) that cannot be stored"
EMPTY_TEXT = "the message is empty"  # the engine's own words (InvalidMove.EMPTY_TEXT) for blank text
NO_VISIBLE_TEXT = "the message has no visible characters"


class UnreadableText(ValueError):
    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def normalise_message(text: str) -> str:
    """The text as it will be stored: bidi controls removed, line ends made \\n. Raises UnreadableText (control characters,
    nothing visible)."""
    if any(unicodedata.category(ch) == "Cc" and ch not in _ALLOWED_CONTROLS for ch in text):
        raise UnreadableText(CONTROL_CHARACTERS)
    if not text.strip():
        raise UnreadableText(EMPTY_TEXT)
    text = _BIDI_CONTROLS.sub("", text).replace("\r\n", "\n")  # otherwise verbatim: what was typed is kept
    if not any(_visible(ch) for ch in text):
        raise UnreadableText(NO_VISIBLE_TEXT)
    return text


def _visible(ch: str) -> bool:
    # Separators (Z*), format characters (Cf: zero-width space/joiners, BOM, marks) and controls show nothing.
    return not ch.isspace() and unicodedata.category(ch)[0] not in ("Z", "C")
