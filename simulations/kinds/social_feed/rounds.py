"""A social-feed run, round by round (pure): seed 003's round flow — feed retrieval by interests, the decision
(trigger, statechart, the reasoner when guards leave several targets, the action), the state update (engagement
counts, new posts, metrics) and the decision log — with checkpoints that resume to the identical result.

A round is decided in three passes so that it costs little and can ask a model in parallel: every agent's trigger
and candidate targets are found against the feed as the round began (guards only: a dictionary lookup and a few
comparisons per agent); the ambiguous ones go to the reasoner in one batch (a real model answers them concurrently,
bounded; the offline reasoner draws from the seed); then the transitions and actions are applied in agent order.
Feeds are windows: each topic keeps its last `window` posts (and the town its last, for a hot feed), ordered by the
run's ranking (ranking.py), and agents with the same interests share one feed. Whether an agent acts in a round at
all, and how its attention and interests change, is its own rhythm (rhythm.py).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import offline, ranking, rhythm, statechart
from .config import SocialFeedScenario, build_agents, initial_posts
from .entities import (
    ActionResult,
    AgentState,
    Ambiguity,
    CheckpointData,
    DecisionResult,
    EngagementMetrics,
    Post,
    RoundResult,
    SimulationResult,
    SocialAgent,
    post_from_dict,
)

S = AgentState
TABLE_REASON = "first by the table (reasoner off)"  # an ambiguous choice settled without the reasoner


class Reasoner(Protocol):
    def decide(self, batch: Sequence[Ambiguity]) -> list[tuple[AgentState, str]]:
        """A target (one of the candidates) and a reason, for each ambiguity, in order."""
        ...


class Writer(Protocol):
    """Words for a new post; `taken` says whether a text is already in the run (a writer returns one that is not)."""

    def compose(
        self, agent: SocialAgent, inspired_by: Post | None, round_number: int, taken: Callable[[str], bool]
    ) -> tuple[str, tuple[str, ...]]: ...

    def reply(
        self, agent: SocialAgent, post: Post, round_number: int, taken: Callable[[str], bool]
    ) -> str: ...

    def reshare(
        self, agent: SocialAgent, post: Post, round_number: int, taken: Callable[[str], bool]
    ) -> str: ...


@dataclass
class Simulation:
    """The SimulationState of the seed: posts (by id, in creation order), agents, metrics, the round reached."""

    scenario: SocialFeedScenario
    seed: int
    agents: list[SocialAgent]
    posts: dict[str, Post]
    round_number: int = 0
    metrics: EngagementMetrics = field(default_factory=EngagementMetrics)
    windows: dict[str, deque[str]] = field(default_factory=dict)  # topic -> its latest post ids
    reasoner_calls: int = 0
    texts: set[str] = field(default_factory=set)  # every post's words: no two posts of a run read the same

    def taken(self, text: str) -> bool:
        return text in self.texts

    def original(self, post: Post) -> Post:
        """What a reshare passes on: the original post, however many reshares away (a reshare is never nested)."""
        while post.reshare_of is not None and post.reshare_of in self.posts:
            post = self.posts[post.reshare_of]
        return post

    def __post_init__(self) -> None:
        if not self.agents:
            raise ValueError("simulation requires at least one agent")
        if self.round_number < 0:
            raise ValueError("round_number must be >= 0")
        if not self.windows:
            self._index(self.posts.values())
        if not self.texts:
            self.texts = {p.content for p in self.posts.values()}

    def _index(self, posts: Iterable[Post]) -> None:
        size = self.scenario.guards.window
        for post in posts:
            for topic in (*post.topics, ranking.TOWN):  # each topic's latest, and the town's (a hot feed's)
                self.windows.setdefault(topic, deque(maxlen=size)).append(post.id)

    def distribution(self) -> dict[AgentState, int]:
        counts = dict.fromkeys(AgentState, 0)
        for agent in self.agents:
            counts[agent.state] += 1
        return counts


def start(scenario: SocialFeedScenario, *, seed: int, agents: int | None = None) -> Simulation:
    posts = {p.id: p for p in initial_posts(scenario)}
    people = build_agents(scenario, seed=seed, count=agents)
    for agent in people:  # staggered: the town does not open the feed in step
        agent.energy = rhythm.first_energy(seed, agent)
        agent.energy_mark = (0, agent.energy)
    return Simulation(scenario=scenario, seed=seed, agents=people, posts=posts)


def _feeds(sim: Simulation) -> dict[tuple[str, ...], list[Post]]:
    """One feed per set of interests, from the windows as the round begins, in the run's ranking (ranking.py)."""
    size = sim.scenario.guards.feed_size * 3  # spare, for the agent's own and already seen posts left out
    order = sim.scenario.config.ranking
    feeds: dict[tuple[str, ...], list[Post]] = {}
    for agent in sim.agents:
        if agent.interests in feeds:
            continue
        ids = {pid for topic in agent.interests for pid in sim.windows.get(topic, ())}
        if order == "hot":  # what catches fire anywhere in town reaches every feed
            ids.update(sim.windows.get(ranking.TOWN, ()))
        posts = (sim.posts[pid] for pid in ids)
        feeds[agent.interests] = ranking.rank(posts, order, agent.interests, sim.round_number)[:size]
    return feeds


def feed_for(sim: Simulation, agent: SocialAgent, feeds: dict[tuple[str, ...], list[Post]]) -> list[Post]:
    """The agent's view of its interests' feed: not its own posts, not what it has already looked at."""
    return [p for p in feeds[agent.interests] if p.author != agent.id and p.id not in agent.seen][
        : sim.scenario.guards.feed_size
    ]


def run_round(
    sim: Simulation,
    *,
    reasoner: Reasoner | None,
    writer: Writer,
    log: Callable[[dict[str, Any]], None] | None = None,
) -> RoundResult:
    began = time.perf_counter()
    n = sim.round_number
    guards = sim.scenario.guards
    feeds = _feeds(sim)
    plans: list[tuple[SocialAgent, str | None, list[AgentState], list[Post]]] = []
    ambiguous: list[Ambiguity] = []
    for agent in sim.agents:  # pass 1: guards only
        agent.tick()
        feed = feed_for(sim, agent, feeds)
        on_feed = rhythm.acts(sim.seed, agent, n)
        trigger = statechart.determine_trigger(agent, feed, guards, on_feed=on_feed)
        if trigger is None:
            plans.append((agent, None, [], feed))
            continue
        post = sim.posts.get(agent.looking_at or "") if agent.state is S.EVALUATING else None
        targets = statechart.fire(trigger, statechart.Context(agent, feed, post, guards))
        if len(targets) > 1 and post is not None:
            why = ranking.why(post, sim.scenario.config.ranking, agent.interests, n)
            ambiguous.append(Ambiguity(agent, post, tuple(targets), n, why))
        plans.append((agent, trigger, targets, feed))
    if ambiguous and reasoner is not None:  # pass 2: the reasoner, one batch for the round
        chosen = dict(zip((a.agent.id for a in ambiguous), reasoner.decide(ambiguous), strict=True))
        sim.reasoner_calls += len(ambiguous)
    else:  # no reasoner: the first target in table order
        chosen = {a.agent.id: (a.candidates[0], TABLE_REASON) for a in ambiguous}
    decisions = []
    for agent, trigger, targets, feed in plans:  # pass 3: transitions, actions, the state update, the log
        if trigger is None:  # off the feed (or resting) this round: its attention recovers
            rhythm.recover(sim.seed, agent)
            continue
        before = agent.state
        target, reason, used = targets[0], "", False
        if agent.id in chosen:
            target, reason = chosen[agent.id]
            used = reasoner is not None
            if target not in targets:
                raise ValueError(f"the reasoner chose {target} for {agent.id}, not one of {targets}")
        agent.transition_to(target, trigger, n)
        rhythm.spend(agent, target, n)
        action = _act(sim, agent, target, feed, writer)
        decision = DecisionResult(agent_id=agent.id, trigger=trigger, from_state=before, to_state=target,
                                  action=action, reasoner_used=used, reason=reason)  # fmt: skip
        decisions.append(decision)
        if log is not None:
            log({"round": n, **decision.model_dump(mode="json", exclude_none=True)})
    sim.round_number += 1
    return RoundResult(
        round_number=n, decisions=decisions, state_distribution=sim.distribution(),
        duration_ms=int((time.perf_counter() - began) * 1000), reasoner_calls=len(ambiguous) if reasoner else 0,
    )  # fmt: skip


def _act(
    sim: Simulation, agent: SocialAgent, state: AgentState, feed: list[Post], writer: Writer
) -> ActionResult | None:
    """The action entering `state` takes, applied to the simulation (counts, new posts, metrics)."""
    n, m = sim.round_number, sim.metrics
    if state is S.EVALUATING:  # looks at one post of its feed (seeded), remembered for the decision
        if feed:
            draw = statechart.unit(sim.seed, "look", n, agent.id)
            seen = feed[int(draw * draw * len(feed))]  # mostly near the top: the ranking decides what is seen
            agent.look_at(seen.id)
            rhythm.read(sim.seed, agent, seen, n)
        return None
    if state is S.SCROLLING:
        agent.looking_at = None
        return ActionResult(action_type="scroll")
    if state in (S.IDLE, S.RESTING):
        return None
    target = sim.posts.get(agent.looking_at or "")
    if state is S.ENGAGING_LIKE and target is not None:
        target.likes += 1
        m.total_likes += 1
        return ActionResult(action_type="like", target_post_id=target.id)
    if state is S.ENGAGING_REPLY and target is not None:
        text = writer.reply(agent, target, n, sim.taken)
        post = new_post(sim, agent.id, text, target.topics, reply_to=target.id)
        target.replies += 1
        m.total_replies += 1
        return ActionResult(
            action_type="reply", target_post_id=target.id, new_post=post.as_dict(), content=text
        )
    if state is S.ENGAGING_RESHARE and target is not None:
        target = sim.original(target)  # a reshare of a reshare passes on the original, credited with it
        text = writer.reshare(agent, target, n, sim.taken)
        post = new_post(sim, agent.id, text, target.topics, reshare_of=target.id)
        target.reshares += 1
        m.total_reshares += 1
        return ActionResult(
            action_type="reshare", target_post_id=target.id, new_post=post.as_dict(), content=text
        )
    if state is S.COMPOSING:
        text, topics = writer.compose(agent, target, n, sim.taken)
        post = new_post(sim, agent.id, text, topics)
        return ActionResult(action_type="compose", new_post=post.as_dict())
    raise AssertionError(f"{state} without the post it engages with")


def new_post(
    sim: Simulation,
    author: str,
    text: str,
    topics: tuple[str, ...],
    *,
    reply_to: str | None = None,
    reshare_of: str | None = None,
) -> Post:
    """A post by `author` (an agent's id, or the person's) in the round being played, in the feeds from now on."""
    post = Post(id=f"p{len(sim.posts) + 1}", author=author, topics=topics, content=text, round=sim.round_number,
                reply_to=reply_to, reshare_of=reshare_of)  # fmt: skip
    sim.posts[post.id] = post
    sim.texts.add(text)
    sim._index([post])
    sim.metrics.posts_created += 1
    return post


def run(
    sim: Simulation,
    *,
    rounds: int | None = None,
    reasoner: Reasoner | None = None,
    writer: Writer | None = None,
    log: Callable[[dict[str, Any]], None] | None = None,
    on_round: Callable[[Simulation, RoundResult], None] | None = None,
    timestamp: Callable[[], str] | None = None,
) -> SimulationResult:
    """Rounds until `max_rounds` (or `rounds` more). `on_round` sees each round's result. With the config's
    `checkpoint_dir`, a checkpoint file every `checkpoint_frequency` rounds and after the last; with `log_file` (and
    `log_decisions`), every decision appended to it as a JSON line."""
    from . import files

    began = time.perf_counter()
    config = sim.scenario.config
    writer = writer or offline.OfflineWriter(sim.scenario, sim.seed)
    if reasoner is None and config.reasoner_enabled:
        reasoner = offline.OfflineReasoner(sim.seed, topics=offline.topic_names(sim.scenario))
    end = config.max_rounds if rounds is None else min(sim.round_number + rounds, config.max_rounds)
    path: str | None = None
    stamp = timestamp or (lambda: time.strftime("%Y-%m-%dT%H:%M:%S"))
    while sim.round_number < end:
        decisions: list[dict[str, Any]] = []
        result = run_round(sim, reasoner=reasoner, writer=writer, log=_tee(decisions, log))
        if config.log_decisions and config.log_file:
            files.append_decisions(config.log_file, decisions)
        due = sim.round_number % config.checkpoint_frequency == 0 or sim.round_number == end
        if config.checkpoint_dir and due:
            data = checkpoint(sim, timestamp=stamp()).model_dump(mode="json")
            path = files.write_checkpoint(config.checkpoint_dir, f"round-{sim.round_number:05d}", data)
        if on_round is not None:
            on_round(sim, result)
    return SimulationResult(
        total_rounds=sim.round_number, final_metrics=sim.metrics.model_copy(),
        final_state_distribution=sim.distribution(), total_duration_ms=int((time.perf_counter() - began) * 1000),
        checkpoint_path=path,
    )  # fmt: skip


def _tee(
    into: list[dict[str, Any]], log: Callable[[dict[str, Any]], None] | None
) -> Callable[[dict[str, Any]], None]:
    def both(d: dict[str, Any]) -> None:
        into.append(d)
        if log is not None:
            log(d)

    return both


# --- checkpoints ------------------------------------------------------------------------------------------------


def checkpoint(sim: Simulation, *, timestamp: str) -> CheckpointData:
    return CheckpointData(
        round_number=sim.round_number, posts=[p.as_dict() for p in sim.posts.values()],
        agents=[a.as_dict() for a in sim.agents], metrics=sim.metrics.model_dump(),
        state_distribution={s.value: c for s, c in sim.distribution().items()}, timestamp=timestamp,
    )  # fmt: skip


def restore(scenario: SocialFeedScenario, data: dict[str, Any], *, seed: int) -> Simulation:
    """A checkpoint back as a simulation (raises ValueError "unsupported checkpoint version" for another format)."""
    cp = CheckpointData.model_validate(data)
    posts = {d["id"]: post_from_dict(d) for d in cp.posts}
    sim = Simulation(
        scenario=scenario, seed=seed, agents=[SocialAgent.from_dict(a, round_number=cp.round_number) for a in cp.agents], posts=posts,
        round_number=cp.round_number, metrics=EngagementMetrics.model_validate(cp.metrics),
    )  # fmt: skip
    return sim
