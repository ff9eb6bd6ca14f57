"""A social-feed simulation as a stored run keeps it (pure): compact, and shaped so that a checkpoint's changes hold
what happened in its rounds — an agent who did nothing in them stores nothing.

The platform stores a run's state whole every KEYFRAME_EVERY checkpoints and, between them, the operations that
turn one state into the next (services/ledger/checkpoints.py: a value set, a grown list's new items). So the stored
form puts what changes together and what does not apart:

- an agent's line (`agents`): its last transitions (a ring, each in the place of the oldest), its attention's mark
  and what it is reading — one string, set again only when the agent acts. Its state and the rounds it has held
  it follow from its last transition; its attention from the mark (rhythm.recovered), so the quiet rounds that
  change both every round store nothing;
- the posts it looked at (`seen`): a ring of post numbers, one item set a look;
- its interests, name and tendencies apart (they change rarely or never);
- the posts as short rows, a post's number being its place (`p12` is the twelfth), so a like sets one count.

A line reads, separated by spaces: the attention's mark (in thousandths, with `@round` when the mark is not the
round after the last transition), the `seen` ring's next place (with `*` when the agent is looking at the post it
saw last, `^n` when at another), then each of the last transitions as `<round><trigger><from><to>` in letters
(TRIGGER, STATE), each topic the agent is curious about as `topic:pull`, and `=<state><rounds>` where a state does
not follow from the transitions (never in a played run; kept so that any simulation is stored exactly).

The decision log is stored compactly too (`compact_log`, `expand_log`): a row per decision of the agent's place,
the transition's letters and the posts it touched, the words and reasons being in the posts and the event's
choices already. `expand_log` gives back every line of the seed's log exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from . import rhythm
from .config import SocialFeedScenario, generated_identity
from .entities import (
    HISTORY,
    AgentState,
    CheckpointData,
    EngagementMetrics,
    Post,
    RoundResult,
    SocialAgent,
    Tendencies,
)
from .rounds import TABLE_REASON, Simulation

S = AgentState
STATE = {S.IDLE: "I", S.SCROLLING: "S", S.EVALUATING: "E", S.COMPOSING: "C", S.ENGAGING_LIKE: "L",
         S.ENGAGING_REPLY: "P", S.ENGAGING_RESHARE: "H", S.RESTING: "R"}  # fmt: skip
TRIGGER = {"start_browsing": "s", "sees_post": "p", "feed_empty": "e", "tires": "t", "decides": "d",
           "finishes_composing": "c", "finishes_engaging": "f", "rested": "r", "timeout": "o"}  # fmt: skip
STATE_OF = {v: k for k, v in STATE.items()}
TRIGGER_OF = {v: k for k, v in TRIGGER.items()}
ASKED, TABLE = "?", "!"  # a logged decision the reasoner made / the table's first target made

POST_ROW = ("author", "topics", "content", "round", "reply_to", "reshare_of", "likes", "reshares", "replies")
_TRANSITION = re.compile(r"^(-?\d+)([a-z])([A-Z])([A-Z])$")


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StoredSimulation(_Doc):
    """The simulation after the last committed round, as stored (the module's docstring says how)."""

    round_number: int = Field(ge=0)
    timestamp: str
    metrics: EngagementMetrics
    listed: list[tuple[str, str]]  # the scenario's listed agents (id, name), first; the generated ones follow
    tendencies: list[tuple[float, float, float, float]]  # like, reply, reshare, compose, by agent
    interests: list[str]  # by agent, space-separated
    agents: list[str]  # by agent, its line
    seen: list[list[int]]  # by agent, the ring of post numbers it looked at
    posts: list[list[Any]]  # [author, topics, content, round, reply_to, reshare_of, likes, reshares, replies]

    @model_validator(mode="after")
    def _shape(self) -> StoredSimulation:
        """The columns line up and every post is a whole row (cheap: the lines are read when the run is played)."""
        if len({len(self.tendencies), len(self.interests), len(self.agents), len(self.seen)}) != 1:
            raise ValueError("a stored simulation's agents do not line up")
        if len(self.listed) > len(self.agents) or any(len(row) != len(POST_ROW) for row in self.posts):
            raise ValueError("a stored simulation's listed agents or posts are malformed")
        return self


# --- numbers and ids -----------------------------------------------------------------------------------------


def _num(x: float) -> str:
    """Thousandths where exact (the run rounds attention and pulls to three places), else the float itself."""
    milli = round(x * 1000)
    return str(milli) if milli / 1000 == x else repr(float(x))


def _read_num(text: str) -> float:
    return float(text) if ("." in text or "e" in text) else int(text) / 1000


def post_number(post_id: str) -> int:
    if not (post_id[:1] == "p" and post_id[1:].isdigit()):
        raise ValueError(f"a post id is p<number>, not {post_id!r}")
    return int(post_id[1:])


def _pid(number: int | None) -> str | None:
    return None if number is None else f"p{number}"


# --- agents --------------------------------------------------------------------------------------------------


def _last(history: Sequence[tuple[int, str, str, str]]) -> tuple[int, str, str, str] | None:
    return max(history, key=lambda h: h[0]) if history else None


def _derived(history: Sequence[tuple[int, str, str, str]], round_number: int) -> tuple[AgentState, int, int]:
    """The state, rounds held and attention mark's round that the last transition implies."""
    last = _last(history)
    if last is None:
        return S.IDLE, round_number, 0
    return S(last[3]), round_number - 1 - last[0], last[0] + 1


def agent_line(seed: int, agent: SocialAgent, round_number: int) -> str:
    """`agent` before round `round_number` as its stored line."""
    state, held, mark_round = _derived(agent.history, round_number)
    if rhythm.recovered(seed, agent, round_number) == agent.energy:
        since, energy = agent.energy_mark
    else:  # a mark that does not give its attention (set by hand): marked now
        since, energy = round_number, agent.energy
    tokens = [_num(energy) + (f"@{since}" if since != mark_round else "")]
    order = agent.seen_in_order()
    looking = ""
    if agent.looking_at is not None:
        looking = "*" if order and agent.looking_at == order[-1] else f"^{post_number(agent.looking_at)}"
    tokens.append(f"{agent.seen_at}{looking}")
    tokens += [f"{r}{TRIGGER[t]}{STATE[S(a)]}{STATE[S(b)]}" for r, t, a, b in agent.history]
    tokens += [f"{topic}:{_num(pull)}" for topic, pull in agent.curious.items()]
    if (state, held) != (agent.state, agent.rounds_in_state):
        tokens.append(f"={STATE[agent.state]}{agent.rounds_in_state}")
    return " ".join(tokens)


def _read_line(agent: SocialAgent, line: str, seed: int, round_number: int) -> None:
    """Fill `agent`'s changing parts from its stored line (its `seen` ring is already in place)."""
    first, where, *rest = line.split(" ")
    energy, _, since = first.partition("@")
    override: tuple[AgentState, int] | None = None
    for token in rest:
        if token[0] == "=":
            override = (STATE_OF[token[1]], int(token[2:]))
        elif ":" in token:
            topic, _, pull = token.partition(":")
            agent.curious[topic] = _read_num(pull)
        else:
            m = _TRANSITION.match(token)
            if m is None:
                raise ValueError(f"not a stored agent's transition: {token!r}")
            r, t, a, b = m.groups()
            agent.history.append((int(r), TRIGGER_OF[t], STATE_OF[a].value, STATE_OF[b].value))
    if len(agent.history) > HISTORY:
        raise ValueError(f"more than {HISTORY} transitions stored for {agent.id}")
    state, held, mark_round = _derived(agent.history, round_number)
    agent.state, agent.rounds_in_state = override or (state, held)
    cursor = where.rstrip("*").split("^")[0]
    agent.seen_at = int(cursor)
    if where.endswith("*"):
        agent.looking_at = agent.seen_in_order()[-1]
    elif "^" in where:
        agent.looking_at = _pid(int(where.split("^")[1]))
    agent.energy_mark = (int(since) if since else mark_round, _read_num(energy))
    agent.energy = rhythm.recovered(seed, agent, round_number)


def load_agents(stored: StoredSimulation, seed: int) -> list[SocialAgent]:
    """The agents, as the run holds them before its next round."""
    rows = (
        stored.tendencies,
        stored.interests,
        stored.agents,
        stored.seen,
    )  # of one length (the model checks)
    agents = []
    for i, (tendencies, interests, line, seen) in enumerate(zip(*rows, strict=True)):
        who = stored.listed[i] if i < len(stored.listed) else generated_identity(i - len(stored.listed))
        agent = SocialAgent(id=who[0], name=who[1], interests=tuple(interests.split(" ")),
                            tendencies=Tendencies(*tendencies), seen=[f"p{n}" for n in seen])  # fmt: skip
        _read_line(agent, line, seed, stored.round_number)
        agents.append(agent)
    return agents


# --- posts ---------------------------------------------------------------------------------------------------


def post_row(post: Post) -> list[Any]:
    return [
        post.author, list(post.topics), post.content, post.round,
        None if post.reply_to is None else post_number(post.reply_to),
        None if post.reshare_of is None else post_number(post.reshare_of), post.likes, post.reshares, post.replies,
    ]  # fmt: skip


def post_from_row(number: int, row: Sequence[Any]) -> Post:
    author, topics, content, created, reply_to, reshare_of, likes, reshares, replies = row
    return Post(id=f"p{number}", author=author, topics=tuple(topics), content=content, round=created,
                reply_to=_pid(reply_to), reshare_of=_pid(reshare_of), likes=likes, reshares=reshares,
                replies=replies)  # fmt: skip


def post_dicts(stored: StoredSimulation) -> list[dict[str, Any]]:
    """Every post as the seed's checkpoint writes it."""
    return [post_from_row(n, row).as_dict() for n, row in enumerate(stored.posts, 1)]


# --- the whole simulation ------------------------------------------------------------------------------------


def save(sim: Simulation, *, timestamp: str, listed: int) -> StoredSimulation:
    """`sim` as stored; its first `listed` agents are the scenario's listed ones."""
    return _save(
        sim.seed, sim.round_number, sim.agents, list(sim.posts.values()), sim.metrics, timestamp, listed
    )


def _save(
    seed: int,
    round_number: int,
    people: Sequence[SocialAgent],
    posts: Sequence[Post],
    metrics: EngagementMetrics,
    timestamp: str,
    listed: int,
) -> StoredSimulation:
    for n, post in enumerate(posts, 1):
        if post.id != f"p{n}":
            raise ValueError(f"post {post.id} is not the {n}th post")
    for i, agent in enumerate(people[listed:]):
        if (agent.id, agent.name) != generated_identity(i):
            raise ValueError(f"agent {agent.id} is not the {i + 1}th generated agent")
    return StoredSimulation(
        round_number=round_number, timestamp=timestamp, metrics=metrics.model_copy(),
        listed=[(a.id, a.name) for a in people[:listed]],
        tendencies=[(a.tendencies.like, a.tendencies.reply, a.tendencies.reshare, a.tendencies.compose)
                    for a in people],
        interests=[" ".join(a.interests) for a in people],
        agents=[agent_line(seed, a, round_number) for a in people],
        seen=[[post_number(p) for p in a.seen] for a in people],
        posts=[post_row(p) for p in posts],
    )  # fmt: skip


def load(scenario: SocialFeedScenario, stored: StoredSimulation, *, seed: int) -> Simulation:
    """The stored simulation back as the one the run played, of `scenario`."""
    posts = {f"p{n}": post_from_row(n, row) for n, row in enumerate(stored.posts, 1)}
    return Simulation(scenario=scenario, seed=seed, agents=load_agents(stored, seed), posts=posts,
                      round_number=stored.round_number, metrics=stored.metrics.model_copy())  # fmt: skip


def checkpoint(stored: StoredSimulation, *, seed: int) -> CheckpointData:
    """The seed's CheckpointData of the stored simulation (what files, downloads and exports carry)."""
    agents = load_agents(stored, seed)
    distribution = dict.fromkeys((s.value for s in AgentState), 0)
    for a in agents:
        distribution[a.state.value] += 1
    return CheckpointData(
        round_number=stored.round_number, posts=post_dicts(stored), agents=[a.as_dict() for a in agents],
        metrics=stored.metrics.model_dump(), state_distribution=distribution, timestamp=stored.timestamp,
    )  # fmt: skip


def from_checkpoint(data: Mapping[str, Any], *, seed: int, generated: int) -> StoredSimulation:
    """A checkpoint of the seed's form (a run stored before this form, or a file) as stored; its last `generated`
    agents are generated ones."""
    cp = CheckpointData.model_validate(data)
    agents = [SocialAgent.from_dict(a, round_number=cp.round_number) for a in cp.agents]
    posts = [_post(d) for d in cp.posts]
    metrics = EngagementMetrics.model_validate(cp.metrics)
    return _save(seed, cp.round_number, agents, posts, metrics, cp.timestamp, len(agents) - generated)


def _post(d: Mapping[str, Any]) -> Post:
    return Post(**{**d, "topics": tuple(d["topics"])})


# --- the decision log ----------------------------------------------------------------------------------------


def compact_log(results: Iterable[RoundResult], agents: Sequence[SocialAgent]) -> list[dict[str, Any]]:
    """Each round's decisions as one entry: {"round": n, "decisions": rows}, a row being [the agent's place, its
    trigger, from and to in letters (and ASKED or TABLE when the choice was the reasoner's or the table's), the
    numbers of the posts it touched: the one engaged with, then the one written]."""
    place = {a.id: i for i, a in enumerate(agents)}
    out = []
    for r in results:
        rows: list[list[Any]] = []
        for d in r.decisions:
            code = TRIGGER[d.trigger] + STATE[d.from_state] + STATE[d.to_state]
            if d.reasoner_used:
                code += ASKED
            elif d.reason == TABLE_REASON:
                code += TABLE
            elif d.reason:
                raise ValueError(f"a reason without the reasoner: {d.reason!r}")
            row: list[Any] = [place[d.agent_id], code]
            action = d.action
            if action is not None and action.target_post_id is not None:
                row.append(post_number(action.target_post_id))
            if action is not None and action.new_post is not None:
                row.append(post_number(action.new_post["id"]))
            rows.append(row)
        if rows:  # a round nobody acted in logs nothing
            out.append({"round": r.round_number, "decisions": rows})
    return out


ACTION = {S.SCROLLING: "scroll", S.ENGAGING_LIKE: "like", S.ENGAGING_REPLY: "reply",
          S.ENGAGING_RESHARE: "reshare", S.COMPOSING: "compose"}  # fmt: skip


def expand_log(
    entries: Iterable[Mapping[str, Any]],
    *,
    ids: Sequence[str],
    posts: Sequence[Mapping[str, Any]],
    reasons: Mapping[tuple[int, str], str],
) -> list[dict[str, Any]]:
    """The seed's decision log (one dict a decision) from compact entries; `ids`: the agents' ids by place,
    `posts`: every post of the run (as the seed writes them), `reasons`: the reasoner's, by (round, agent id).
    An entry already in the seed's form (a run stored before the compact log) passes as it is."""
    out: list[dict[str, Any]] = []
    for entry in entries:
        if "decisions" not in entry:
            out.append(dict(entry))
            continue
        n = entry["round"]
        for place, code, *touched in entry["decisions"]:
            agent = ids[place]
            to = STATE_OF[code[2]]
            d: dict[str, Any] = {"round": n, "agent_id": agent, "trigger": TRIGGER_OF[code[0]],
                                 "from_state": STATE_OF[code[1]].value, "to_state": to.value}  # fmt: skip
            kind = ACTION.get(to)
            if kind is not None and (kind == "scroll" or touched):
                action: dict[str, Any] = {"action_type": kind}
                if kind in ("like", "reply", "reshare"):
                    action["target_post_id"] = f"p{touched[0]}"
                if kind in ("reply", "reshare", "compose"):
                    new = dict(posts[touched[-1] - 1]) | {"likes": 0, "reshares": 0, "replies": 0}
                    action["new_post"] = new
                    if kind != "compose":
                        action["content"] = new["content"]
                d["action"] = action
            flag = code[3:]
            d["reasoner_used"] = flag == ASKED
            d["reason"] = (
                reasons.get((n, agent), "") if flag == ASKED else TABLE_REASON if flag == TABLE else ""
            )
            out.append(d)
    return out
