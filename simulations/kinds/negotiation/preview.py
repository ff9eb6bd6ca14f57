"""A scenario as its students will meet it, for the admin's preview: each seat's briefs and openings, the issues,
and what the briefs alone make of each option (who can accept it, on which condition, who never can)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.template.loader import render_to_string

from .presenters import persona_context, scenario_facts
from .scenario import Scenario


@dataclass(frozen=True)
class OptionReach:
    option: str
    label: str
    accept: list[str]  # voters who accept it from the start
    on_condition: list[str]  # voters a condition can bring to it (an offer made, another option adopted)
    never: list[str]  # voters whose briefs give no way to it

    @property
    def blocked(self) -> bool:
        return bool(self.never)


def reach(scenario: Scenario) -> dict[str, list[OptionReach]]:
    """Per issue, who can vote for each option by the briefs alone (persuasion in the debate aside). Adoption
    needs every voting country, so an option with a `never` voter cannot be adopted without persuasion, and an
    issue whose every option has one is one the class is unlikely ever to settle."""
    out: dict[str, list[OptionReach]] = {}
    for issue in scenario.issues:
        rows = []
        for option in issue.options:
            accept, conditional, never = [], [], []
            for voter in scenario.voters:
                stance = scenario.role(voter).stances[issue.id]
                name = scenario.display_name(voter)
                if option.id in stance.acceptable:
                    accept.append(name)
                elif any(c.accept == option.id for c in stance.conditions):
                    conditional.append(name)
                else:
                    never.append(name)
            rows.append(OptionReach(option.id, option.label, accept, conditional, never))
        out[issue.id] = rows
    return out


def preview(scenario: Scenario) -> str:
    by_issue = reach(scenario)
    context: dict[str, Any] = {
        "scenario": scenario,
        "facts": scenario_facts(scenario),
        "seats": [
            (persona_context(scenario, r.id, confidential=True) or {}) | {"brief": r.confidential_brief}
            for r in scenario.roles
        ],
        # Stances per seat and issue, as a grid: preferred option, the others it accepts, and how firmly.
        "grid": [
            {"name": r.name, "cells": [r.stances[i.id] for i in scenario.issues]} for r in scenario.roles
        ],
        "issues": [
            {"issue": i, "reach": by_issue[i.id], "settled_never": all(r.blocked for r in by_issue[i.id])}
            for i in scenario.issues
        ],
    }
    return render_to_string("negotiation/preview.html", context)
