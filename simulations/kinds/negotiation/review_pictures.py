"""The review's pictures, drawn on the server as SVG coordinates (the template only places them): each country's
preferred option per issue up to that issue's vote, ending in its ballot; the vote matrix; and who talked
privately with whom.

No chart library and no script: a review prints, and reads without JavaScript. Colours come from CSS classes
(`opt-0`…), never inline styles (the pages' Content Security Policy forbids them); every picture has a title and
a text description for screen readers, and the same facts are in the tables beside it.

Names are laid out here, before a browser draws them: a name too long for its place wraps onto more lines (a
word too long for a line alone ends in "…", the whole name staying in the picture's title and description), and
each picture's box is made to hold every label, so no name is cut at the picture's edge, on screen or on paper.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import GameState, IssueState

# Text is measured by its characters: one is taken as 0.62 of the font size, wider than the average of the fonts a
# page draws these pictures in (system-ui: DejaVu Sans, Segoe UI, San Francisco), so a measured line is never
# shorter than the drawn one. The browser test measures the drawn text against each picture's box. In SVG units:
# the names' font, the stage labels', a character's width as a share of its font, a line's height.
FONT, SMALL, CHAR, LINE = 12, 10, 0.62, 14


def text_width(text: str, size: float = FONT) -> float:
    return len(text) * size * CHAR


def wrap(text: str, width: float, *, size: float = FONT, max_lines: int = 3) -> list[str]:
    """`text` in lines no wider than `width`, broken between words; a word longer than a line, and the end of a
    text longer than `max_lines`, are cut with "…"."""
    limit = max(int(width / (size * CHAR)), 4)
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= limit:
            lines[-1] += " " + word
        else:
            lines.append(word)
    lines = [line if len(line) <= limit else line[: limit - 1] + "…" for line in lines] or [""]
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: limit - 1].rstrip(" …") + "…"
    return lines


# --- each country's preference per issue, up to the vote ---------------------------------------------------------

WIDTH, PAD, MARK_R = 400, 6, 6.5  # the stance chart's width, its side margins, a ballot mark's radius
STAGES = 20  # the stage labels' band at the top
BAR, GAP = 11, 10  # a row's bar, and the space below it


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
    anchor: str = "middle"  # where a stage's label sits on its line: start, middle or end
    vote: bool = False  # the vote's line (the chart's right end), not a stage's


@dataclass
class BallotMark:
    """A row's last mark, on its issue's vote line: what the country did with the proposal put to the vote."""

    x: float
    y: float
    vote: str  # "yes" | "no" | "" (the country has no vote)
    option: str  # the proposal
    css: str  # the proposal's colour (opt-N)
    preferred: bool  # the proposal is the option the row's bar shows at the vote
    text: str  # written beside the name: "YES, its preference" …
    title: str  # the whole sentence, for a pointer's hover and a screen reader
    # Where `text` ends (it is right-aligned, left of the vote's line), on the baseline of the name's first line.
    text_x: float = 0.0
    text_y: float = 0.0

    @property
    def path(self) -> str:
        """The tick or the cross drawn on the mark's circle."""
        x, y = self.x, self.y
        if self.vote == "yes":
            return f"M{x - 3.3:.2f} {y + 0.2:.2f} l2.3 2.5 l4.3 -5.2"
        if self.vote == "no":
            return f"M{x - 2.8:.2f} {y - 2.8:.2f} l5.6 5.6 m0 -5.6 l-5.6 5.6"
        return ""

    @property
    def shape(self) -> str:
        """preferred (a filled tick in the proposal's colour), compromise (a ringed tick), no (a cross), none."""
        if self.vote == "yes":
            return "preferred" if self.preferred else "compromise"
        return self.vote or "none"


@dataclass
class Row:
    seat: str
    name: str
    label: list[tuple[float, str]]  # the name's lines: (baseline, text)
    y: float  # the bar's top
    mid: float  # the bar's middle (where its marks sit)
    segments: list[Segment] = field(default_factory=list)
    accepted: list[Mark] = field(default_factory=list)  # where it came to accept another option
    preferred: str = ""  # its preference at the vote (the bar's last colour)
    ballot: BallotMark | None = None
    sentence: str = ""  # the row in words, for the chart's description


@dataclass
class StanceChart:
    issue_id: str
    title: str
    height: float
    rows: list[Row]
    stages: list[Mark]  # where talks and each issue begin, up to this issue's vote
    vote: Mark | None  # this issue's vote: the chart's right end
    legend: list[tuple[str, str, str]]  # (css, option id, label)
    description: str
    plot_left: float = PAD
    plot_right: float = WIDTH - PAD - MARK_R
    width: int = WIDTH
    bar: float = BAR
    mark_r: float = MARK_R


def _ballot_text(vote: str, preferred: bool, voter: bool) -> str:
    if vote == "yes":
        return "YES, its preference" if preferred else "YES, a compromise"
    if vote == "no":
        return "NO"
    return "did not vote" if voter else "has no vote"


def _ballot_phrase(vote: str, proposal: str, preferred: str, voter: bool) -> str:
    """What a country did at the vote, in words: "voted YES on 2.1, an option it could accept; it preferred 2.2"."""
    if vote == "yes" and proposal == preferred:
        return f"voted YES on {proposal}, the option it preferred"
    if vote == "yes":
        return f"voted YES on {proposal}, an option it could accept; it preferred {preferred}"
    if vote == "no":
        return f"voted NO on {proposal}; it preferred {preferred}"
    return f"{'did not vote' if voter else 'has no vote'} on {proposal}"


def _stage_marks(marks: list[tuple[float, str]], vote: float | None) -> list[Mark]:
    """The stages' lines, then the vote's, each label placed on its line without leaving the chart or running into
    the one before (which then gives way: its line stays, its label is left out)."""
    placed: list[Mark] = []
    right_edges: list[float] = []
    for x, label in [*marks, *([(vote, "vote")] if vote is not None else [])]:
        half = text_width(label, SMALL) / 2
        anchor, left, right = "middle", x - half, x + half
        if left < 0:
            anchor, left, right = "start", x, x + 2 * half
        elif right > WIDTH:
            anchor, left, right = "end", x - 2 * half, x
        for n in range(len(placed) - 1, -1, -1):
            if placed[n].label and right_edges[n] + 4 > left:
                placed[n].label = ""
        placed.append(Mark(round(x, 2), label, anchor, vote=x == vote and label == "vote"))
        right_edges.append(right)
    return placed


@dataclass(frozen=True)
class _Axis:
    """What the rows of one issue's chart share: its time axis (the game's first event to the issue's vote) and the
    proposal put to that vote."""

    issue_id: str
    issue: IssueState | None
    proposal: str  # "" until the chair makes one
    css: dict[str, str]  # option id -> opt-N
    end: int | None  # the seq where the vote began (None: no vote yet), the chart's right end
    last: int  # the seq at the chart's right end: `end`, or the game's last event while there is no vote
    right: float = WIDTH - PAD - MARK_R

    def x(self, seq: int) -> float:
        return round(PAD + (self.right - PAD) * (seq / max(self.last, 1)), 2)


def stance_charts(
    scenario: Scenario, state: GameState, events: list[tuple[int, str, list[dict[str, Any]]]]
) -> list[StanceChart]:
    """One chart per issue: a row per country, coloured by the option it preferred from the game's first event to
    the issue's vote, where the row ends in the country's ballot on the proposal: a tick in the proposal's colour
    (filled when it was the country's preference, ringed when it was an option the country could accept) or a
    cross. `events`: (seq, to_state, stance_changes) of the whole game, in order. The starting preference is read
    backwards from the final state through the recorded changes, so it is what the game really started from."""
    total = events[-1][0] if events else 1
    order = [s.issue_id for s in state.round3.issues]  # the order the chair takes the issues in
    stage_seqs: list[tuple[int, str]] = []
    vote_seqs: dict[str, int] = {}
    intro = 0
    for seq, to_state, _ in events:
        if to_state == "ROUND_2_SETUP" and not any(label == "Talks" for _, label in stage_seqs):
            stage_seqs.append((seq, "Talks"))
        elif to_state == "ISSUE_INTRO":
            intro += 1
            stage_seqs.append((seq, f"Issue {intro}"))
        elif to_state == "ISSUE_VOTE" and 0 < intro <= len(order) and order[intro - 1] not in vote_seqs:
            vote_seqs[order[intro - 1]] = seq
    changes = [(seq, c) for seq, _, recorded in events for c in recorded]
    resolved = {s.issue_id: s for s in state.round3.issues}
    charts = []
    for number, issue in enumerate(scenario.issues, start=1):
        issue_state = resolved.get(issue.id)
        proposal = issue_state.proposal if issue_state and issue_state.proposal else ""
        end = vote_seqs.get(issue.id) if proposal else None
        axis = _Axis(
            issue.id, issue_state, proposal, {o.id: f"opt-{n}" for n, o in enumerate(issue.options)}, end,
            end if end is not None else total,
        )  # fmt: skip
        rows, y = [], float(STAGES)
        for country in scenario.countries:
            row = _stance_row(scenario, state, axis, country, changes, y)
            rows.append(row)
            y = row.y + BAR + GAP
        moved = [r.name for r in rows if len(r.segments) > 1]
        description = (
            f"Issue {number}, {issue.title}" + (f", up to its vote on {proposal}: " if end is not None else ": ")
            + "; ".join(r.sentence for r in rows)
            + ("." if moved else ". No country changed its preferred option.")
        )  # fmt: skip
        charts.append(
            StanceChart(
                issue_id=issue.id, title=f"Issue {number}: {issue.title}", height=round(y, 2), rows=rows,
                stages=_stage_marks([(axis.x(q), label) for q, label in stage_seqs if q < axis.last],
                                    axis.right if end is not None else None),
                vote=Mark(axis.right, "vote", vote=True) if end is not None else None,
                legend=[(axis.css[o.id], o.id, o.label) for o in issue.options], description=description,
                plot_right=axis.right,
            )
        )  # fmt: skip
    return charts


def _stance_row(
    scenario: Scenario,
    state: GameState,
    axis: _Axis,
    country: str,
    changes: list[tuple[int, dict[str, Any]]],
    top: float,
) -> Row:
    """One country's row of an issue's chart, its name's first line at `top`. Only what happened before the vote
    is drawn: a later change of mind cannot have decided the ballot."""
    final = state.stances[country][axis.issue_id].preferred
    mine = [(seq, c) for seq, c in changes if c["role"] == country and c["issue"] == axis.issue_id]
    before_vote = [(seq, c) for seq, c in mine if axis.end is None or seq < axis.end]
    moves = [(seq, str(c["after"])) for seq, c in before_vote if c["field"] == "preferred"]
    start = next((str(c["before"]) for _, c in mine if c["field"] == "preferred"), final)
    preferred = moves[-1][1] if moves else start
    name = scenario.display_name(country) + (" (student)" if country == state.human_role else "")
    voter = country in scenario.voters
    vote = axis.issue.ballots.get(country, "") if axis.issue and voter else ""
    text = _ballot_text(vote, axis.proposal == preferred, voter) if axis.end is not None else ""
    lines = wrap(name, WIDTH - 2 * PAD - MARK_R - (text_width(text) + 16 if text else 0))
    label = [(round(top + 11 + n * LINE, 2), line) for n, line in enumerate(lines)]
    bar_y = round(top + 11 + (len(lines) - 1) * LINE + 5, 2)
    row = Row(country, name, label, bar_y, round(bar_y + BAR / 2, 2), preferred=preferred)
    points = [(0, start), *moves, (axis.last, "")]
    for (a, option), (b, _) in zip(points, points[1:], strict=False):
        row.segments.append(
            Segment(axis.x(a), round(axis.x(b) - axis.x(a), 2), option, axis.css.get(option, ""))
        )
    row.accepted = [
        Mark(axis.x(seq), f"{scenario.display_name(country)} can now accept {c['after']}")
        for seq, c in before_vote
        if c["field"] == "acceptable"
    ]
    row.sentence = f"{name} preferred {start}" + (f", then {preferred}" if preferred != start else "")
    if axis.end is not None:
        phrase = _ballot_phrase(vote, axis.proposal, preferred, voter)
        row.sentence += f"; {phrase}"
        row.ballot = BallotMark(
            x=axis.x(axis.end), y=row.mid, vote=vote, option=axis.proposal, css=axis.css.get(axis.proposal, ""),
            preferred=axis.proposal == preferred, text=text, text_x=round(axis.x(axis.end) - 5, 2),
            text_y=label[0][0], title=f"{scenario.display_name(country)} {phrase}",
        )  # fmt: skip
    return row


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


# --- who talked privately with whom ---------------------------------------------------------------------------

# The seats' circle, a side label's width, the margin around everything; a picture of few seats or short names is
# centred in NET_MIN_WIDTH, so that it never draws them larger than a picture of many.
NET_RADIUS, NET_LABEL, NET_MARGIN, NET_MIN_WIDTH = 90, 132, 4, 480


@dataclass
class Node:
    name: str
    x: float
    y: float
    anchor: str  # where its label sits: "start" right of the dot, "end" left of it, "middle" above or below
    label_x: float
    student: bool
    lines: list[tuple[float, str]] = field(default_factory=list)  # the label's lines: (baseline, text)


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


def _node_label(name: str, x: float, y: float, angle: float) -> tuple[str, float, list[tuple[float, str]]]:
    """Where a seat's name goes: beside its dot (wrapped to NET_LABEL) on the circle's sides, centred above or
    below it at the top and bottom; (anchor, x, lines)."""
    cos, sin = math.cos(angle), math.sin(angle)
    if abs(cos) < 0.3:
        lines = wrap(name, 2 * NET_LABEL)
        if sin < 0:  # above the dot, the last line nearest it
            baselines = [y - 11 - (len(lines) - 1 - n) * LINE for n in range(len(lines))]
        else:
            baselines = [y + 20 + n * LINE for n in range(len(lines))]
        return "middle", x, [(round(b, 1), t) for b, t in zip(baselines, lines, strict=True)]
    lines = wrap(name, NET_LABEL)
    first = y + 4 - (len(lines) - 1) * LINE / 2
    anchor, label_x = ("start", x + 10) if cos > 0 else ("end", x - 10)
    return anchor, round(label_x, 1), [(round(first + n * LINE, 1), t) for n, t in enumerate(lines)]


def _extent(node: Node) -> tuple[float, float, float, float]:
    """The box a node and its label take: (left, top, right, bottom)."""
    left, top, right, bottom = node.x - 7, node.y - 7, node.x + 7, node.y + 7
    for baseline, text in node.lines:
        w = text_width(text)
        start = {"start": node.label_x, "end": node.label_x - w, "middle": node.label_x - w / 2}[node.anchor]
        left, right = min(left, start), max(right, start + w)
        top, bottom = min(top, baseline - FONT), max(bottom, baseline + FONT * 0.3)
    return left, top, right, bottom


def talk_network(
    scenario: Scenario, state: GameState, private: list[tuple[str, list[str]]]
) -> dict[str, Any]:
    """The seats on a circle; a line for every private talk, as thick as its messages are many, and a dashed one
    for every seat that asked the student to talk and got no talk. `private`: (speaker, audience) of the private
    entries the reader may see. The picture's box is the circle with every label, whatever the names' length."""
    seats = scenario.role_ids
    nodes: dict[str, Node] = {}
    for n, seat in enumerate(seats):
        angle = -math.pi / 2 + 2 * math.pi * n / len(seats)
        x, y = NET_RADIUS * math.cos(angle), NET_RADIUS * math.sin(angle)
        name = scenario.display_name(seat)
        anchor, label_x, lines = _node_label(name, x, y, angle)
        nodes[seat] = Node(name, x, y, anchor, label_x, seat == state.human_role, lines)
    boxes = [_extent(node) for node in nodes.values()]
    left, top = min(b[0] for b in boxes) - NET_MARGIN, min(b[1] for b in boxes) - NET_MARGIN
    width, height = max(b[2] for b in boxes) + NET_MARGIN - left, max(b[3] for b in boxes) + NET_MARGIN - top
    if width < NET_MIN_WIDTH:
        left, width = left - (NET_MIN_WIDTH - width) / 2, NET_MIN_WIDTH
    for node in nodes.values():  # the box's corner becomes (0, 0)
        node.x, node.y = round(node.x - left, 1), round(node.y - top, 1)
        node.label_x = round(node.label_x - left, 1)
        node.lines = [(round(b - top, 1), t) for b, t in node.lines]
    counts: dict[tuple[str, str], int] = {}
    for speaker, audience in private:
        pair = sorted(p for p in audience if p in nodes)
        if len(pair) == 2 and speaker in pair and speaker != scenario.chair.id:
            counts[(pair[0], pair[1])] = counts.get((pair[0], pair[1]), 0) + 1
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
    return {"nodes": list(nodes.values()), "edges": edges, "width": math.ceil(width), "height": math.ceil(height),
            "description": "; ".join(e.label for e in edges) or "No private talk was held."}  # fmt: skip
