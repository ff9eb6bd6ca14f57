"""A practice conversation's part of the export (the student's name as the character used it, the states
visited and blocked, every judgment with its explanation, the score per branch) and its Markdown transcript."""

from __future__ import annotations

from typing import Any, Literal

from simulations.models import Game
from simulations.services.files.export import common_fields
from simulations.services.files.export_schema import SimulationExport, Strict

from .document import Judgment
from .games import scenario_of, state_of
from .report import BranchRow, branch_rows, render_markdown


class RoleplaySection(Strict):
    username: str
    outcome: str  # SUCCESS | FAIL | "" while the conversation goes on
    visited: list[str]
    blocked: list[str]
    judgments: list[Judgment]
    branches: list[BranchRow]


class RoleplayExport(SimulationExport):
    kind: Literal["roleplay"]
    roleplay: RoleplaySection


export_model = RoleplayExport


def build(game: Game) -> RoleplayExport:
    scenario, state = scenario_of(game), state_of(game)
    return RoleplayExport(
        **common_fields(game=game),
        roleplay=RoleplaySection(
            username=state.username, outcome=state.outcome, visited=state.visited, blocked=state.blocked,
            judgments=state.judgments, branches=branch_rows(scenario, state),
        ),
    )  # fmt: skip


def markdown(game: Game) -> str:
    return render_markdown(scenario_of(game), state_of(game))


def download(game: Game, fmt: str) -> tuple[str, str, str] | None:
    if fmt == "md":
        return markdown(game), "text/markdown; charset=utf-8", f"conversation-{game.pk}.md"
    return None


def start_options(doc: SimulationExport) -> dict[str, Any]:
    assert isinstance(doc, RoleplayExport)
    return {"username": doc.roleplay.username}


def reader_view(doc: SimulationExport) -> SimulationExport:
    return doc  # the student saw every message; the judgments are the exercise's feedback
