"""A Message Lab scenario in the admin: its preview, its rehearsal, and what the structured editor shows: its title and summary, each persona's
voice, strengths, what it pushes for and how it critiques, and each brief's text and facts. Lists (signature
moves, proof points, keywords, constraints) and the run defaults stay in the YAML editor."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from simulations.authoring import FieldSpec


def authoring_fields(document: dict[str, Any]) -> list[FieldSpec]:
    out = [
        FieldSpec("Scenario", ("title",), "Title", "text"),
        FieldSpec("Scenario", ("summary",), "Summary (the lobby's sentence)", "long_text"),
    ]
    for p, persona in enumerate(document["personas"]):
        row, where = f"{persona['name']} ({persona['role']})", ("personas", p)
        out += [
            FieldSpec("Personas", (*where, "name"), "Name", "text", row=row),
            FieldSpec("Personas", (*where, "voice"), "Voice", "long_text", row=row,
                      help="How this persona writes and talks: every prompt and the offline writer read it."),
            FieldSpec("Personas", (*where, "pushes_for"), "Pushes for", "long_text", row=row),
            FieldSpec("Personas", (*where, "critique_style"), "How it critiques", "long_text", row=row),
        ]  # fmt: skip
    for b, brief in enumerate(document["briefs"]):
        row, where = brief["title"], ("briefs", b)
        out += [
            FieldSpec("Briefs", (*where, "title"), "Title", "text", row=row),
            FieldSpec("Briefs", (*where, "audience"), "Audience", "long_text", row=row),
            FieldSpec("Briefs", (*where, "goal"), "Goal", "long_text", row=row),
            FieldSpec("Briefs", (*where, "text"), "The brief as the panel reads it (Markdown)", "long_text", row=row),
        ]  # fmt: skip
    return out


def rehearsal(scenario: Any) -> tuple[str | None, dict[str, Any]]:
    return None, {}  # the default panel and brief; a bot approves each gate as it stands


def preview(scenario: Any) -> str:
    return render_to_string("message_lab/preview.html", {"scenario": scenario})
