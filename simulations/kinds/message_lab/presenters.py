"""What Message Lab's pages show, computed from the state (no HTML here): the stage progress, the concept cards by
column, the score chart's geometry, the gate's choices."""

from __future__ import annotations

import colorsys
from dataclasses import dataclass
from typing import Any

from .document import Concept, LabState
from .machine import in_panel_order, next_step, rounds_left
from .scenario import MessageLabScenario
from .state import ConceptStatus, RoundStage, SimulationStatus
from .words import PLACED, STAGE_NAMES, STATUS_WORDS, phase_label

CS = ConceptStatus
OUT = frozenset({CS.ELIMINATED, CS.MERGED})


@dataclass(frozen=True)
class Card:
    id: str
    name: str
    author: str
    status: str
    alias: str
    score: float | None
    scores: list[tuple[int, float]]
    versions: int
    text: str
    note: str  # the last reason it moved (why it was eliminated, merged, placed)


def card(scenario: MessageLabScenario, concept: Concept) -> Card:
    scores = [(int(k.split("_")[1]), v) for k, v in concept.scores.items()]
    return Card(
        id=concept.id, name=concept.name, author=scenario.persona(concept.persona).name,
        status=STATUS_WORDS[concept.status], alias=concept.alias,
        score=scores[-1][1] if scores else None, scores=scores, versions=len(concept.versions), text=concept.text,
        note=concept.history[-1].reason if concept.history else "",
    )  # fmt: skip


def stages(state: LabState) -> list[dict[str, Any]]:
    """The current round's five stages: done, current or to come."""
    current = int(state.stage.value[6]) if state.stage.value.startswith("STAGE_") else 0
    finished_round = state.status is not SimulationStatus.RUNNING or state.stage is RoundStage.QUALITY_GATE
    out = []
    for n, name in STAGE_NAMES.items():
        done = finished_round or n < current
        out.append(
            {"n": n, "name": name, "state": "done" if done else ("current" if n == current else "todo")}
        )
    return out


def hue_colour(hue: int) -> str:
    """A line's colour as #rrggbb (an SVG fill or stroke attribute: the CSP blocks inline styles)."""
    r, g, b = colorsys.hls_to_rgb(hue / 360, 0.4, 0.6)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def chart(
    scenario: MessageLabScenario, state: LabState, *, width: int = 560, height: int = 220
) -> dict[str, Any]:
    """Each scored concept's line across rounds (score 1-10 bottom to top), with both axes titled."""
    rounds = max(state.config.rounds, 1)
    left, right, top, bottom = 52, 12, 10, 40

    def x(r: int) -> float:
        return left + (width - left - right) * ((r - 1) / max(rounds - 1, 1))

    def y(score: float) -> float:
        return top + (height - top - bottom) * (1 - (score - 1) / 9)

    lines = []
    for n, concept in enumerate(c for c in state.concepts if c.scores):
        points = [(x(int(k.split("_")[1])), y(v)) for k, v in concept.scores.items()]
        lines.append({
            "name": concept.name, "author": scenario.persona(concept.persona).name,
            "colour": hue_colour((n * 67) % 360),
            "points": " ".join(f"{px:.1f},{py:.1f}" for px, py in points), "last": points[-1],
            "status": concept.status.value, "status_words": STATUS_WORDS[concept.status],
        })  # fmt: skip
    plot_bottom = height - bottom
    return {
        "width": width, "height": height, "lines": lines,
        "x_ticks": [{"x": x(r), "label": r} for r in range(1, rounds + 1)],
        "y_ticks": [{"y": y(s), "label": s} for s in (1, 4, 7, 10)],
        "plot_bottom": plot_bottom, "plot_left": left, "tick_y": plot_bottom + 14,
        "x_title": {"x": left + (width - left - right) / 2, "y": height - 6, "text": "Round"},
        "y_title": {"x": 12, "y": top + (height - top - bottom) / 2, "text": "Score (1 to 10)"},
    }  # fmt: skip


def context(scenario: MessageLabScenario, state: LabState) -> dict[str, Any]:
    step = next_step(state)
    ordered = in_panel_order(state, state.concepts)
    placed = sorted((c for c in ordered if c.status in PLACED), key=lambda c: list(PLACED).index(c.status))
    waiting = ""
    if state.status is SimulationStatus.RUNNING and step.units:
        names = [scenario.persona(u.persona).name for u in step.units]
        verb = "are" if len(names) > 1 else "is"
        waiting = f"{', '.join(names)} {verb} working ({STAGE_NAMES.get(int(state.stage.value[6]), '')})"
    elif state.status is SimulationStatus.COMPLETED:
        waiting = f"{scenario.persona(state.config.moderator).name} is choosing the winner"
    gate = None
    if state.status is SimulationStatus.PAUSED_AT_GATE:
        gate = {
            "after_round": state.round,
            "survivors": [card(scenario, c) for c in ordered if c.status is CS.PRESENTED],
            "rescuable": [card(scenario, c) for c in ordered if c.status is CS.ELIMINATED] if rounds_left(state) else [],
            "direction": state.current.direction,
            "last": not rounds_left(state),
        }  # fmt: skip
    return {
        "state": state, "brief": state.config.brief, "round": state.round, "rounds": state.config.rounds,
        "stages": stages(state), "phase": phase_label(state.stage.value if state.status is SimulationStatus.RUNNING else state.status.value),
        "in_play": [card(scenario, c) for c in ordered if c.status not in OUT and c.status not in PLACED],
        "placed": [(PLACED[c.status], card(scenario, c)) for c in placed],
        "out": [card(scenario, c) for c in ordered if c.status in OUT],
        "chart": chart(scenario, state), "waiting": waiting, "gate": gate,
        "failure": state.failure, "finished": state.status is SimulationStatus.OUTPUT_READY,
        "panel": [(p, scenario.persona(p).name) for p in state.config.participants],
        "moderator": scenario.persona(state.config.moderator).name,
        "evaluator": scenario.persona(state.config.evaluator).name,
        "focus": state.current.focus if state.rounds else "",
        "gates_left": [g.after_round for g in state.gates if g.status != "decided"],
    }  # fmt: skip
