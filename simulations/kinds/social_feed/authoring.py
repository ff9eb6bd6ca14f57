"""A social-feed scenario in the admin: its preview, its rehearsal (a short run), and what the structured editor
shows (the title, the lobby's sentence, the run's defaults). Agents and the feed's rules stay in the YAML editor."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from simulations.authoring import FieldSpec

from .config import SocialFeedScenario


def preview(scenario: SocialFeedScenario) -> str:
    return render_to_string("social_feed/preview.html", {"scenario": scenario})


def rehearsal(scenario: SocialFeedScenario) -> tuple[str | None, dict[str, Any]]:
    return None, {"max_rounds": min(10, scenario.config.max_rounds)}


def authoring_fields(document: dict[str, Any]) -> list[FieldSpec]:
    return [
        FieldSpec("Scenario", ("title",), "Title", "text"),
        FieldSpec("Scenario", ("summary",), "Summary (the lobby's sentence)", "long_text"),
        FieldSpec("Run", ("config", "max_rounds"), "Rounds", "integer", minimum=1),
        FieldSpec("Run", ("config", "checkpoint_frequency"), "Checkpoint every N rounds", "integer", minimum=1),
        FieldSpec("Run", ("config", "reasoner_enabled"), "Ask the reasoner when guards leave a choice", "flag"),
    ]  # fmt: skip
