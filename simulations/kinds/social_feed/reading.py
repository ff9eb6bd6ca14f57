"""A run read back for a person (pure): what happened in each round (not the running totals the summaries keep),
the posts that spread most and who passed them on, and a short written reading of the run — the numbers the
results page, its charts and its CSV download explain themselves with."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from .config import SocialFeedScenario
from .entities import STUDENT, AgentState
from .machine import RoundSummary, RunState
from .ranking import WORDS

NOUNS = {
    "post": "posts", "like": "likes", "reply": "replies", "reshare": "reshares", "agent": "agents",
    "round": "rounds", "call": "calls", "decision": "decisions", "post created": "posts created",
    "reasoner call": "reasoner calls", "action": "actions", "post of their own": "posts of their own",
}  # fmt: skip
SPREAD = 5  # posts shown as the ones that spread most
NAMED = 4  # resharers named before "and N more"


def count(n: int, noun: str) -> str:
    """`n` and its noun, agreeing in number: "1 reshare", "0 reshares", "2 replies"."""
    return f"{n} {noun if n == 1 else NOUNS[noun]}"


@dataclass(frozen=True)
class RoundRow:
    """One round's own numbers (the summaries keep running totals)."""

    round: int
    likes: int
    replies: int
    reshares: int
    composed: int  # posts of their own (not replies or reshares)
    acted: int  # agents whose state changed in the round
    distribution: dict[str, int]

    @property
    def actions(self) -> int:
        return self.likes + self.replies + self.reshares + self.composed


def per_round(history: list[RoundSummary]) -> list[RoundRow]:
    rows, before = [], None
    for r in history:
        likes = r.likes - (before.likes if before else 0)
        replies = r.replies - (before.replies if before else 0)
        reshares = r.reshares - (before.reshares if before else 0)
        created = r.posts_created - (before.posts_created if before else 0)
        rows.append(RoundRow(round=r.round, likes=likes, replies=replies, reshares=reshares,
                             composed=created - replies - reshares, acted=r.decisions,
                             distribution=dict(r.distribution)))  # fmt: skip
        before = r
    return rows


def names(state: RunState) -> dict[str, str]:
    return state.names() | {STUDENT: "You"}


def yours(state: RunState, post: dict[str, Any], posts: list[dict[str, Any]] | None = None) -> dict[str, str]:
    """What became of one of the person's posts: who replied to it and who passed it on (`posts`: the run's, when
    the caller has them already)."""
    who = names(state)
    posts = state.posts() if posts is None else posts
    replied = [who.get(p["author"], p["author"]) for p in posts if p.get("reply_to") == post["id"]]
    passed = [who.get(p["author"], p["author"]) for p in posts if p.get("reshare_of") == post["id"]]
    parts = []
    if replied:
        parts.append(f"replies from {_listed(list(dict.fromkeys(replied)))}")
    if passed:
        parts.append(f"passed on by {_listed(list(dict.fromkeys(passed)))}")
    said = "; ".join(parts)  # upper-cased by its first letter only: the names in it keep their capitals
    return {
        "fate": said[:1].upper() + said[1:] + "." if parts else "Nobody has answered or passed it on yet."
    }


def _listed(people: list[str]) -> str:
    if len(people) <= NAMED:
        return ", ".join(people[:-1]) + (" and " if len(people) > 1 else "") + people[-1]
    return f"{', '.join(people[:NAMED])} and {len(people) - NAMED} more"


def spread(
    state: RunState, scenario: SocialFeedScenario, posts: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """The originals reshared most, each with who passed it on and when, and its other engagement."""
    posts = state.posts() if posts is None else posts
    who = names(state)
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in posts:
        if p.get("reshare_of"):
            by[p["reshare_of"]].append(p)
    index = {p["id"]: p for p in posts}
    ranked = sorted(by, key=lambda pid: (-len(by[pid]), int(pid[1:]) if pid[1:].isdigit() else 0))[:SPREAD]
    out = []
    for pid in ranked:
        p, reshares = index[pid], sorted(by[pid], key=lambda r: (r["round"], int(r["id"][1:])))
        people = list(dict.fromkeys(who.get(r["author"], r["author"]) for r in reshares))
        first, last = reshares[0]["round"], reshares[-1]["round"]
        when = f"in round {first}" if first == last else f"from round {first} to round {last}"
        topics = " / ".join(scenario.topic(t).name for t in p["topics"])
        out.append({
            "content": p["content"], "author": who.get(p["author"], p["author"]), "topics": topics,
            "round": p["round"], "reshares": count(len(reshares), "reshare"),
            "why": f"Passed on by {_listed(people)}, {when}; it also drew {count(p['likes'], 'like')} and "
                   f"{count(p['replies'], 'reply')}.",
        })  # fmt: skip
    return out


def reading(state: RunState, scenario: SocialFeedScenario, top: list[dict[str, Any]]) -> list[str]:
    """A few sentences on the run: what was done, how activity rose and fell, what spread and what the feed's
    ranking and the early posts had to do with it."""
    rows = per_round(state.history)
    if not rows:
        return ["No round has been played yet."]
    agents = len(state.sim.agents)
    total = Counter[str]()
    for r in rows:
        total.update(likes=r.likes, replies=r.replies, reshares=r.reshares, composed=r.composed)
    out = [
        f"In {count(len(rows), 'round')}, {count(agents, 'agent')} with feeds ranked "
        f"{WORDS[state.config.ranking].lower()} gave {count(total['likes'], 'like')}, "
        f"{count(total['replies'], 'reply')} and {count(total['reshares'], 'reshare')}, and wrote "
        f"{count(total['composed'], 'post of their own')}."
    ]
    settled = rows[min(3, len(rows) - 1) :]  # the first rounds are the town opening the feed
    high = max(settled, key=lambda r: (r.actions, -r.round))
    low = min(settled, key=lambda r: (r.actions, r.round))
    if high.actions != low.actions:
        out.append(
            f"Activity rose and fell as agents tired and rested: from {count(high.actions, 'action')} in round "
            f"{high.round} to {count(low.actions, 'action')} in round {low.round}."
        )
    last = rows[-1].distribution
    resting = last.get(AgentState.RESTING.value, 0)
    out.append(f"After the last round {count(resting, 'agent')} {'was' if resting == 1 else 'were'} resting.")
    posts = state.posts()
    written = Counter(t for p in posts if p["round"] > 0 for t in p["topics"])
    if written:
        topic, n = written.most_common(1)[0]
        share = round(100 * n / sum(written.values()))
        out.append(
            f"{scenario.topic(topic).name} drew the most talk: {share}% of what was posted during the run."
        )
    spreading = spread(state, scenario, posts)
    if spreading:
        s = spreading[0]
        out.append(f"The post passed on most was {s['author']}'s on {s['topics'].lower()} ({s['reshares']}).")
    else:
        out.append("Nothing was reshared.")
    mine = [p for p in posts if p["author"] == STUDENT]
    if mine:
        got = Counter[str]()
        for p in mine:
            got.update(likes=p["likes"], replies=p["replies"], reshares=p["reshares"])
        times = {1: "once", 2: "twice"}.get(len(mine), f"{len(mine)} times")
        out.append(
            f"You posted {times}; the town gave your posts {count(got['likes'], 'like')}, "
            f"{count(got['replies'], 'reply')} and {count(got['reshares'], 'reshare')}."
        )
    early = sum(1 for p in top if p["round"] == 0)
    if early:
        out.append(
            f"{early} of the {len(top)} most engaged posts were there from the start: the earliest posts are in "
            "feeds longest."
            + (" A hot feed lets newer posts catch up." if state.config.ranking != "hot" else "")
        )
    return out
