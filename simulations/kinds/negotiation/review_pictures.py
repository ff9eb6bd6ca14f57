"""The review's pictures, drawn on the server as SVG coordinates (the template only places them): each country's
preferred option per issue over the game, the vote matrix, and who talked privately with whom.

No chart library and no script: a review prints, and reads without JavaScript. Colours come from CSS classes
(`opt-0`…), never inline styles (the pages' Content Security Policy forbids them); every picture has a title and
a text description for screen readers, and the same facts are in the tables beside it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import GameState

WIDTH, LABEL, RIGHT, ROW, TOP = 640, 150, 70, 20, 24  # the stance chart's geometry (SVG units)


@dataclass
class Segment:
    x: float
    width: float
    option: str
    css: str  # opt-N: the option's place in its issue


@dataclass
class Mark:
    x: float
    label: str


@dataclass
class Row:
    name: str
    y: float
    segments: list[Segment] = field(default_factory=list)
    accepted: list[Mark] = field(default_factory=list)  # where it came to accept another option
    final: str = ""


@dataclass
class StanceChart:
    issue_id: str
    title: str
    height: float
    rows: list[Row]
    stages: list[Mark]  # where talks and each issue begin
    vote: Mark | None  # where this issue was put to the vote
    legend: list[tuple[str, str, str]]  # (css, option id, label)
    description: str
    plot_left: float = LABEL
    plot_right: float = WIDTH - RIGHT
    width: int = WIDTH


def _x(seq: int, total: int) -> float:
    return LABEL + (WIDTH - LABEL - RIGHT) * (seq / max(total, 1))


def stance_charts(
    scenario: Scenario, state: GameState, events: list[tuple[int, str, list[dict[str, Any]]]]
) -> list[StanceChart]:
    """One chart per issue: a row per country, coloured by the option it preferred from the first event to the
    last. `events`: (seq, to_state, stance_changes) of the whole game, in order. The starting preference is read
    backwards from the final state through the recorded changes, so it is what the game really started from."""
    total = events[-1][0] if events else 1
    stages: list[Mark] = []
    votes: dict[int, Mark] = {}
    intro = 0
    for seq, to_state, _ in events:
        if to_state == "ROUND_2_SETUP" and not any(m.label == "Talks" for m in stages):
            stages.append(Mark(_x(seq, total), "Talks"))
        elif to_state == "ISSUE_INTRO":
            intro += 1
            stages.append(Mark(_x(seq, total), f"Issue {intro}"))
        elif to_state == "ISSUE_VOTE" and intro not in votes:
            votes[intro] = Mark(_x(seq, total), "vote")
    changes = [(seq, c) for seq, _, recorded in events for c in recorded]
    charts = []
    for number, issue in enumerate(scenario.issues, start=1):
        css = {o.id: f"opt-{n}" for n, o in enumerate(issue.options)}
        rows = []
        for n, country in enumerate(scenario.countries):
            final = state.stances[country][issue.id].preferred
            mine = [(seq, c) for seq, c in changes if c["role"] == country and c["issue"] == issue.id]
            moves = [(seq, str(c["after"])) for seq, c in mine if c["field"] == "preferred"]
            start = next((str(c["before"]) for seq, c in mine if c["field"] == "preferred"), final)
            row = Row(scenario.display_name(country), TOP + n * ROW, final=final)
            points = [(0, start), *moves, (total, "")]
            for (a, option), (b, _) in zip(points, points[1:], strict=False):
                row.segments.append(
                    Segment(_x(a, total), _x(b, total) - _x(a, total), option, css.get(option, ""))
                )
            row.accepted = [
                Mark(_x(seq, total), f"{row.name} can now accept {c['after']}")
                for seq, c in mine
                if c["field"] == "acceptable"
            ]
            rows.append(row)
        moved = [r.name for r in rows if len(r.segments) > 1]
        description = (
            f"Issue {number}, {issue.title}: "
            + "; ".join(f"{r.name} preferred {r.segments[0].option}" + (f", then {r.final}" if len(r.segments) > 1 else "") for r in rows)
            + ("." if moved else ". No country changed its preferred option.")
        )  # fmt: skip
        charts.append(
            StanceChart(
                issue_id=issue.id, title=f"Issue {number}: {issue.title}", height=TOP + len(rows) * ROW + 8,
                rows=rows, stages=stages, vote=votes.get(number),
                legend=[(css[o.id], o.id, o.label) for o in issue.options], description=description,
            )
        )  # fmt: skip
    return charts


def vote_matrix(scenario: Scenario, state: GameState) -> dict[str, Any]:
    """Countries × issues: each ballot, and each issue's result."""
    issues = [(n, scenario.issue(i.issue_id), i) for n, i in enumerate(state.round3.issues, start=1)]
    return {
        "issues": [{"number": n, "title": issue.title, "proposal": s.proposal or ""} for n, issue, s in issues],
        "rows": [
            {"name": scenario.display_name(voter), "student": voter == state.human_role,
             "ballots": [s.ballots.get(voter, "") for _, _, s in issues]}
            for voter in scenario.voters
        ],
        "results": ["" if s.adopted is None else ("adopted" if s.adopted else "rejected") for _, _, s in issues],
    }  # fmt: skip


@dataclass
class Node:
    name: str
    x: float
    y: float
    anchor: str  # where its label sits: "start" right of the dot, "end" left of it
    label_x: float
    student: bool


@dataclass
class Edge:
    x1: float
    y1: float
    x2: float
    y2: float
    width: float
    messages: int
    declined: bool
    label: str


def talk_network(
    scenario: Scenario, state: GameState, private: list[tuple[str, list[str]]]
) -> dict[str, Any]:
    """The seats on a circle; a line for every private talk, as thick as its messages are many, and a dashed one
    for every seat that asked the student to talk and got no talk. `private`: (speaker, audience) of the private
    entries the reader may see."""
    seats = scenario.role_ids
    cx, cy, radius = 340, 150, 105
    nodes: dict[str, Node] = {}
    for n, seat in enumerate(seats):
        angle = -math.pi / 2 + 2 * math.pi * n / len(seats)
        x, y = cx + radius * math.cos(angle), cy + radius * math.sin(angle)
        right = math.cos(angle) >= -0.01
        nodes[seat] = Node(scenario.display_name(seat), round(x, 1), round(y, 1), "start" if right else "end",
                           round(x + (9 if right else -9), 1), seat == state.human_role)  # fmt: skip
    counts: dict[tuple[str, str], int] = {}
    for speaker, audience in private:
        seats = sorted(p for p in audience if p in nodes)
        if len(seats) == 2 and speaker in seats and speaker != scenario.chair.id:
            pair = (seats[0], seats[1])
            counts[pair] = counts.get(pair, 0) + 1
    edges = []
    for (a, b), messages in sorted(counts.items()):
        edges.append(Edge(nodes[a].x, nodes[a].y, nodes[b].x, nodes[b].y, round(1.5 + messages / 2, 1), messages,
                          False, f"{nodes[a].name} and {nodes[b].name}: {messages} messages"))  # fmt: skip
    talked = {p for pair in counts for p in pair}
    human = state.human_role
    for seat in state.round2.requests:
        if human and seat in nodes and seat not in talked:
            edges.append(Edge(nodes[human].x, nodes[human].y, nodes[seat].x, nodes[seat].y, 1.5, 0, True,
                              f"{nodes[seat].name} asked to talk; no talk was held"))  # fmt: skip
    return {"nodes": list(nodes.values()), "edges": edges, "width": 680, "height": 300,
            "description": "; ".join(e.label for e in edges) or "No private talk was held."}  # fmt: skip
