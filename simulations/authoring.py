"""The admin's structured editor: a scenario's editable fields as form fields, grouped in sections, some as grids.

A kind lists the fields of a scenario document an author edits most (`Kind.admin.authoring_fields`): each names its
place in the document (a path of keys and list indexes), a label, and what kind of value it holds. This module
turns that list into a Django form filled from the document, writes a submitted form back into a copy of the
document, and puts the kind schema's errors beside the fields they are about (by the error's location in the
document). What the list leaves out stays as it was, and is edited in the YAML editor.

A negotiation has some 300 such fields, too many for one page: the editor shows one part at a time (`parts`), a
section of the list, or one group of a long section (a delegation), with a table of contents of all of them.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from django import forms
from django.utils.text import slugify

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


# A section of more fields than this (a negotiation's delegations) is edited one group (one delegation) at a time;
# a grid (the stances) stays whole, as it is read across its rows and columns.
PART_FIELDS = 40


@dataclass(frozen=True)
class Part:
    """What one page of the forms editor shows: the fields (their indexes in the kind's list) of a section, or of
    one group of a long section."""

    key: str  # in the page's address
    title: str
    section: str
    fields: tuple[int, ...]


def parts(specs: Sequence[FieldSpec]) -> list[Part]:
    """The editor's pages in the list's order: one a section, or one a group of a section longer than
    PART_FIELDS fields (a grid section is never split)."""
    sections: dict[str, list[int]] = {}
    for n, spec in enumerate(specs):
        sections.setdefault(spec.section, []).append(n)
    out: list[Part] = []
    for section, fields in sections.items():
        grid = any(specs[n].column for n in fields)
        if grid or len(fields) <= PART_FIELDS:
            out.append(Part(_unique(slugify(section), out), section, section, tuple(fields)))
            continue
        groups: dict[str, list[int]] = {}
        for n in fields:
            groups.setdefault(specs[n].row, []).append(n)
        for row, numbers in groups.items():
            title = f"{section}: {row}" if row else section
            out.append(Part(_unique(slugify(title), out), title, section, tuple(numbers)))
    return out


def _unique(key: str, taken: Sequence[Part]) -> str:
    key = key or "part"
    keys = {p.key for p in taken}
    n = 2
    found = key
    while found in keys:
        found, n = f"{key}-{n}", n + 1
    return found


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
    """The fields of `specs`, named f0, f1, ... by their place in the list, filled from `document`; with `only`,
    just the fields of those places (one part of the editor)."""

    def __init__(
        self,
        specs: Sequence[FieldSpec],
        document: Any,
        *args: Any,
        disabled: bool = False,
        only: Collection[int] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.specs = list(specs)
        self.shown = [n for n in range(len(self.specs)) if only is None or n in only]
        for n in self.shown:
            spec = self.specs[n]
            self.fields[f"f{n}"] = _form_field(spec, disabled)
            self.fields[f"f{n}"].initial = _initial(spec, get_at(document, spec.path))

    def edited(self, document: Any) -> Any:
        """A copy of `document` with the form's cleaned values written in (call after is_valid())."""
        result = copy.deepcopy(document)
        for n in self.shown:
            set_at(result, self.specs[n].path, _stored(self.specs[n], self.cleaned_data[f"f{n}"]))
        return result

    def add_problems(self, problems: Sequence[Any]) -> None:
        """Each schema problem beside the field it is about: the field at its location, else the first field
        inside it (a stance's own check names the stance), else above the form. A problem about a field of
        another part is shown above the form, naming that part's section and group."""
        for problem in problems:
            loc = tuple(getattr(problem, "loc", ()) or ())
            target = self._field_at(loc, self.shown)
            if target is not None:
                self.add_error(f"f{target}", problem.what)
                continue
            elsewhere = self._field_at(loc, range(len(self.specs)))
            if elsewhere is None:
                self.add_error(None, str(problem))
            else:
                spec = self.specs[elsewhere]
                where = f"{spec.section}: {spec.row}" if spec.row else spec.section
                self.add_error(None, f"In {where} — {problem}")

    def _field_at(self, loc: Path, among: Collection[int]) -> int | None:
        if not loc:
            return None
        specs = [(n, self.specs[n]) for n in among]
        exact = [n for n, s in specs if s.path == loc]
        inside = [n for n, s in specs if s.path[: len(loc)] == loc]
        above = [n for n, s in specs if loc[: len(s.path)] == s.path]  # an item of a list field
        found = exact or inside or above
        return found[0] if found else None

    def sections(self) -> list[dict[str, Any]]:
        """For the template: sections in order; a grid section has `columns` and `rows` of cells of fields, other
        sections `groups` of fields under a heading."""
        out: list[dict[str, Any]] = []
        for n in self.shown:
            spec = self.specs[n]
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
