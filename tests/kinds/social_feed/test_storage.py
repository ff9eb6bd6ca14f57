"""What a stored social-feed run keeps (issue #68): it grows with what happened, not with rounds × population.

Runs played the way the platform plays them (machine.start, then a ROUNDS_PLAYED a block carrying the offline
reasoner's choices, replayed by the machine), each checkpoint's changes taken by the platform's own diff
(services/ledger/checkpoints.changes_between), as the ledger stores them between keyframes:

- an agent who did nothing in a round stores nothing: the changes touch exactly the agents who made a decision;
- a round in which nobody acted stores its summary for the charts and nothing else;
- the bytes stored per decision are about the same in a town four times the size;
- the compact decision log reads back as the seed's log, line for line, the reasoner on or off;
- a run stored before the compact form (schema 1) is read and goes on to the run uninterrupted; a malformed one
  is refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from simulations.engine.errors import ResumeError
from simulations.kinds.social_feed import machine, stored
from simulations.kinds.social_feed.config import SCENARIO_ROOT, SocialFeedScenario, load_scenario
from simulations.kinds.social_feed.offline import OfflineReasoner, topic_names
from simulations.kinds.social_feed.turns import Recording
from simulations.services.ledger.checkpoints import changes_between

AT = "2026-12-07T12:00:00+00:00"


@pytest.fixture(scope="module")
def town() -> SocialFeedScenario:
    return load_scenario(SCENARIO_ROOT / "town-square.yaml")


def size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


@dataclass
class Block:
    before: dict[str, Any]  # the stored state before the block and after it
    after: dict[str, Any]
    logged: list[dict[str, Any]]  # the engine's own decision log of the block (the driver's pass)
    stored_log: list[dict[str, Any]]  # the event's compact log
    payload: dict[str, Any]


@dataclass
class Run:
    state: machine.RunState
    blocks: list[Block] = field(default_factory=list)

    @property
    def decisions(self) -> int:
        return sum(len(b.logged) for b in self.blocks)

    @property
    def changes(self) -> int:
        return sum(size(changes_between(b.before, b.after)) for b in self.blocks)


def play(scenario: SocialFeedScenario, agents: int, rounds: int, *, every: int = 1, seed: int = 3,
         reasoner: bool = True, state: machine.RunState | None = None) -> Run:  # fmt: skip
    """A run to its end as the platform plays it (from `state` when given)."""
    config = machine.RunConfig(agents=agents, max_rounds=rounds, checkpoint_frequency=every,
                               reasoner_enabled=reasoner)  # fmt: skip
    if state is None:
        state = machine.start(scenario, seed=seed, config=config, timestamp=AT).state
    run = Run(state)
    while run.state.status is not machine.Status.FINISHED:
        st = run.state
        recording = Recording(OfflineReasoner(st.seed, topics=topic_names(scenario)))
        _, _, log = machine.play(scenario, st, machine.block_size(st), recording if reasoner else None)
        payload = {"rounds": machine.block_size(st), "at": AT,
                   "choices": [c.model_dump(mode="json") for c in recording.choices]}  # fmt: skip
        out = machine.apply(scenario, st, machine.Event.ROUNDS_PLAYED, payload)
        before, after = st.model_dump(mode="json"), out.state.model_dump(mode="json")
        run.blocks.append(Block(before, after, log, out.decisions, payload))
        run.state = out.state
    return run


def touched_agents(ops: list[list[Any]]) -> set[int]:
    """The agents (by place) whose stored parts an operation sets."""
    return {op[1][2] for op in ops if op[1][:1] == ["sim"] and op[1][1] in ("agents", "seen", "interests")}


def test_an_agent_who_did_nothing_stores_nothing(town: SocialFeedScenario) -> None:
    run = play(town, agents=300, rounds=12)
    place = {agent_id: i for i, agent_id in enumerate(agent for agent, _ in run.state.people())}
    for block in run.blocks:
        acted = {place[d["agent_id"]] for d in block.logged}
        assert 0 < len(acted) < 306  # some of the town acts in a round, never all of it
        assert touched_agents(changes_between(block.before, block.after)) == acted


def test_a_round_nobody_acts_in_stores_only_its_summary(town: SocialFeedScenario) -> None:
    pair = town.model_copy(update={"agents": town.agents[:2]})  # two residents: often neither is on the feed
    run = play(pair, agents=0, rounds=30)
    quiet = [b for b in run.blocks if not b.logged]
    assert len(quiet) >= 3
    for block in quiet:
        ops = changes_between(block.before, block.after)
        summary = block.after["history"][-1]
        assert {tuple(op[1]) for op in ops} == {("sim", "round_number"), ("history",), ("event_seq",)}
        assert size(ops) < size(summary) + 100 and block.stored_log == []
    extra: dict[int, list[int]] = {}  # bytes beyond the round's summary, by the decisions made in the round
    for block in run.blocks:
        beyond = size(changes_between(block.before, block.after)) - size(block.after["history"][-1])
        extra.setdefault(len(block.logged), []).append(beyond)
    mean = {n: sum(v) / len(v) for n, v in extra.items()}
    assert mean[0] < 100 < mean[1] < mean[2], mean


def test_the_bytes_stored_per_decision_do_not_grow_with_the_town(town: SocialFeedScenario) -> None:
    small, large = play(town, agents=100, rounds=12), play(town, agents=400, rounds=12)
    assert large.decisions > 3 * small.decisions
    per_small, per_large = small.changes / small.decisions, large.changes / large.decisions
    assert per_large < 1.15 * per_small and per_large < 120, (per_small, per_large)


@pytest.mark.parametrize("reasoner", [True, False])
def test_the_stored_log_reads_back_as_the_seeds_log(town: SocialFeedScenario, reasoner: bool) -> None:
    run = play(town, agents=60, rounds=9, every=3, reasoner=reasoner)
    st = run.state
    flags = set()
    for block in run.blocks:
        reasons = {(c["round"], c["agent"]): c["reason"] for c in block.payload["choices"]}
        back = stored.expand_log(
            block.stored_log, ids=[agent for agent, _ in st.people()], posts=st.posts(), reasons=reasons
        )
        assert back == block.logged
        flags |= {row[1][3:] for entry in block.stored_log for row in entry["decisions"]}
    assert flags == ({"", stored.ASKED} if reasoner else {"", stored.TABLE})  # ambiguous choices were made
    compact = sum(size(b.stored_log) for b in run.blocks)
    assert compact < sum(size(b.logged) for b in run.blocks) / 4


def test_a_run_stored_before_the_compact_form_goes_on_as_the_run_uninterrupted(
    town: SocialFeedScenario,
) -> None:
    whole = play(town, agents=40, rounds=10, every=2, seed=11)
    halfway = whole.blocks[2].before  # after 4 rounds
    st = machine.restore(halfway)
    old = {k: v for k, v in halfway.items() if k != "sim"} | {
        "schema_version": 1,
        "simulation": st.simulation,
    }
    resumed = play(town, agents=40, rounds=10, every=2, state=machine.restore(json.loads(json.dumps(old))))
    assert resumed.state.simulation == whole.state.simulation
    assert resumed.state.history == whole.state.history
    assert [b.logged for b in resumed.blocks] == [b.logged for b in whole.blocks[2:]]


def test_a_malformed_or_unknown_stored_run_is_refused(town: SocialFeedScenario) -> None:
    good = play(town, agents=5, rounds=2).blocks[-1].after
    assert machine.restore(good).round_number == 2
    short = json.loads(json.dumps(good))
    short["sim"]["seen"].pop()  # an agent's column missing
    torn = json.loads(json.dumps(good))
    torn["sim"]["posts"][0] = torn["sim"]["posts"][0][:5]
    for bad in (short, torn, good | {"schema_version": 3}):
        with pytest.raises(ResumeError):
            machine.restore(bad)
