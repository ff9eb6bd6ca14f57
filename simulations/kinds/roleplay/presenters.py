"""What the conversation's pages show, computed once: the graph picture's layout (a column per branch, the start
above, the endings below) with each state's mark, the progress per branch, the transitions in words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import graph
from .document import RoleplayState, Status
from .report import branch_rows, ending, judgment_line
from .scenario import START, TERMINALS, RoleplayScenario, fill

# TOP: the first row of states, under the branches' labels (LABEL_Y, their baseline) with room between them for
# an arrowhead: a taken edge's is about 15 units tall, and it covered the label's letters when it ended at 78.
COL, ROW, BOX_W, BOX_H, PAD, TOP = 176, 64, 152, 36, 12, 88
LABEL_Y = 64

MARK_WORDS = {"visited": "reached", "available": "open now", "blocked": "blocked", "ahead": "not open yet"}


@dataclass(frozen=True)
class Node:
    name: str
    x: int
    y: int
    mark: str  # visited | available | blocked | ahead | start

    @property
    def cx(self) -> int:
        return self.x + BOX_W // 2


@dataclass(frozen=True)
class Edge:
    path: str
    type: str  # initial | parallel | fork
    mark: str  # taken | open | blocked | idle


def picture(scenario: RoleplayScenario, state: RoleplayState) -> dict[str, Any]:
    marks = graph.state_marks(scenario, state.visited, state.blocked)
    nodes: dict[str, Node] = {}
    columns = list(scenario.states.items())
    width = PAD * 2 + COL * max(1, len(columns)) - (COL - BOX_W)
    nodes[START] = Node(START, (width - BOX_W) // 2, PAD, "start")
    deepest = 0
    for c, (_, states) in enumerate(columns):
        for r, name in enumerate(states):
            nodes[name] = Node(name, PAD + c * COL, TOP + r * ROW, marks[name])
            deepest = max(deepest, r)
    bottom = TOP + (deepest + 1) * ROW + 10
    for i, terminal in enumerate(TERMINALS):
        x = width // 2 - BOX_W - 10 if i == 0 else width // 2 + 10
        nodes[terminal] = Node(terminal, x, bottom, marks[terminal])
    taken = {j.key for j in state.judgments if j.is_transition}
    open_keys = {o.key for o in graph.available(scenario, state.visited, state.blocked)}
    edges = []
    for name in scenario.initial_states():
        key = f"INITIAL:{name}"
        edges.append(
            Edge(_path(nodes[START], nodes[name]), "initial", _edge_mark(key, taken, open_keys, marks[name]))
        )
    for name in scenario.state_names():
        for target, transition in scenario.spec(name).transitions.items():
            key = f"{name}:{target}"
            edges.append(Edge(_path(nodes[name], nodes[target]), transition.type,
                              _edge_mark(key, taken, open_keys, marks[target])))  # fmt: skip
    return {
        "width": width, "height": bottom + BOX_H + PAD, "box_w": BOX_W, "box_h": BOX_H,
        "nodes": list(nodes.values()), "edges": edges,
        "branches": [(PAD + c * COL + BOX_W // 2, name) for c, (name, _) in enumerate(columns)], "label_y": LABEL_Y,
        "marks": list(MARK_WORDS.items()),
        "described": {words: [n for n, m in marks.items() if m == mark] for mark, words in MARK_WORDS.items()},
    }  # fmt: skip


def _edge_mark(key: str, taken: set[str], open_keys: set[str], target_mark: str) -> str:
    if key in taken:
        return "taken"
    if key in open_keys:
        return "open"
    return "blocked" if target_mark == "blocked" else "idle"


def _path(a: Node, b: Node) -> str:
    x1, y1 = a.cx, a.y + BOX_H
    x2, y2 = b.cx, b.y
    if y2 > y1:
        mid = (y1 + y2) / 2
        return f"M{x1},{y1} C{x1},{mid} {x2},{mid} {x2},{y2}"
    # upwards or sideways: leave from the side and come round
    x1s, x2s = (a.x + BOX_W, b.x + BOX_W) if a.x <= b.x else (a.x, b.x)
    y1s, y2s = a.y + BOX_H // 2, b.y + BOX_H // 2
    bend = 40 if a.x <= b.x else -40
    return f"M{x1s},{y1s} C{x1s + bend},{y1s} {x2s + bend},{y2s} {x2s},{y2s}"


def context(scenario: RoleplayScenario, state: RoleplayState) -> dict[str, Any]:
    who = scenario.botname
    waiting = {Status.JUDGING: f"{who} is listening", Status.CHARACTER_TURN: f"{who} is answering"}.get(
        state.status, ""
    )
    lines = [
        {"n": n, "role": m.role, "who": state.username if m.role == "student" else who, "text": m.text}
        for n, m in enumerate(state.messages, start=1)
    ]
    return {
        "scenario": scenario, "state": state, "botname": who, "lines": lines, "waiting": waiting,
        "goal": fill(scenario.goal, username=state.username, botname=who), "picture": picture(scenario, state),
        "branches": branch_rows(scenario, state), "your_turn": state.status is Status.STUDENT_TURN,
        "ended": state.status is Status.ENDED, "outcome": state.outcome, "ending": ending(scenario, state),
        "how_it_ended": next((j.explanation for j in reversed(state.judgments) if j.is_transition and j.type == "terminal"), ""),
        "judgments": [{"line": judgment_line(j), "j": j} for j in state.judgments],
    }  # fmt: skip
