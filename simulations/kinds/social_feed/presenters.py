"""What a run's pages show, computed once: the progress, the state distribution over rounds as a stacked area chart
and engagement over rounds as lines (server-drawn SVG with labelled axes, with the figures in words), the most
engaged posts, and the reasoner's calls and their share of decisions.

Every state and status a person reads is named here, in words (STATE_WORDS, STATUS_WORDS); the ids stay in data-
attributes and in the export. Colours are SVG presentation attributes or CSS classes: the CSP forbids inline style."""

from __future__ import annotations

from typing import Any

from .config import SocialFeedScenario
from .entities import STUDENT, AgentState
from .machine import STUDENT_TEXT, RoundSummary, RunState, Status, top_posts
from .ranking import WORDS
from .reading import NOUNS as NOUNS
from .reading import count as count
from .reading import names, per_round, reading, spread, yours

W, H = 640, 240
LEFT, RIGHT, TOP, BOTTOM = 56, 14, 12, 40  # room for the y axis's ticks and title, and the x axis's
STATES = [s.value for s in AgentState]
STATE_WORDS = {
    AgentState.IDLE: "Idle", AgentState.SCROLLING: "Scrolling", AgentState.EVALUATING: "Weighing a post",
    AgentState.COMPOSING: "Writing a post", AgentState.ENGAGING_LIKE: "Liking", AgentState.ENGAGING_REPLY: "Replying",
    AgentState.ENGAGING_RESHARE: "Resharing", AgentState.RESTING: "Resting",
}  # fmt: skip
STATUS_WORDS = {Status.RUNNING: "Running", Status.PAUSED: "Paused", Status.FINISHED: "Finished"}
COLOURS = {
    "IDLE": "#c9ced6", "SCROLLING": "#7aa6d8", "EVALUATING": "#f2c14e", "COMPOSING": "#9b6dd6",
    "ENGAGING_LIKE": "#5fbf7f", "ENGAGING_REPLY": "#2d8a57", "ENGAGING_RESHARE": "#e07a5f", "RESTING": "#8d99ae",
}  # fmt: skip
# (the round summary's field, its words, its colour)
LINES = [("likes", "likes", "#5fbf7f"), ("replies", "replies", "#2d8a57"), ("reshares", "reshares", "#e07a5f"),
         ("posts_created", "posts created", "#9b6dd6")]  # fmt: skip
# (the round's own number, its words, its colour): what the agents did in each round, not the running totals
ACTIVITY = [("likes", "likes", "#5fbf7f"), ("replies", "replies", "#2d8a57"), ("reshares", "reshares", "#e07a5f"),
            ("composed", "posts of their own", "#9b6dd6")]  # fmt: skip


def state_words(state: str) -> str:
    try:
        return STATE_WORDS[AgentState(state)]
    except ValueError:
        return state.replace("_", " ").capitalize()


def phase_label(status: str) -> str:
    try:
        return STATUS_WORDS[Status(status)]
    except ValueError:
        return status.replace("_", " ").capitalize()


def _x(i: int, n: int) -> float:
    return LEFT + (W - LEFT - RIGHT) * (i / max(1, n - 1))


def _y(v: float) -> float:
    """A share from 0 (bottom of the plot) to 1 (top)."""
    return TOP + (H - TOP - BOTTOM) * (1 - v)


def stacked(history: list[RoundSummary]) -> list[dict[str, str]]:
    """One polygon per state: its share of the agents after each round, stacked in the table's state order."""
    if not history:
        return []
    n = len(history)
    totals = [max(1, sum(r.distribution.values())) for r in history]
    below = [0.0] * n
    bands = []
    for state in STATES:
        top = [below[i] + history[i].distribution.get(state, 0) / totals[i] for i in range(n)]
        upper = [f"{_x(i, n):.1f},{_y(top[i]):.1f}" for i in range(n)]
        lower = [f"{_x(i, n):.1f},{_y(below[i]):.1f}" for i in reversed(range(n))]
        bands.append({"state": state, "words": state_words(state), "colour": COLOURS[state],
                      "points": " ".join(upper + lower)})  # fmt: skip
        below = top
    return bands


def lines(history: list[RoundSummary], peak: int | None = None) -> tuple[list[dict[str, str]], int]:
    if not history:
        return [], 0
    return _polylines(history, LINES, peak)


def _polylines(rows: list[Any], series: Any, peak: int | None = None) -> tuple[list[dict[str, str]], int]:
    """One polyline a (field, words, colour) of `series` across `rows`, scaled to `peak` (default: the highest
    value of any; two towns side by side share theirs, so their charts read on one scale)."""
    n = len(rows)
    peak = peak or max(1, *(getattr(r, name) for r in rows for name, _, _ in series))
    out = []
    for name, words, colour in series:
        pts = " ".join(f"{_x(i, n):.1f},{_y(getattr(r, name) / peak):.1f}" for i, r in enumerate(rows))
        out.append({"name": words, "colour": colour, "points": pts, "last": str(getattr(rows[-1], name))})
    return out, peak


def axes(history: list[RoundSummary], *, y_title: str, y_ticks: list[tuple[float, str]]) -> dict[str, Any]:
    """A chart's axes: the plot's frame, the rounds along the bottom, `y_ticks` (share 0-1, label) up the side."""
    n = len(history)
    rounds = [r.round for r in history]
    picks = sorted({0, n // 2, n - 1}) if n else []
    return {
        "x0": LEFT, "x1": W - RIGHT, "y0": TOP, "y1": H - BOTTOM, "plot_w": W - LEFT - RIGHT,
        "plot_h": H - TOP - BOTTOM,
        "x_ticks": [{"x": f"{_x(i, n):.1f}", "label": str(rounds[i])} for i in picks],
        "y_ticks": [{"y": f"{_y(v):.1f}", "label": label} for v, label in y_ticks],
        "x_title": "Round", "y_title": y_title, "x_title_x": LEFT + (W - LEFT - RIGHT) / 2, "x_title_y": H - 6,
        "y_title_x": 14, "y_title_y": TOP + (H - TOP - BOTTOM) / 2,
    }  # fmt: skip


def activity(history: list[RoundSummary], peak: int | None = None) -> tuple[list[dict[str, str]], int]:
    """What the agents did in each round (likes, replies, reshares, posts of their own) as lines, and the peak."""
    rows = per_round(history)
    if not rows:
        return [], 0
    return _polylines(rows, ACTIVITY, peak)


def _post(p: dict[str, Any], who: dict[str, str], topics: dict[str, str]) -> dict[str, Any]:
    tally = ", ".join(
        (count(p["likes"], "like"), count(p["replies"], "reply"), count(p["reshares"], "reshare"))
    )
    return p | {"tally": tally, "author_name": who.get(p["author"], p["author"]),
                "topic_names": " / ".join(topics.get(t, t) for t in p["topics"])}  # fmt: skip


def peaks(history: list[RoundSummary]) -> tuple[int, int]:
    """The highest value of the engagement chart and of the activity chart (0 before any round)."""
    return lines(history)[1], activity(history)[1]


def context(
    state: RunState, scenario: SocialFeedScenario | None = None, *, scale: tuple[int, int] | None = None
) -> dict[str, Any]:
    """What the run's pages show; with `scenario`, the results' reading too (topic names, what spread, why);
    `scale`: the engagement and activity charts' tops (default: their own peaks)."""
    history = state.history
    decisions = sum(r.decisions for r in history)
    calls = sum(r.reasoner_calls for r in history)
    engagement, peak = lines(history, scale[0] if scale else None)
    last = history[-1].distribution if history else {}
    everything = state.posts()
    agents, posts = len(state.sim.agents), len(everything)
    moves, moves_peak = activity(history, scale[1] if scale else None)
    topics = {t.id: t.name for t in scenario.topics} if scenario else {}
    who = names(state)
    top = [_post(p, who, topics) for p in top_posts(state)]
    return {
        "state": state, "round": state.round_number, "rounds": state.config.max_rounds,
        "percent": int(100 * state.round_number / state.config.max_rounds),
        "running": state.status is Status.RUNNING, "paused": state.status is Status.PAUSED,
        "finished": state.status is Status.FINISHED, "status_words": STATUS_WORDS[state.status], "agents": agents,
        "bands": stacked(history), "engagement": engagement, "peak": peak, "w": W, "h": H,
        "state_axes": axes(history, y_title="Agents (share)", y_ticks=[(0, "0%"), (0.5, "50%"), (1, "100%")]),
        "engagement_axes": axes(history, y_title="Count", y_ticks=[(0, "0"), (1, str(peak))]),
        "legend": [(s, state_words(s), COLOURS[s], last.get(s, 0)) for s in STATES],
        "top": top, "decisions": decisions, "reasoner_calls": calls, "student_text": STUDENT_TEXT,
        "mine": [_post(p, who, topics) | yours(state, p, everything) for p in everything if p["author"] == STUDENT],
        "activity": moves, "activity_peak": moves_peak,
        "activity_axes": axes(history, y_title="Actions in the round",
                              y_ticks=[(0, "0"), (1, str(moves_peak))]),
        "spread": spread(state, scenario, everything) if scenario else [],
        "reading": reading(state, scenario, top) if scenario else [],
        "ranking_words": WORDS[state.config.ranking],
        "reasoner_share": f"{100 * calls / decisions:.1f}" if decisions else "0",
        "posts": posts, "rounds_label": count(state.config.max_rounds, "round"),
        "agents_label": count(agents, "agent"), "posts_label": count(posts, "post"),
        "calls_label": count(calls, "call"), "decisions_label": count(decisions, "decision"),
    }  # fmt: skip
