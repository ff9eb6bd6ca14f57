"""A deliberation in the admin: its preview, its rehearsal, and what the structured editor shows: the scenario's text, each persona (brief, vote,
veto, confidence) and each house rule's severity and wording. Tool codes, checks and samples stay in the YAML
editor."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from simulations.authoring import FieldSpec

from .presenters import ROLE_NAMES
from .scenario import DeliberationScenario
from .state import Severity


def authoring_fields(document: dict[str, Any]) -> list[FieldSpec]:
    out = [
        FieldSpec("Scenario", ("title",), "Title", "text"),
        FieldSpec("Scenario", ("description",), "Description", "long_text"),
    ]
    for p, persona in enumerate(document["personas"]):
        row, where = f"{persona['title']} ({persona['id']})", ("personas", p)
        out += [
            FieldSpec("Personas", (*where, "name"), "Name", "text", row=row),
            FieldSpec("Personas", (*where, "title"), "Title", "text", row=row),
            FieldSpec("Personas", (*where, "brief"), "Brief", "long_text", row=row,
                      help="What this persona knows, wants and how it speaks."),
            FieldSpec("Personas", (*where, "votes"), "Votes (counted by the quorum)", "flag", row=row),
            FieldSpec("Personas", (*where, "can_veto"), "Can veto", "flag", row=row),
            FieldSpec("Personas", (*where, "confidence_threshold"), "Confidence threshold", "number", row=row,
                      minimum=0, maximum=1),
        ]  # fmt: skip
    severities = tuple((s.value, s.value) for s in Severity)
    for r, rule in enumerate(document["house_rules"]):
        row, where = f"Rule {rule['id']}", ("house_rules", r)
        out += [
            FieldSpec("House rules", (*where, "description"), "Description", "text", row=row),
            FieldSpec("House rules", (*where, "severity"), "Severity", "choice", row=row, choices=severities),
            FieldSpec("House rules", (*where, "compromise_allowed"), "Compromise allowed", "flag", row=row),
        ]
    return out


def rehearsal(scenario: DeliberationScenario) -> tuple[str | None, dict[str, Any]]:
    if not scenario.samples:
        raise ValueError("a rehearsal reviews the scenario's first sample; add one")
    return None, {"sample": scenario.samples[0].id}  # everyone played by the personas


def preview(scenario: DeliberationScenario) -> str:
    personas = [(p, ROLE_NAMES[p.role]) for p in scenario.personas]
    return render_to_string("deliberation/preview.html", {"scenario": scenario, "personas": personas})
