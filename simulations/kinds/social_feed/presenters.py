"""What a run's pages show, computed once: the progress, the state distribution over rounds as a stacked area chart
and engagement over rounds as lines (server-drawn SVG, with the figures in words), the most engaged posts, and the
reasoner's calls and their share of decisions."""

from __future__ import annotations

from typing import Any

from .entities import AgentState
from .machine import RoundSummary, RunState, Status, top_posts

W, H, PAD = 640, 220, 30
STATES = [s.value for s in AgentState]
COLOURS = {
    "IDLE": "#c9ced6", "SCROLLING": "#7aa6d8", "EVALUATING": "#f2c14e", "COMPOSING": "#9b6dd6",
    "ENGAGING_LIKE": "#5fbf7f", "ENGAGING_REPLY": "#2d8a57", "ENGAGING_RESHARE": "#e07a5f", "RESTING": "#8d99ae",
}  # fmt: skip
LINES = [("likes", "#5fbf7f"), ("replies", "#2d8a57"), ("reshares", "#e07a5f"), ("posts_created", "#9b6dd6")]


def _x(i: int, n: int) -> float:
    return PAD + (W - 2 * PAD) * (i / max(1, n - 1))


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
        y = lambda v: PAD + (H - 2 * PAD) * (1 - v)  # noqa: E731
        upper = [f"{_x(i, n):.1f},{y(top[i]):.1f}" for i in range(n)]
        lower = [f"{_x(i, n):.1f},{y(below[i]):.1f}" for i in reversed(range(n))]
        bands.append({"state": state, "colour": COLOURS[state], "points": " ".join(upper + lower)})
        below = top
    return bands


def lines(history: list[RoundSummary]) -> tuple[list[dict[str, str]], int]:
    if not history:
        return [], 0
    n = len(history)
    peak = max(1, *(getattr(r, name) for r in history for name, _ in LINES))
    out = []
    for name, colour in LINES:
        pts = " ".join(
            f"{_x(i, n):.1f},{PAD + (H - 2 * PAD) * (1 - getattr(r, name) / peak):.1f}"
            for i, r in enumerate(history)
        )
        out.append(
            {
                "name": name.replace("_", " "),
                "colour": colour,
                "points": pts,
                "last": str(getattr(history[-1], name)),
            }
        )
    return out, peak


def context(state: RunState) -> dict[str, Any]:
    history = state.history
    decisions = sum(r.decisions for r in history)
    calls = sum(r.reasoner_calls for r in history)
    engagement, peak = lines(history)
    last = history[-1].distribution if history else {}
    return {
        "state": state, "round": state.round_number, "rounds": state.config.max_rounds,
        "percent": int(100 * state.round_number / state.config.max_rounds),
        "running": state.status is Status.RUNNING, "paused": state.status is Status.PAUSED,
        "finished": state.status is Status.FINISHED, "agents": len(state.simulation["agents"]),
        "bands": stacked(history), "engagement": engagement, "peak": peak, "w": W, "h": H, "pad": PAD,
        "legend": [(s, COLOURS[s], last.get(s, 0)) for s in STATES],
        "top": top_posts(state), "decisions": decisions, "reasoner_calls": calls,
        "reasoner_share": f"{100 * calls / decisions:.1f}" if decisions else "0",
        "posts": len(state.simulation["posts"]),
    }  # fmt: skip
