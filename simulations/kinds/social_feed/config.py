"""A social-feed scenario in YAML: the seed's `SimulationConfig` (fields, defaults, invariants and error messages as
the seed gives them), the population (agents listed, or generated from a distribution of interests and tendencies),
the topics with the words offline posts are written from, the initial posts, and the guards' thresholds."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from simulations.engine import rng
from simulations.engine.scenario_files import read_yaml_model

from .entities import Post, SocialAgent, Tendencies
from .ranking import DEFAULT as DEFAULT_RANKING
from .ranking import Ranking

SCENARIO_ROOT = Path(__file__).resolve().parents[3] / "scenarios" / "social_feed"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SimulationConfig(_Strict):
    max_rounds: int = 50
    checkpoint_frequency: int = 1
    checkpoint_dir: str | None = None
    reasoner_enabled: bool = True
    log_decisions: bool = True
    log_file: str | None = None
    ranking: Ranking = DEFAULT_RANKING  # how feeds are ordered (ranking.py); not the seed's

    @field_validator("max_rounds")
    @classmethod
    def _rounds(cls, v: int) -> int:
        if v < 1:
            raise ValueError("max_rounds must be >= 1")
        return v

    @field_validator("checkpoint_frequency")
    @classmethod
    def _frequency(cls, v: int) -> int:
        if v < 1:
            raise ValueError("checkpoint_frequency must be >= 1")
        return v


class Guards(_Strict):
    """The thresholds the guards compare against (pure numbers, so a guard is a comparison)."""

    high_engagement: int = Field(default=6, ge=1)  # a post this engaged inspires a composing agent
    relevance: float = Field(default=0.34, ge=0, le=1)  # share of a post's topics among the agent's interests
    tendency: float = Field(default=0.5, ge=0, le=1)  # a tendency at least this strong acts
    timeout_rounds: int = Field(
        default=6, ge=1
    )  # rounds in one state before `timeout` sends the agent scrolling
    feed_size: int = Field(default=8, ge=1, le=50)  # posts an agent's feed shows
    window: int = Field(default=40, ge=1, le=1000)  # recent posts kept per topic (feeds are windows)
    tired: float = Field(default=0.25, ge=0, le=1)  # attention under this: a scrolling agent rests
    rested: float = Field(default=0.8, ge=0, le=1)  # attention back to this: a resting agent is rested


class Stance(_Strict):
    """A position on a topic: what a post taking it says, and a line for it and one against it, which offline
    replies and reshares answer a post taking it with (a bare sentence is a stance without its two lines)."""

    say: str = Field(min_length=1, max_length=300)
    agree: str | None = Field(default=None, max_length=300)
    disagree: str | None = Field(default=None, max_length=300)

    @model_validator(mode="before")
    @classmethod
    def _bare(cls, value: object) -> object:
        return {"say": value} if isinstance(value, str) else value


class Topic(_Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    name: str
    words: list[str] = Field(min_length=3)  # what offline posts and replies on the topic are made of
    stances: list[Stance] = Field(min_length=2)  # positions an agent may take on it


class Openers(_Strict):
    """How residents open a reply that agrees or disagrees, and a reshare of a post they back or oppose."""

    agree: list[str] = Field(default_factory=lambda: ["Agreed.", "Yes.", "Well said."], min_length=1)
    disagree: list[str] = Field(
        default_factory=lambda: ["I see it differently.", "Not so fast."], min_length=1
    )
    reshare: list[str] = Field(default_factory=lambda: ["Passing this on:"], min_length=1)
    reshare_against: list[str] = Field(default_factory=lambda: ["Sharing so you can see the other side:"],
                                       min_length=1)  # fmt: skip


class AgentSpec(_Strict):
    id: str
    name: str
    interests: list[str] = Field(min_length=1)
    like: float = Field(ge=0, le=1)
    reply: float = Field(ge=0, le=1)
    reshare: float = Field(ge=0, le=1)
    compose: float = Field(ge=0, le=1)
    voice: str | None = Field(
        default=None, max_length=120
    )  # a sentence of its own its posts and replies carry


class Range(_Strict):
    low: float = Field(ge=0, le=1)
    high: float = Field(ge=0, le=1)

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if self.low > self.high:
            raise ValueError("low must be <= high")
        return self


class Distribution(_Strict):
    """Agents generated from the scenario's seed: `count` of them, each with 1..max_interests topics and each
    tendency drawn uniformly from its range."""

    count: int = Field(ge=1, le=100_000)
    max_interests: int = Field(default=2, ge=1)
    like: Range = Range(low=0.2, high=0.9)
    reply: Range = Range(low=0.0, high=0.6)
    reshare: Range = Range(low=0.0, high=0.6)
    compose: Range = Range(low=0.0, high=0.5)


class InitialPost(_Strict):
    author: str
    topics: list[str] = Field(min_length=1)
    content: str = Field(min_length=1, max_length=600)
    stance: int | None = Field(
        default=None, ge=1
    )  # which of its first topic's stances it takes (1: the first)


class SocialFeedScenario(_Strict):
    kind: Literal["social_feed"] = "social_feed"
    slug: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    summary: str
    config: SimulationConfig = SimulationConfig()
    guards: Guards = Guards()
    topics: list[Topic] = Field(min_length=1)
    agents: list[AgentSpec] = Field(default_factory=list)
    population: Distribution | None = None
    posts: list[InitialPost] = Field(default_factory=list)
    openers: Openers = Openers()

    @model_validator(mode="after")
    def _population(self) -> SocialFeedScenario:
        if not self.agents and self.population is None:
            raise ValueError("simulation requires at least one agent")
        known = {t.id for t in self.topics}
        for where, topics in [*((f"agents[{a.id}]", a.interests) for a in self.agents),
                              *((f"posts[{n}]", p.topics) for n, p in enumerate(self.posts))]:  # fmt: skip
            unknown = sorted(set(topics) - known)
            if unknown:
                raise ValueError(f"{where}: unknown topic {unknown[0]!r}")
        for n, post in enumerate(self.posts):
            if post.stance is not None and post.stance > len(self.topic(post.topics[0]).stances):
                raise ValueError(f"posts[{n}]: stance {post.stance} is not one of {post.topics[0]!r}'s")
        if self.population and self.population.max_interests > len(self.topics):
            raise ValueError("population.max_interests is more than the topics there are")
        return self

    def topic(self, topic_id: str) -> Topic:
        return next(t for t in self.topics if t.id == topic_id)


def generated_identity(i: int) -> tuple[str, str]:
    """The id and name of the `i`-th generated agent (from 0)."""
    return f"a{i + 1:05d}", f"Agent {i + 1}"


def build_agents(scenario: SocialFeedScenario, *, seed: int, count: int | None = None) -> list[SocialAgent]:
    """The listed agents, then the generated ones (`count` overrides the distribution's, e.g. for a benchmark)."""
    agents = [
        SocialAgent(id=a.id, name=a.name, interests=tuple(a.interests),
                    tendencies=Tendencies(like=a.like, reply=a.reply, reshare=a.reshare, compose=a.compose))
        for a in scenario.agents
    ]  # fmt: skip
    spec = scenario.population
    n = count if count is not None else (spec.count if spec else 0)
    if n and spec is None:
        spec = Distribution(count=n)
    topic_ids = [t.id for t in scenario.topics]
    for i in range(n):
        assert spec is not None
        r = rng.stream(seed, "population", i)
        k = r.randint(1, min(spec.max_interests, len(topic_ids)))
        interests = tuple(sorted(r.sample(topic_ids, k)))

        def draw(span: Range, r: object = r) -> float:
            return round(span.low + (span.high - span.low) * r.random(), 3)  # type: ignore[attr-defined]

        ident, name = generated_identity(i)
        agents.append(SocialAgent(
            id=ident, name=name, interests=interests,
            tendencies=Tendencies(like=draw(spec.like), reply=draw(spec.reply), reshare=draw(spec.reshare),
                                  compose=draw(spec.compose)),
        ))  # fmt: skip
    if not agents:
        raise ValueError("simulation requires at least one agent")
    return agents


def initial_posts(scenario: SocialFeedScenario) -> list[Post]:
    return [
        Post(id=f"p{n + 1}", author=p.author, topics=tuple(p.topics), content=p.content, round=0)
        for n, p in enumerate(scenario.posts)
    ]


def load_scenario(path: str | Path) -> SocialFeedScenario:
    return read_yaml_model(path, SocialFeedScenario)
