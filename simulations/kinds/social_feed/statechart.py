"""The agents' shared statechart (pure): seed 003's trigger table as data, its guards as pure functions, and
`fire`, which returns every target whose guard holds — more than one is the ambiguous case the reasoner decides.

Which trigger an agent meets in a round (`determine_trigger`) is read from its state, its feed and its attention;
where the seed is silent we keep agents from moving in step (rhythm.py): an agent off the feed this round meets
nothing, a scrolling agent whose attention is spent `tires` and rests, a resting one is `rested` once its attention
is back, and any agent that has stayed `timeout_rounds` in one state meets `timeout` (back to SCROLLING) first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .config import Guards
from .entities import AgentState, Post, SocialAgent

S = AgentState
ANY = "*"


@dataclass(frozen=True)
class Context:
    """What the guards read: the agent, its feed this round, the post it is looking at, the thresholds."""

    agent: SocialAgent
    feed: Sequence[Post]
    post: Post | None
    guards: Guards


Guard = Callable[[Context], bool]


def relevance(agent: SocialAgent, post: Post) -> float:
    """The share of the post's topics the agent is interested in."""
    return sum(1 for t in post.topics if t in agent.interests) / len(post.topics) if post.topics else 0.0


def always(c: Context) -> bool:
    return True


def has_posts(c: Context) -> bool:
    return len(c.feed) > 0


def no_posts(c: Context) -> bool:
    return not has_posts(c)


def _relevant(c: Context) -> bool:
    return c.post is not None and relevance(c.agent, c.post) >= c.guards.relevance


def high_engagement_guard(c: Context) -> bool:
    return (
        c.post is not None
        and c.post.engagement >= c.guards.high_engagement
        and (c.agent.tendencies.compose >= c.guards.tendency)
    )


def like_tendency_guard(c: Context) -> bool:
    return _relevant(c) and c.agent.tendencies.like >= c.guards.tendency


def reply_tendency_guard(c: Context) -> bool:
    return _relevant(c) and c.agent.tendencies.reply >= c.guards.tendency


def reshare_tendency_guard(c: Context) -> bool:
    return (
        _relevant(c)
        and c.agent.tendencies.reshare >= c.guards.tendency
        and c.post is not None
        and (c.post.engagement >= 1)
    )  # a post nobody has touched is not worth passing on yet


ACTIVE_GUARDS = (high_engagement_guard, like_tendency_guard, reply_tendency_guard, reshare_tendency_guard)


def low_engagement_guard(c: Context) -> bool:
    """Nothing about the post moves the agent: it scrolls on."""
    return not any(g(c) for g in ACTIVE_GUARDS)


def is_tired(c: Context) -> bool:
    return c.agent.energy < c.guards.tired


def is_rested(c: Context) -> bool:
    return c.agent.energy >= c.guards.rested


def is_timed_out(c: Context) -> bool:
    return c.agent.rounds_in_state >= c.guards.timeout_rounds


@dataclass(frozen=True)
class Row:
    state: AgentState | str  # a state, or ANY
    trigger: str
    target: AgentState
    guard: Guard


TABLE: tuple[Row, ...] = (
    Row(S.IDLE, "start_browsing", S.SCROLLING, always),
    Row(S.SCROLLING, "sees_post", S.EVALUATING, has_posts),
    Row(S.SCROLLING, "feed_empty", S.RESTING, no_posts),
    Row(S.SCROLLING, "tires", S.RESTING, is_tired),  # not the seed's: attention spent (rhythm.py)
    Row(S.EVALUATING, "decides", S.COMPOSING, high_engagement_guard),
    Row(S.EVALUATING, "decides", S.ENGAGING_LIKE, like_tendency_guard),
    Row(S.EVALUATING, "decides", S.ENGAGING_REPLY, reply_tendency_guard),
    Row(S.EVALUATING, "decides", S.ENGAGING_RESHARE, reshare_tendency_guard),
    Row(S.EVALUATING, "decides", S.SCROLLING, low_engagement_guard),
    Row(S.COMPOSING, "finishes_composing", S.SCROLLING, always),
    Row(S.ENGAGING_LIKE, "finishes_engaging", S.SCROLLING, always),
    Row(S.ENGAGING_REPLY, "finishes_engaging", S.SCROLLING, always),
    Row(S.ENGAGING_RESHARE, "finishes_engaging", S.SCROLLING, always),
    Row(S.RESTING, "rested", S.IDLE, is_rested),
    Row(ANY, "timeout", S.SCROLLING, is_timed_out),
)


class NoTransition(ValueError):
    def __init__(self, state: AgentState, trigger: str) -> None:
        super().__init__(f"no transition from {state.value} on {trigger}")


def fire(trigger: str, c: Context) -> list[AgentState]:
    """Every target of the rows for the agent's state and `trigger` whose guard holds, in table order."""
    rows = [r for r in TABLE if r.trigger == trigger and r.state in (c.agent.state, ANY)]
    targets = [r.target for r in rows if r.guard(c)]
    if not targets:
        raise NoTransition(c.agent.state, trigger)
    return targets


def unit(*key: object) -> float:
    """A uniform number in [0, 1) from the key alone (cheaper than a seeded Random for a draw per agent)."""
    digest = hashlib.blake2b(":".join(map(str, key)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def determine_trigger(
    agent: SocialAgent, feed: Sequence[Post], guards: Guards, *, on_feed: bool = True
) -> str | None:
    """The trigger the agent meets this round, or None (it stays as it is). `on_feed`: whether its rhythm has it
    on the feed this round (rhythm.acts); a resting agent rests on either way."""
    state = agent.state
    if state is not S.SCROLLING and agent.rounds_in_state >= guards.timeout_rounds:
        return "timeout"
    if state is S.RESTING:
        return "rested" if agent.rounds_in_state >= 1 and agent.energy >= guards.rested else None
    if not on_feed:
        return None
    if state is S.IDLE:
        return "start_browsing"
    if state is S.SCROLLING:
        if agent.energy < guards.tired:
            return "tires"
        return "sees_post" if feed else "feed_empty"
    if state is S.EVALUATING:
        return "decides"
    if state is S.COMPOSING:
        return "finishes_composing"
    if state in (S.ENGAGING_LIKE, S.ENGAGING_REPLY, S.ENGAGING_RESHARE):
        return "finishes_engaging"
    raise AssertionError(state)
