"""The deliberation's forms: the set-up (what to review, which seat) and one form per move a person can make.

Django validates the fields; the machine still decides whether the move is open and legal (its payload models and
guards), so a form never re-states a rule of the table beyond what a field must look like."""

from __future__ import annotations

from typing import Any

from django import forms

from .machine import MAX_FIX_ITEMS, MAX_TEXT_CHARS
from .scenario import DeliberationScenario

SOURCES = (
    ("sample", "Pick a sample"),
    ("paste", "Paste code"),
    ("file", "Upload a file"),
    ("diff", "A unified diff"),
)
MAX_LINES_TEXT = 4000  # a list field (fix items, conditions): one item a line


def lines_of(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def seat_choices(scenario: DeliberationScenario) -> list[tuple[str, str]]:
    """Watch, act as the proposer, or take an elected member's seat (what `new_deliberation` accepts)."""
    proposer = scenario.persona(scenario.proposer)
    return [("", "Watch the committee"), (proposer.id, f"Act as the proposer: {proposer.label}")] + [
        (seat, f"Take the seat of {scenario.persona(seat).label}") for seat in scenario.members
    ]


class StartForm(forms.Form):
    source = forms.ChoiceField(choices=SOURCES, initial="sample", widget=forms.RadioSelect)
    sample = forms.ChoiceField(required=False, widget=forms.RadioSelect)
    code = forms.CharField(
        required=False, strip=False, widget=forms.Textarea(attrs={"rows": 8, "class": "code"})
    )
    filename = forms.CharField(required=False, max_length=100)
    diff = forms.CharField(
        required=False, strip=False, widget=forms.Textarea(attrs={"rows": 6, "class": "code"})
    )
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
        data = super().clean() or {}
        source = data.get("source")
        if source == "sample" and not data.get("sample"):
            self.add_error("sample", self.NO_SAMPLE)
        elif source == "paste" and not (data.get("code") or "").strip():
            self.add_error("code", self.NO_CODE)
        elif source == "file" and not data.get("upload"):
            self.add_error("upload", self.NO_FILE)
        elif source == "diff" and not (data.get("diff") or "").strip() and not data.get("upload"):
            self.add_error("diff", self.NO_DIFF)
        return data


class OpinionForm(forms.Form):
    stance = forms.ChoiceField(widget=forms.RadioSelect)
    confidence = forms.FloatField(min_value=0.0, max_value=1.0)
    text = forms.CharField(max_length=MAX_TEXT_CHARS, widget=forms.Textarea)
    fix_items = forms.CharField(required=False, max_length=MAX_LINES_TEXT, widget=forms.Textarea)

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
    code = forms.CharField(required=False, strip=False, widget=forms.Textarea)
    upload = forms.FileField(required=False)

    NO_CODE = "Paste the amended code, or upload it."

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not (data.get("code") or "").strip() and not data.get("upload"):
            self.add_error("code", self.NO_CODE)
        return data


class StatementForm(forms.Form):
    """A decline: the proposer's (no amendment) or the business driver's (no compromise)."""

    text = forms.CharField(max_length=MAX_TEXT_CHARS, widget=forms.Textarea)


class CompromiseForm(forms.Form):
    text = forms.CharField(max_length=MAX_TEXT_CHARS, widget=forms.Textarea)
    conditions = forms.CharField(max_length=MAX_LINES_TEXT, widget=forms.Textarea)

    TOO_MANY = "Name between one and ten conditions, one a line."

    def clean_conditions(self) -> list[str]:
        items = lines_of(self.cleaned_data.get("conditions") or "")
        if not 1 <= len(items) <= 10:
            raise forms.ValidationError(self.TOO_MANY)
        return items
