"""What a person may type into any free-text field of any kind: readable text, nothing that hides or reorders what
others see. One rule for messages, opinions, directions, briefs, uploads, file names and scripts.

NUL and other control characters are refused (PostgreSQL cannot store NUL; none of them is text a reader sees);
bidi embeddings, overrides and isolates are removed (they make stored text read differently from what was sent);
text with no visible character (spaces, zero-width or format characters, blank fillers such as U+3164 or U+2800,
combining marks with nothing to combine with) is refused before it is committed, so it never uses up a turn.
"""

from __future__ import annotations

import re
import unicodedata

from django import forms

# U+202A-U+202E embeddings/overrides, U+2066-U+2069 isolates: dropped (the left/right marks stay harmless).
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
_ALLOWED_CONTROLS = frozenset("\n\r\t")
# Letters and symbols that draw nothing: the Hangul fillers, the blank braille pattern, Khmer's inherent vowels.
_BLANK_GRAPHICS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u17b4\u17b5")
CONTROL_CHARACTERS = "the message contains control characters (such as NUL) that cannot be stored"
EMPTY_TEXT = "the message is empty"  # the engine's own words (InvalidMove.EMPTY_TEXT) for blank text
NO_VISIBLE_TEXT = "the message has no visible characters"
LINE_BREAK = "the text must be one line"

# The same reasons in words for a form field (a message's sentences live in student_errors, for its moves).
FIELD_SENTENCES = {
    CONTROL_CHARACTERS: "This contains control characters (such as NUL) that cannot be stored: remove them.",
    EMPTY_TEXT: "This is empty: write something.",
    NO_VISIBLE_TEXT: "This has nothing visible in it (only spaces or invisible characters): write something.",
    LINE_BREAK: "This must be one line.",
}


class UnreadableText(ValueError):
    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def normalise_message(text: str) -> str:
    """The text as it will be stored: bidi controls removed, line ends made \\n. Raises UnreadableText (control characters,
    nothing visible)."""
    if has_control_characters(text):
        raise UnreadableText(CONTROL_CHARACTERS)
    if not text.strip():
        raise UnreadableText(EMPTY_TEXT)
    text = _BIDI_CONTROLS.sub("", text).replace("\r\n", "\n")  # otherwise verbatim: what was typed is kept
    if not has_visible_text(text):
        raise UnreadableText(NO_VISIBLE_TEXT)
    return text


def normalise_optional(text: str) -> str:
    """As `normalise_message`, but blank text is allowed and stored as ""."""
    return "" if not text.strip() and not has_control_characters(text) else normalise_message(text)


def normalise_line(text: str) -> str:
    """One line (a file name, a title): as `normalise_message`, and no line break or tab either."""
    if any(ch in _ALLOWED_CONTROLS for ch in text):
        raise UnreadableText(LINE_BREAK)
    return normalise_message(text)


def has_control_characters(text: str) -> bool:
    """C0 and C1 controls other than line ends and tabs (NUL, ESC, BEL, DEL, U+0080-U+009F)."""
    return any(unicodedata.category(ch) == "Cc" and ch not in _ALLOWED_CONTROLS for ch in text)


def has_visible_text(text: str) -> bool:
    """At least one character that draws something on its own."""
    return any(_visible(ch) for ch in text)


def _visible(ch: str) -> bool:
    # Separators (Z*), format characters (Cf: zero-width space/joiners, BOM, tags) and controls show nothing;
    # a combining mark (M*) shows only on a base character, which is counted by itself.
    return (
        not ch.isspace() and unicodedata.category(ch)[0] not in ("Z", "C", "M") and ch not in _BLANK_GRAPHICS
    )


class ReadableTextField(forms.CharField):
    """A form's free-text field under the shared rule: the same refusals, in a field's words, in every kind.
    `one_line` for names; `required=False` stores blank text as ""."""

    def __init__(self, *, one_line: bool = False, **kwargs: object) -> None:
        kwargs.setdefault("strip", False)
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.one_line = one_line

    def clean(self, value: object) -> str:
        if isinstance(value, str) and has_control_characters(value):  # before Django's own NUL sentence
            raise forms.ValidationError(FIELD_SENTENCES[CONTROL_CHARACTERS], code="unreadable")
        text = super().clean(value)
        if not text.strip() and not self.required:
            return ""
        try:
            if self.one_line:
                return normalise_line(text.strip())
            return normalise_message(text) if self.required else normalise_optional(text)
        except UnreadableText as exc:
            raise forms.ValidationError(FIELD_SENTENCES[exc.reason], code="unreadable") from exc
