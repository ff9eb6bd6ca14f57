"""A social-feed run's part of the export (its configuration, the summary of every round, the final checkpoint)
and its downloads: the decision log as JSON lines, the metrics per round as CSV, the final checkpoint."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from typing import Any, Literal

from simulations.models import Game
from simulations.services.files.export import common_fields
from simulations.services.files.export_schema import SimulationExport, Strict

from .comparing import TOWNS
from .entities import AgentState
from .games import state_of
from .machine import Event, RoundSummary, RunConfig, RunState, town_state
from .presenters import count, phase_label, state_words
from .reading import per_round
from .stored import expand_log


class SocialFeedSection(Strict):
    config: RunConfig
    started_at: str
    rounds: list[RoundSummary]
    checkpoint: dict[str, Any]  # seed 003's CheckpointData after the last committed round


class SocialFeedExport(SimulationExport):
    kind: Literal["social_feed"]
    social_feed: SocialFeedSection


export_model = SocialFeedExport


def build(game: Game) -> SocialFeedExport:
    state = state_of(game)
    return SocialFeedExport(
        **common_fields(game=game),
        social_feed=SocialFeedSection(config=state.config, started_at=state.started_at, rounds=state.history,
                                      checkpoint=state.simulation),
    )  # fmt: skip


def decision_log(game: Game) -> str:
    """Every decision of the run, one JSON object a line (the seed's LoggingExecutor), in the order made."""
    events = game.events.filter(name=Event.ROUNDS_PLAYED.value).order_by("seq")
    lines = [
        json.dumps(d, ensure_ascii=False)
        for d in logged(state_of(game), events.values_list("stance_changes", "payload"))
    ]
    return "\n".join(lines) + ("\n" if lines else "")


def logged(
    state: RunState, events: Iterable[tuple[list[dict[str, Any]], dict[str, Any]]]
) -> list[dict[str, Any]]:
    """The seed's decision log of ROUNDS_PLAYED events (their stored log, their payload), the run being at `state`
    (its posts hold the words the log refers to)."""
    ids, posts, out = [agent for agent, _ in state.people()], state.posts(), []
    for changes, payload in events:
        reasons = {(c["round"], c["agent"]): c["reason"] for c in payload.get("choices", [])}
        out += expand_log(changes, ids=ids, posts=posts, reasons=reasons)
    return out


def metrics_csv(game: Game) -> str:
    out = io.StringIO()
    states = [s.value for s in AgentState]
    writer = csv.writer(out)
    writer.writerow(
        ["round", *states, "likes", "replies", "reshares", "posts_created", "decisions", "reasoner_calls"]
    )
    for r in state_of(game).history:
        writer.writerow([r.round, *(r.distribution.get(s, 0) for s in states), r.likes, r.replies, r.reshares,
                         r.posts_created, r.decisions, r.reasoner_calls])  # fmt: skip
    return out.getvalue()


def rounds_csv(state: RunState) -> str:
    """Each round's own numbers with plain headings: what the agents did in it, how many acted, how many were in
    each state after it (in words), and the running totals."""
    out = io.StringIO()
    writer = csv.writer(out)
    # A comparison's rows say which town they are of (Town A's rounds, then Town B's); a one-town run's do not.
    towns = (
        [("", state)]
        if state.comparison is None
        else list(zip(TOWNS, (state, town_state(state)), strict=True))
    )
    town = ["Town"] if state.comparison is not None else []
    writer.writerow([*town, "Round", "Likes", "Replies", "Reshares", "Posts of their own", "Agents who acted",
                     *(state_words(s.value) for s in AgentState), "Likes so far", "Replies so far",
                     "Reshares so far", "Posts so far", "Reasoner calls"])  # fmt: skip
    for name, run in towns:
        which = [name] if town else []
        for row, summary in zip(per_round(run.history), run.history, strict=True):
            writer.writerow([*which, row.round, row.likes, row.replies, row.reshares, row.composed, row.acted,
                             *(row.distribution.get(s.value, 0) for s in AgentState), summary.likes,
                             summary.replies, summary.reshares, summary.posts_created, summary.reasoner_calls])  # fmt: skip
    return out.getvalue()


def markdown(game: Game) -> str:
    state = state_of(game)
    last = state.history[-1] if state.history else None
    calls = sum(r.reasoner_calls for r in state.history)
    lines = [f"# Social feed run #{game.pk}", "", f"Rounds played: {state.round_number} of {state.config.max_rounds}; "
             f"{count(len(state.sim.agents), 'agent')}; {phase_label(state.status).lower()}.", ""]  # fmt: skip
    if last:
        lines += [f"{', '.join(count(getattr(last, name), noun) for name, noun in TOTALS).capitalize()}; "
                  f"{count(calls, 'reasoner call')}.", ""]  # fmt: skip
    return "\n".join(lines)


TOTALS = (("likes", "like"), ("replies", "reply"), ("reshares", "reshare"), ("posts_created", "post created"))


def download(game: Game, fmt: str) -> tuple[str, str, str] | None:
    if fmt == "decisions.jsonl":
        return decision_log(game), "application/jsonl", f"social-feed-{game.pk}-decisions.jsonl"
    if fmt == "metrics.csv":
        return metrics_csv(game), "text/csv; charset=utf-8", f"social-feed-{game.pk}-metrics.csv"
    if fmt == "checkpoint.json":
        body = json.dumps(state_of(game).simulation, ensure_ascii=False)  # the seed's CheckpointData
        return body, "application/json", f"social-feed-{game.pk}-checkpoint.json"
    if fmt == "md":
        return markdown(game), "text/markdown; charset=utf-8", f"social-feed-{game.pk}.md"
    return None


def start_options(doc: SimulationExport) -> dict[str, Any]:
    assert isinstance(doc, SocialFeedExport)
    return {
        "config": doc.social_feed.config.model_dump(mode="json"),
        "started_at": doc.social_feed.started_at,
    }


def reader_view(doc: SimulationExport) -> SimulationExport:
    return doc  # a run has no private part
