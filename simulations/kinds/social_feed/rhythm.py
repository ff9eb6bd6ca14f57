"""Each agent's own rhythm (pure): when it is on the feed, how its attention tires and recovers, and how its
interests drift with what it reads. Everything is drawn from the run's seed and the agent's id, so a run replays
identically and a resumed run goes on as the uninterrupted one would.

Without this every agent entered the statechart in the same round and moved one state a round, so the whole town
liked, replied and composed in step on a three-round cycle. Here:

- an agent's day is a wave of its own period (`PERIOD`, in rounds) and phase: near its crest it is likely to act
  in a round, near its trough it mostly looks away (stays as it is);
- acting costs attention (`COST`, by the state entered); quiet rounds restore some at the agent's own pace and
  resting restores more; a scrolling agent whose attention falls under the guards' `tired` rests (the `tires`
  trigger) until it is back over `rested`;
- reading a post whose topics lie outside its interests pulls the agent toward them (`PULL`); a topic that has
  pulled it far enough joins its interests, and with `MAX_INTERESTS` already one of the old ones gives way.
"""

from __future__ import annotations

import math

from .entities import AgentState, Post, SocialAgent
from .statechart import unit

S = AgentState
PERIOD = (5.0, 15.0)  # an agent's day, in rounds: wide, so the town's days never fall into step
LOW = 0.15  # the chance of acting at the trough of an agent's day, with full attention
COST = {
    S.SCROLLING: 0.06, S.EVALUATING: 0.06, S.ENGAGING_LIKE: 0.08, S.ENGAGING_RESHARE: 0.14,
    S.ENGAGING_REPLY: 0.2, S.COMPOSING: 0.24,
}  # fmt: skip
PACE = (0.02, 0.06)  # attention a quiet round restores, by agent; resting restores four times as much
REST_GAIN = 4.0
PULL = 0.34  # how far one read post pulls an agent toward each of its topics outside the agent's interests
FADE = 0.9  # a pull not renewed fades by this factor each time the agent reads within its interests
MAX_INTERESTS = 3


def _own(seed: int, purpose: str, agent: SocialAgent) -> float:
    return unit(seed, purpose, agent.id)


def first_energy(seed: int, agent: SocialAgent) -> float:
    """The attention an agent starts the run with: staggered, so the town does not start in step."""
    return round(0.4 + 0.6 * _own(seed, "energy", agent), 3)


def attention(seed: int, agent: SocialAgent, round_number: int) -> float:
    """The chance the agent acts this round: its day's wave, scaled by the attention it has left."""
    low, high = PERIOD
    period = low + (high - low) * _own(seed, "period", agent)
    phase = period * _own(seed, "phase", agent)
    wave = 0.5 + 0.5 * math.sin(2 * math.pi * (round_number + phase) / period)
    return (LOW + (1 - LOW) * wave) * (0.5 + 0.5 * agent.energy)


def acts(seed: int, agent: SocialAgent, round_number: int) -> bool:
    """Whether the agent is on the feed this round (a seeded draw against `attention`)."""
    return unit(seed, "acts", round_number, agent.id) < attention(seed, agent, round_number)


def spend(agent: SocialAgent, state: AgentState, round_number: int) -> None:
    """Entering `state` in round `round_number` costs the agent its attention's price; from the next round on it
    recovers (the mark a stored run keeps)."""
    agent.energy = round(max(0.0, agent.energy - COST.get(state, 0.0)), 3)
    agent.energy_mark = (round_number + 1, agent.energy)


def _gain(seed: int, agent: SocialAgent) -> float:
    """The attention a quiet round restores: the agent's own pace, faster while it rests."""
    low, high = PACE
    return (low + (high - low) * _own(seed, "pace", agent)) * (REST_GAIN if agent.state is S.RESTING else 1.0)


def _step(energy: float, gain: float) -> float:
    return round(min(1.0, energy + gain), 3)


def recover(seed: int, agent: SocialAgent) -> None:
    """A round without acting: attention comes back at the agent's own pace, faster while it rests."""
    agent.energy = _step(agent.energy, _gain(seed, agent))


def recovered(seed: int, agent: SocialAgent, round_number: int) -> float:
    """The agent's attention before round `round_number`, from its mark: one `recover` a quiet round since (its
    state has not changed since the mark), so the very number a run that played those rounds holds."""
    since, energy = agent.energy_mark
    gain = _gain(seed, agent)
    for _ in range(round_number - since):
        if energy >= 1.0:  # full: it stays so
            break
        energy = _step(energy, gain)
    return energy


def read(seed: int, agent: SocialAgent, post: Post, round_number: int) -> None:
    """The agent reads `post`: its topics outside the agent's interests pull on it; enough pull makes one an
    interest (the agent's interests stay sorted, so agents with the same ones share a feed)."""
    outside = [t for t in post.topics if t not in agent.interests]
    if not outside:
        for topic in list(agent.curious):
            agent.curious[topic] = round(agent.curious[topic] * FADE, 3)
            if agent.curious[topic] < 0.05:
                del agent.curious[topic]
        return
    for topic in outside:
        agent.curious[topic] = round(agent.curious.get(topic, 0.0) + PULL / len(post.topics), 3)
    ready = sorted((t for t in outside if agent.curious[t] >= 1.0), key=lambda t: (-agent.curious[t], t))
    if not ready:
        return
    joining = ready[0]
    del agent.curious[joining]
    kept = list(agent.interests)
    if len(kept) >= MAX_INTERESTS:  # one old interest gives way, drawn from the seed
        kept.pop(int(unit(seed, "gives-way", round_number, agent.id) * len(kept)))
    agent.interests = tuple(sorted([*kept, joining]))
