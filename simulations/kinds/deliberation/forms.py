"""The deliberation's forms: the set-up (what to review, which seat) and one form per move a person can make.

Django validates the fields; the machine still decides whether the move is open and legal (its payload models and
guards), so a form never re-states a rule of the table beyond what a field must look like.

Every free-text field follows the platform's one text rule (`services.policy.message_text`): control characters refused,
bidi controls dropped, text with nothing visible refused, a file name one line. Code (pasted, a diff, an uploaded
file) is what the tools review, so it is kept exactly as sent, but its control characters are refused too: a
NUL cannot be stored, and none of them is code a reviewer can read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import forms
from django.core.files.uploadedfile import UploadedFile

from simulations.services.policy.message_text import (
    CONTROL_CHARACTERS,
    FIELD_SENTENCES,
    ReadableTextField,
    UnreadableText,
    has_control_characters,
    has_visible_text,
    normalise_line,
)

from . import checks
from .machine import MAX_FIX_ITEMS, MAX_TEXT_CHARS
from .scenario import DeliberationScenario

SOURCES = (
    ("sample", "Pick a sample"),
    ("paste", "Paste code"),
    ("file", "Upload a file"),
    ("diff", "A unified diff"),
)
MAX_LINES_TEXT = 4000  # a list field (fix items, conditions): one item a line


TOO_LARGE = "The upload is {size:,} bytes; the limit is {limit:,} bytes."
UPLOAD_NAME = (
    "The file's name must be one line without control characters: rename the file, then upload it again."
)


def lines_of(text: str) -> list[str]:
    """One item a line; a line with nothing visible on it is left out, as a blank one is."""
    return [line.strip() for line in text.splitlines() if has_visible_text(line)]


def verbatim_code(text: str) -> str:
    """Code as sent (tabs, line ends and all); raises ValidationError if it holds a control character."""
    if has_control_characters(text):
        raise forms.ValidationError(FIELD_SENTENCES[CONTROL_CHARACTERS], code="unreadable")
    return text


class CodeField(forms.CharField):
    """Pasted code or a diff: optional (the chosen source decides), kept verbatim, control characters refused."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, strip=False, **kwargs)

    def clean(self, value: Any) -> str:
        if isinstance(value, str):
            verbatim_code(
                value
            )  # before CharField's own NUL check, so a NUL gets the shared rule's sentence too
        return verbatim_code(super().clean(value))


@dataclass(frozen=True)
class UploadedCode:
    """An uploaded file as the tools review it: its name (one line) and its text (UTF-8, no control character)."""

    name: str
    text: str


def read_upload(upload: UploadedFile, *, limit: int) -> UploadedCode:
    """The upload's name and text, refused by its declared size before any byte is read. Raises ValidationError
    with the sentence for the upload field (too large, binary, not UTF-8, empty, control characters, its name)."""
    if upload.size is not None and upload.size > limit:
        raise forms.ValidationError(TOO_LARGE.format(size=upload.size, limit=limit), code="too_large")
    try:
        text = checks.decode_input(upload.read(limit + 1), max_bytes=limit)
    except checks.CheckError as exc:
        raise forms.ValidationError(str(exc), code="unreadable") from None
    try:
        name = normalise_line(upload.name or "")
    except UnreadableText:
        raise forms.ValidationError(UPLOAD_NAME, code="unreadable") from None
    return UploadedCode(name=name, text=verbatim_code(text))


def seat_choices(scenario: DeliberationScenario) -> list[tuple[str, str]]:
    """Watch, act as the proposer, or take an elected member's seat (what `new_deliberation` accepts)."""
    proposer = scenario.persona(scenario.proposer)
    return [("", "Watch the committee"), (proposer.id, f"Act as the proposer: {proposer.label}")] + [
        (seat, f"Take the seat of {scenario.persona(seat).label}") for seat in scenario.members
    ]


class StartForm(forms.Form):
    source = forms.ChoiceField(choices=SOURCES, initial="sample", widget=forms.RadioSelect)
    sample = forms.ChoiceField(required=False, widget=forms.RadioSelect)
    code = CodeField(widget=forms.Textarea(attrs={"rows": 8, "class": "code"}))
    filename = ReadableTextField(one_line=True, required=False, max_length=100)
    diff = CodeField(widget=forms.Textarea(attrs={"rows": 6, "class": "code"}))
    upload = forms.FileField(required=False)
    seat = forms.ChoiceField(required=False, initial="", widget=forms.RadioSelect)
    model = forms.CharField(required=False, widget=forms.HiddenInput)

    NO_SAMPLE = "Choose one of the samples."
    NO_CODE = "Paste the code to review."
    NO_FILE = "Choose a file to upload."
    NO_DIFF = "Paste a unified diff, or upload one."

    def __init__(self, *args: Any, scenario: DeliberationScenario, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scenario = scenario
        sample, seat = self.fields["sample"], self.fields["seat"]
        assert isinstance(sample, forms.ChoiceField) and isinstance(seat, forms.ChoiceField)
        sample.choices = [(s.id, s.label) for s in scenario.samples]
        sample.initial = scenario.samples[0].id if scenario.samples else None
        seat.choices = seat_choices(scenario)

    def clean(self) -> dict[str, Any]:
        """Also `uploaded` (UploadedCode) when the chosen source reads the upload: read only then."""
        data = super().clean() or {}
        source = data.get("source")
        if {"code", "diff"} & set(self.errors):
            pass  # refused as written (control characters): "paste something" would be beside the point
        elif source == "sample" and not data.get("sample"):
            self.add_error("sample", self.NO_SAMPLE)
        elif source == "paste" and not (data.get("code") or "").strip():
            self.add_error("code", self.NO_CODE)
        elif source == "file" and not data.get("upload"):
            self.add_error("upload", self.NO_FILE)
        elif source == "diff" and not (data.get("diff") or "").strip() and not data.get("upload"):
            self.add_error("diff", self.NO_DIFF)
        elif source in ("file", "diff") and data.get("upload") and not (data.get("diff") or "").strip():
            try:
                data["uploaded"] = read_upload(data["upload"], limit=self.scenario.checks.max_bytes)
            except forms.ValidationError as exc:
                self.add_error("upload", exc)
        return data


class OpinionForm(forms.Form):
    stance = forms.ChoiceField(widget=forms.RadioSelect)
    confidence = forms.FloatField(min_value=0.0, max_value=1.0)
    text = ReadableTextField(max_length=MAX_TEXT_CHARS, widget=forms.Textarea)
    fix_items = ReadableTextField(required=False, max_length=MAX_LINES_TEXT, widget=forms.Textarea)

    TOO_MANY = f"At most {MAX_FIX_ITEMS} fix items, one a line."

    def __init__(self, *args: Any, stances: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        stance = self.fields["stance"]
        assert isinstance(stance, forms.ChoiceField)
        stance.choices = stances

    def clean_fix_items(self) -> list[str]:
        items = lines_of(self.cleaned_data.get("fix_items") or "")
        if len(items) > MAX_FIX_ITEMS:
            raise forms.ValidationError(self.TOO_MANY)
        return items


class AmendForm(forms.Form):
    code = CodeField(widget=forms.Textarea)
    upload = forms.FileField(required=False)

    NO_CODE = "Paste the amended code, or upload it."

    def __init__(self, *args: Any, max_bytes: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_bytes = max_bytes

    def clean(self) -> dict[str, Any]:
        """Also `uploaded` (UploadedCode) for an upload, which is taken before pasted code."""
        data = super().clean() or {}
        if data.get("upload"):
            try:
                data["uploaded"] = read_upload(data["upload"], limit=self.max_bytes)
            except forms.ValidationError as exc:
                self.add_error("upload", exc)
        elif not (data.get("code") or "").strip() and "code" not in self.errors:
            self.add_error("code", self.NO_CODE)
        return data


class StatementForm(forms.Form):
    """A decline: the proposer's (no amendment) or the business driver's (no compromise)."""

    text = ReadableTextField(max_length=MAX_TEXT_CHARS, widget=forms.Textarea)


class CompromiseForm(forms.Form):
    text = ReadableTextField(max_length=MAX_TEXT_CHARS, widget=forms.Textarea)
    conditions = ReadableTextField(max_length=MAX_LINES_TEXT, widget=forms.Textarea)

    TOO_MANY = "Name between one and ten conditions, one a line."

    def clean_conditions(self) -> list[str]:
        items = lines_of(self.cleaned_data.get("conditions") or "")
        if not 1 <= len(items) <= 10:
            raise forms.ValidationError(self.TOO_MANY)
        return items
