"""Message Lab's part of the export: the run's configuration (an import starts from it and replays the events) and
its state in the seed's JSON shape; and the downloads, the final report as Markdown and that JSON."""

from __future__ import annotations

import json
from typing import Any, Literal

from simulations.models import Game
from simulations.services.files.export import common_fields
from simulations.services.files.export_schema import SimulationExport, Strict

from .document import Config
from .games import scenario_of, state_of
from .report import render_report, seed_document


class MessageLabSection(Strict):
    config: Config
    simulation: dict[
        str, Any
    ]  # seed 000's "State Schema (JSON)" `simulation` object; id and times are the envelope's


class MessageLabExport(SimulationExport):
    kind: Literal["message_lab"]
    message_lab: MessageLabSection


def seed_json(game: Game) -> dict[str, Any]:
    times = list(game.entries.order_by("seq").values_list("created_at", flat=True))
    return seed_document(
        state_of(game), sim_id=f"sim_{game.pk}", created_at=game.created_at, line_times=times
    )


export_model = MessageLabExport


def build(game: Game) -> MessageLabExport:
    state = state_of(game)
    return MessageLabExport(
        **common_fields(game=game),
        message_lab=MessageLabSection(config=state.config, simulation=seed_document(state)["simulation"]),
    )


def markdown(game: Game) -> str:
    return render_report(scenario_of(game), state_of(game))


def download(game: Game, fmt: str) -> tuple[str, str, str] | None:
    if fmt == "md":
        return markdown(game), "text/markdown; charset=utf-8", f"message-lab-{game.pk}-report.md"
    if fmt == "state.json":
        body = json.dumps(seed_json(game), indent=2, ensure_ascii=False)
        return body, "application/json", f"message-lab-{game.pk}-state.json"
    return None  # "json": the platform's export (simulation-export/3 with the message_lab section)


def start_options(doc: SimulationExport) -> dict[str, Any]:
    assert isinstance(doc, MessageLabExport)
    return {"config": doc.message_lab.config.model_dump(mode="json")}


def reader_view(doc: SimulationExport) -> SimulationExport:
    return doc  # nothing in a panel's work is private to anyone: the player sees every card and critique
