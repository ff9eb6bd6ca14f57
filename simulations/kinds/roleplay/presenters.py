"""What the conversation's pages show, computed once: the graph picture's layout (a column per branch, the start
above, the endings below) with each state's mark, the progress per branch, the transitions in words. Every state
and branch is shown by its words (wording.py), never its id; the ids stay in data attributes for scripts and tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.safestring import SafeString, mark_safe

from . import graph
from .document import RoleplayState, Status
from .report import branch_rows, judgment_line, steps_by_message
from .scenario import START, TERMINALS, RoleplayScenario, fill
from .wording import debrief, labels, plain, stage_html

# TOP: the first row of states, under the branches' labels (LABEL_Y, their baseline) with room between them for
# an arrowhead: a taken edge's is about 15 units tall, and it covered the label's letters when it ended at 78.
COL, ROW, BOX_W, BOX_H, PAD, TOP = 176, 64, 152, 36, 12, 88
LABEL_Y = 64

MARK_WORDS = {"visited": "reached", "available": "open now", "blocked": "blocked", "ahead": "not open yet"}
LINE_CHARS = 22  # a label longer than this (at the graph's 11px) is set on two lines inside its box


@dataclass(frozen=True)
class Node:
    name: str
    x: int
    y: int
    mark: str  # visited | available | blocked | ahead | start
    label: str = ""

    @property
    def cx(self) -> int:
        return self.x + BOX_W // 2

    @property
    def rows(self) -> list[tuple[int, str]]:
        """The label's lines, each with its baseline: one line centred in the box, or two."""
        words = self.label or self.name
        if len(words) <= LINE_CHARS or " " not in words:
            return [(self.y + 23, words)]
        middle = len(words) // 2
        cut = min((i for i, c in enumerate(words) if c == " "), key=lambda i: abs(i - middle))
        return [(self.y + 16, words[:cut]), (self.y + 29, words[cut + 1 :])]


@dataclass(frozen=True)
class Edge:
    path: str
    type: str  # initial | parallel | fork
    mark: str  # taken | open | blocked | idle


def picture(scenario: RoleplayScenario, state: RoleplayState) -> dict[str, Any]:
    marks = graph.state_marks(scenario, state.visited, state.blocked)
    words = labels(scenario)
    nodes: dict[str, Node] = {}
    columns = list(scenario.states.items())
    width = PAD * 2 + COL * max(1, len(columns)) - (COL - BOX_W)
    nodes[START] = Node(START, (width - BOX_W) // 2, PAD, "start", words[START])
    deepest = 0
    for c, (_, states) in enumerate(columns):
        for r, name in enumerate(states):
            nodes[name] = Node(name, PAD + c * COL, TOP + r * ROW, marks[name], words[name])
            deepest = max(deepest, r)
    bottom = TOP + (deepest + 1) * ROW + 10
    for i, terminal in enumerate(TERMINALS):
        x = width // 2 - BOX_W - 10 if i == 0 else width // 2 + 10
        nodes[terminal] = Node(terminal, x, bottom, marks[terminal], words[terminal])
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
        "branches": [(PAD + c * COL + BOX_W // 2, words[name]) for c, (name, _) in enumerate(columns)],
        "label_y": LABEL_Y, "marks": list(MARK_WORDS.items()),
        "described": {said: [words[n] for n, m in marks.items() if m == mark] for mark, said in MARK_WORDS.items()},
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


@dataclass(frozen=True)
class BranchView:
    """A branch's score as the student reads it: its words, and the words of the states reached in it."""

    branch: str
    reached: int
    total: int
    states: list[str]


def branch_views(scenario: RoleplayScenario, state: RoleplayState) -> list[BranchView]:
    words = labels(scenario)
    return [BranchView(words[r.branch], r.reached, r.total, [words[s] for s in r.states])
            for r in branch_rows(scenario, state)]  # fmt: skip


def staged(text: str) -> SafeString:
    """A message (or a scenario line the character says) as HTML: escaped, its `*stage directions*` as emphasis."""
    return mark_safe(stage_html(text))  # noqa: S308 - stage_html escapes the text before adding <em>


def endings(scenario: RoleplayScenario, state: RoleplayState) -> list[tuple[str, str]]:
    """How the conversation can end, in the character's world (the scenario's `plain` for SUCCESS and FAIL), for
    the goal box: (SUCCESS|FAIL, words). Empty for a scenario that gives none."""
    return [
        (name, fill(scenario.plain_of(name), username=state.username, botname=scenario.botname))
        for name in TERMINALS
        if scenario.plain_of(name)
    ]


def context(scenario: RoleplayScenario, state: RoleplayState) -> dict[str, Any]:
    who = scenario.botname
    waiting = {Status.JUDGING: f"{who} is listening", Status.CHARACTER_TURN: f"{who} is answering"}.get(
        state.status, ""
    )
    steps = steps_by_message(scenario, state)
    lines, n_student = [], 0
    for n, m in enumerate(state.messages, start=1):
        n_student += m.role == "student"
        reached = steps.get(n_student, []) if m.role == "student" else []
        lines.append({"n": n, "role": m.role, "who": state.username if m.role == "student" else who,
                      "text": m.text, "html": staged(m.text), "steps": reached})  # fmt: skip
    goal = plain(fill(scenario.goal, username=state.username, botname=who), scenario)
    return {
        "scenario": scenario, "state": state, "botname": who, "lines": lines, "waiting": waiting,
        "goal": goal, "endings": endings(scenario, state), "picture": picture(scenario, state),
        "branches": branch_views(scenario, state), "your_turn": state.status is Status.STUDENT_TURN,
        "ended": state.status is Status.ENDED, "outcome": state.outcome,
        "outcome_words": labels(scenario).get(state.outcome, ""),
        "debrief": debrief(scenario, state) if state.outcome else None,
        "judgments": [{"line": judgment_line(scenario, j), "why": plain(j.explanation, scenario), "j": j}
                      for j in state.judgments],
    }  # fmt: skip
