"""The deliberation's part of the export: its section (every submission with the tools' findings, every round's
ballots and quorum, the verdict with its fix items) and the Markdown view, which is the seed's review report."""

from __future__ import annotations

from typing import Any, Literal

from simulations.models import Game
from simulations.services.files.export import common_fields
from simulations.services.files.export_schema import SimulationExport, Strict

from .games import scenario_of, state_of
from .report import render_report
from .state import ConclusionCause, RoundRecord, Submission, Verdict


class DeliberationSection(Strict):
    human_seat: str | None
    submissions: list[
        Submission
    ]  # the first is what the deliberation started from (an import starts from it)
    rounds: list[RoundRecord]
    verdict: Verdict | None
    cause: ConclusionCause | None
    fix_items: list[str]
    warnings: list[str]


class DeliberationExport(SimulationExport):
    kind: Literal["deliberation"]
    deliberation: DeliberationSection


export_model = DeliberationExport


def build(game: Game) -> DeliberationExport:
    state = state_of(game)
    return DeliberationExport(
        **common_fields(game=game),
        deliberation=DeliberationSection(
            human_seat=state.human_seat, submissions=state.submissions, rounds=state.rounds,
            verdict=state.verdict, cause=state.cause, fix_items=state.fix_items, warnings=state.warnings,
        ),
    )  # fmt: skip


def markdown(game: Game) -> str:
    """review-report.md, in seed 004's log format (the code is the user's and is shown as a code block)."""
    return render_report(scenario_of(game), state_of(game))


def start_options(doc: SimulationExport) -> dict[str, Any]:
    assert isinstance(doc, DeliberationExport)
    section = doc.deliberation
    return {"submission": section.submissions[0].model_dump(mode="json"), "seat": section.human_seat}


def reader_view(doc: SimulationExport) -> SimulationExport:
    return doc  # nothing is hidden in a committee: every opinion is given in the open


def download(game: Game, fmt: str) -> tuple[str, str, str] | None:
    if fmt == "md":
        body = render_report(scenario_of(game), state_of(game))
        return body, "text/markdown; charset=utf-8", "review-report.md"
    return None  # "json": the platform's export (simulation-export/3 with the deliberation's section)
