"""Seed 003's data model (pure): the agents and posts, the metrics, and the results a round produces, with the
seed's invariants and its error messages. Agents and posts are slotted dataclasses (10,000 agents × 50 rounds make
hundreds of thousands of them); the results a reader receives are pydantic models."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

CHECKPOINT_VERSION = "1.0"
SEEN = 16  # posts an agent remembers having looked at
STUDENT = "you"  # the author id of the posts the person watching writes into the run
HISTORY = 3  # transitions an agent's record keeps, by round (a checkpoint stores every agent's: kept short)


class AgentState(StrEnum):
    IDLE = "IDLE"
    SCROLLING = "SCROLLING"
    EVALUATING = "EVALUATING"
    COMPOSING = "COMPOSING"
    ENGAGING_LIKE = "ENGAGING_LIKE"
    ENGAGING_REPLY = "ENGAGING_REPLY"
    ENGAGING_RESHARE = "ENGAGING_RESHARE"
    RESTING = "RESTING"


ENGAGING = (AgentState.ENGAGING_LIKE, AgentState.ENGAGING_REPLY, AgentState.ENGAGING_RESHARE)


@dataclass(slots=True)
class Post:
    id: str
    author: str
    topics: tuple[str, ...]
    content: str
    round: int
    reply_to: str | None = None
    reshare_of: str | None = None
    likes: int = 0
    reshares: int = 0
    replies: int = 0

    @property
    def engagement(self) -> int:
        return self.likes + self.reshares + self.replies

    def as_dict(self) -> dict[str, Any]:
        return {
            name: getattr(self, name) if name != "topics" else list(self.topics) for name in self.__slots__
        }  # type: ignore[attr-defined]


@dataclass(slots=True)
class Tendencies:
    like: float
    reply: float
    reshare: float
    compose: float


@dataclass(slots=True)
class SocialAgent:
    id: str
    name: str
    interests: tuple[str, ...]
    tendencies: Tendencies
    state: AgentState = AgentState.IDLE
    rounds_in_state: int = 0  # rounds since the last transition (the `timeout` guard reads it)
    looking_at: str | None = None  # the post being evaluated or engaged with
    seen: list[str] = field(
        default_factory=list
    )  # the posts it last looked at (a feed leaves them out), bounded
    history: list[tuple[int, str, str, str]] = field(
        default_factory=list
    )  # (round, trigger, from, to), last few
    energy: float = 1.0  # attention left, 0..1: acting tires it, quiet rounds and rest restore it (rhythm.py)
    # Topics outside its interests the agent has been reading, and how far each has pulled it (at 1 it joins them).
    curious: dict[str, float] = field(default_factory=dict)
    # `seen` is a ring once full: the next look replaces the one at `seen_at` (the oldest), in place, so a stored
    # checkpoint's changes hold one post an agent, not the list shifted along.
    seen_at: int = 0
    # (round, attention): from the start of that round the agent has only recovered, one quiet round at a time;
    # its attention now follows from this, its state and its pace (rhythm.recovered). A stored run keeps the mark,
    # which changes only when the agent acts, not the attention, which changes every round.
    energy_mark: tuple[int, float] = (0, 1.0)

    def look_at(self, post_id: str) -> None:
        self.looking_at = post_id
        if len(self.seen) < SEEN:
            self.seen.append(post_id)
            self.seen_at = len(self.seen) % SEEN
        else:
            self.seen[self.seen_at] = post_id
            self.seen_at = (self.seen_at + 1) % SEEN

    def seen_in_order(self) -> list[str]:
        """The posts it looked at, the oldest first."""
        return self.seen[self.seen_at :] + self.seen[: self.seen_at]

    def tick(self) -> None:
        self.rounds_in_state += 1

    def transition_to(self, state: AgentState, trigger: str, round_number: int) -> None:
        entry = (round_number, trigger, self.state.value, state.value)
        if len(self.history) < HISTORY:
            self.history.append(entry)
        else:  # in the oldest one's place, not shifted along: a checkpoint's changes then hold one entry an agent
            self.history[min(range(len(self.history)), key=lambda i: self.history[i][0])] = entry
        self.state, self.rounds_in_state = state, 0

    def as_dict(self) -> dict[str, Any]:
        t = self.tendencies
        return {
            "id": self.id, "name": self.name, "interests": list(self.interests),
            "tendencies": {"like": t.like, "reply": t.reply, "reshare": t.reshare, "compose": t.compose},
            "state": self.state.value, "rounds_in_state": self.rounds_in_state, "looking_at": self.looking_at,
            "seen": self.seen_in_order(), "history": [list(h) for h in self.history], "energy": self.energy,
            "curious": dict(self.curious),
        }  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, round_number: int) -> SocialAgent:
        """An agent of a checkpoint taken before `round_number` (its attention is marked there)."""
        seen = list(d["seen"])[-SEEN:]
        energy = float(d.get("energy", 1.0))
        return cls(
            id=d["id"], name=d["name"], interests=tuple(d["interests"]), tendencies=Tendencies(**d["tendencies"]),
            state=AgentState(d["state"]), rounds_in_state=d["rounds_in_state"], looking_at=d["looking_at"], seen=seen,
            history=[(int(h[0]), str(h[1]), str(h[2]), str(h[3])) for h in d["history"]],
            energy=energy, curious={str(k): float(v) for k, v in d.get("curious", {}).items()},
            seen_at=len(seen) % SEEN, energy_mark=(round_number, energy),
        )  # fmt: skip


def post_from_dict(d: dict[str, Any]) -> Post:
    return Post(**{**d, "topics": tuple(d["topics"])})


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EngagementMetrics(_Model):
    total_likes: int = Field(default=0, ge=0)
    total_reshares: int = Field(default=0, ge=0)
    total_replies: int = Field(default=0, ge=0)
    posts_created: int = Field(default=0, ge=0)


ActionType = Literal["compose", "like", "reply", "reshare", "scroll"]


class ActionResult(_Model):
    action_type: ActionType
    target_post_id: str | None = None
    new_post: dict[str, Any] | None = None  # the Post created, as a dict (compose, reply, reshare)
    content: str | None = None  # the words of a reply or reshare

    @model_validator(mode="after")
    def _invariants(self) -> ActionResult:
        if self.action_type in ("like", "reply", "reshare") and not self.target_post_id:
            raise ValueError("target_post_id required")
        if self.action_type in ("compose", "reply", "reshare") and self.new_post is None:
            raise ValueError("new_post required")
        if self.action_type == "scroll" and (self.target_post_id or self.new_post or self.content):
            raise ValueError("a scroll carries no target, post or content")
        return self


class DecisionResult(_Model):
    agent_id: str
    trigger: str
    from_state: AgentState
    to_state: AgentState
    action: ActionResult | None = None
    reasoner_used: bool = False
    reason: str = ""  # the reasoner's reason, when it chose


class RoundResult(_Model):
    round_number: int
    decisions: list[DecisionResult]
    state_distribution: dict[AgentState, int]
    duration_ms: int = 0
    reasoner_calls: int = 0


class SimulationResult(_Model):
    total_rounds: int
    final_metrics: EngagementMetrics
    final_state_distribution: dict[AgentState, int]
    total_duration_ms: int = 0
    checkpoint_path: str | None = None


class CheckpointData(_Model):
    version: str = CHECKPOINT_VERSION
    round_number: int
    posts: list[dict[str, Any]]
    agents: list[dict[str, Any]]
    metrics: dict[str, Any]
    state_distribution: dict[str, int]
    timestamp: str

    @model_validator(mode="after")
    def _version(self) -> CheckpointData:
        if self.version != CHECKPOINT_VERSION:
            raise ValueError("unsupported checkpoint version")
        return self


@dataclass(frozen=True)
class Ambiguity:
    """One agent's choice the guards left open: the reasoner picks one of `candidates`."""

    agent: SocialAgent
    post: Post
    candidates: tuple[AgentState, ...]
    round_number: int
    why: str = ""  # why the post was in the agent's feed where it was (ranking.why)
