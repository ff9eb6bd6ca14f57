"""The built-in offline model for social feeds: a reasoner that settles an ambiguous choice by a seeded draw
weighted by the agent's tendencies (so a keen replier mostly replies), with its reason; and a writer that composes
posts, replies and reshares from the agent's interests, the scenario's topic words and stances, and the post."""

from __future__ import annotations

from collections.abc import Sequence

from simulations.engine import rng

from .config import SocialFeedScenario
from .entities import AgentState, Ambiguity, Post, SocialAgent
from .statechart import relevance, unit

S = AgentState
VERB = {S.COMPOSING: "write a post of its own", S.ENGAGING_LIKE: "like it", S.ENGAGING_REPLY: "reply",
        S.ENGAGING_RESHARE: "reshare it", S.SCROLLING: "scroll on"}  # fmt: skip


def _weight(agent: SocialAgent, state: AgentState) -> float:
    t = agent.tendencies
    return {S.COMPOSING: t.compose, S.ENGAGING_LIKE: t.like, S.ENGAGING_REPLY: t.reply,
            S.ENGAGING_RESHARE: t.reshare}.get(state, 0.1)  # fmt: skip


def _pick(candidates: Sequence[AgentState], weights: Sequence[float], draw: float) -> AgentState:
    """The candidate whose share of the weights the draw falls in (the last one if rounding leaves some over)."""
    for candidate, weight in zip(candidates, weights, strict=True):
        draw -= weight
        if draw < 0:
            return candidate
    return candidates[-1]


class OfflineReasoner:
    def __init__(self, seed: int) -> None:
        self.seed = seed

    def decide(self, batch: Sequence[object]) -> list[tuple[AgentState, str]]:
        out = []
        for item in batch:
            assert isinstance(item, Ambiguity)
            weights = [_weight(item.agent, c) for c in item.candidates]
            draw = unit(self.seed, "reasoner", item.round_number, item.agent.id) * sum(weights)
            candidate = _pick(item.candidates, weights, draw)
            share = int(relevance(item.agent, item.post) * 100)
            reason = (
                f"{item.agent.name} cares about {', '.join(item.agent.interests)} ({share}% of this post's topics) and "
                f"chose to {VERB[candidate]} over {', '.join(VERB[c] for c in item.candidates if c is not candidate)}"
            )
            out.append((candidate, reason))
        return out


class OfflineWriter:
    def __init__(self, scenario: SocialFeedScenario, seed: int) -> None:
        self.scenario, self.seed = scenario, seed

    def _stance(self, agent: SocialAgent, topic_id: str, purpose: str, n: int) -> str:
        topic = self.scenario.topic(topic_id)
        r = rng.stream(self.seed, purpose, n, agent.id)
        return f"{r.choice(topic.stances)} #{r.choice(topic.words).replace(' ', '')}"

    def compose(
        self, agent: SocialAgent, inspired_by: Post | None, round_number: int
    ) -> tuple[str, tuple[str, ...]]:
        topics = tuple(t for t in (inspired_by.topics if inspired_by else ()) if t in agent.interests) or (
            agent.interests[int(unit(self.seed, "topic", round_number, agent.id) * len(agent.interests))],
        )
        return self._stance(agent, topics[0], "compose", round_number), topics

    def reply(self, agent: SocialAgent, post: Post, round_number: int) -> str:
        mine = [t for t in post.topics if t in agent.interests] or list(post.topics)
        return f"@{post.author} {self._stance(agent, mine[0], 'reply', round_number)}"

    def reshare(self, agent: SocialAgent, post: Post, round_number: int) -> str:
        return f"Worth reading: {post.content[:120]}"
