"""The admin's structured editor: a scenario's editable fields as form fields, grouped in sections, some as grids.

A kind lists the fields of a scenario document an author edits most (`Kind.authoring_fields`): each names its
place in the document (a path of keys and list indexes), a label, and what kind of value it holds. This module
turns that list into a Django form filled from the document, writes a submitted form back into a copy of the
document, and puts the kind schema's errors beside the fields they are about (by the error's location in the
document). What the list leaves out stays as it was, and is edited in the YAML editor.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from django import forms

Path = tuple[str | int, ...]
Value = Literal["text", "long_text", "number", "integer", "flag", "choice", "choices", "lines"]


@dataclass(frozen=True)
class FieldSpec:
    """One editable value. In a grid section, `row` and `column` place it in a table (a role's stance on an
    issue); elsewhere `row` groups fields under a heading (one role, one issue)."""

    section: str
    path: Path
    label: str
    value: Value
    row: str = ""
    column: str = ""
    choices: tuple[tuple[str, str], ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    help: str = ""


def get_at(document: Any, path: Path) -> Any:
    node = document
    for key in path:
        node = node[key]
    return node


def set_at(document: Any, path: Path, value: Any) -> None:
    node = document
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def _form_field(spec: FieldSpec, disabled: bool) -> forms.Field:
    common: dict[str, Any] = {"label": spec.label, "help_text": spec.help, "disabled": disabled}
    limits: dict[str, Any] = {"min_value": spec.minimum, "max_value": spec.maximum}
    match spec.value:
        case "text":
            return forms.CharField(**common, strip=False, widget=forms.TextInput(attrs={"size": 60}))
        case "long_text":  # kept as written, final newline included (the YAML's block texts end with one)
            return forms.CharField(
                **common, strip=False, widget=forms.Textarea(attrs={"rows": 5, "cols": 90})
            )
        case "number":
            step = {"step": "0.05"} if spec.maximum is not None and spec.maximum <= 1 else {"step": "any"}
            return forms.FloatField(**common, **limits, widget=forms.NumberInput(attrs=step))
        case "integer":
            return forms.IntegerField(**common, **limits)
        case "flag":
            return forms.BooleanField(**common, required=False)
        case "choice":
            return forms.ChoiceField(**common, choices=spec.choices)
        case "choices":
            return forms.MultipleChoiceField(
                **common, choices=spec.choices, required=False, widget=forms.CheckboxSelectMultiple
            )
        case "lines":
            return forms.CharField(
                **common,
                required=False,
                widget=forms.Textarea(attrs={"rows": 3, "cols": 90}),
            )
    raise ValueError(f"unknown field value {spec.value!r}")


def _initial(spec: FieldSpec, value: Any) -> Any:
    if spec.value == "lines":
        return "\n".join(str(line) for line in value or [])
    return value


def _stored(spec: FieldSpec, value: Any) -> Any:
    if spec.value == "lines":
        return [line.strip() for line in str(value or "").splitlines() if line.strip()]
    if spec.value == "choices":
        return list(value or [])
    if spec.value == "text" or spec.value == "long_text":
        return str(value).replace("\r\n", "\n")
    return value


class StructuredForm(forms.Form):
    """The fields of `specs`, named f0, f1, ... in order, filled from `document`."""

    def __init__(
        self, specs: Sequence[FieldSpec], document: Any, *args: Any, disabled: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.specs = list(specs)
        for n, spec in enumerate(self.specs):
            self.fields[f"f{n}"] = _form_field(spec, disabled)
            self.fields[f"f{n}"].initial = _initial(spec, get_at(document, spec.path))

    def edited(self, document: Any) -> Any:
        """A copy of `document` with the form's cleaned values written in (call after is_valid())."""
        result = copy.deepcopy(document)
        for n, spec in enumerate(self.specs):
            set_at(result, spec.path, _stored(spec, self.cleaned_data[f"f{n}"]))
        return result

    def add_problems(self, problems: Sequence[Any]) -> None:
        """Each schema problem beside the field it is about: the field at its location, else the first field
        inside it (a stance's own check names the stance), else above the form."""
        for problem in problems:
            loc = tuple(getattr(problem, "loc", ()) or ())
            target = self._field_at(loc)
            self.add_error(target, str(problem) if target is None else problem.what)

    def _field_at(self, loc: Path) -> str | None:
        if not loc:
            return None
        exact = [n for n, s in enumerate(self.specs) if s.path == loc]
        inside = [n for n, s in enumerate(self.specs) if s.path[: len(loc)] == loc]
        above = [
            n for n, s in enumerate(self.specs) if loc[: len(s.path)] == s.path
        ]  # an item of a list field
        found = exact or inside or above
        return f"f{found[0]}" if found else None

    def sections(self) -> list[dict[str, Any]]:
        """For the template: sections in order; a grid section has `columns` and `rows` of cells of fields, other
        sections `groups` of fields under a heading."""
        out: list[dict[str, Any]] = []
        for n, spec in enumerate(self.specs):
            if not out or out[-1]["title"] != spec.section:
                out.append(
                    {
                        "title": spec.section,
                        "grid": bool(spec.column),
                        "columns": [],
                        "rows": [],
                        "groups": [],
                    }
                )
            section, bound = out[-1], self[f"f{n}"]
            if section["grid"]:
                if spec.column not in section["columns"]:
                    section["columns"].append(spec.column)
                if not section["rows"] or section["rows"][-1]["title"] != spec.row:
                    section["rows"].append({"title": spec.row, "cells": {}})
                section["rows"][-1]["cells"].setdefault(spec.column, []).append(bound)
            else:
                if not section["groups"] or section["groups"][-1]["title"] != spec.row:
                    section["groups"].append({"title": spec.row, "fields": []})
                section["groups"][-1]["fields"].append(bound)
        for section in out:  # cells in column order, for a plain loop in the template
            for row in section["rows"]:
                row["cells"] = [row["cells"].get(c, []) for c in section["columns"]]
        return out
