"""Agents with their own rhythm (rhythm.py), read from whole offline runs: the town's activity round by round
neither repeats on the three-round cycle of agents moving in step nor dies out; agents tire, rest and come back;
interests drift with what is read; and the same seed replays the same run while another seed plays another."""

from __future__ import annotations

import json
import statistics
from collections import Counter

import pytest

from simulations.kinds.social_feed import rhythm, rounds
from simulations.kinds.social_feed.config import (
    SCENARIO_ROOT,
    SimulationConfig,
    SocialFeedScenario,
    load_scenario,
)
from simulations.kinds.social_feed.entities import AgentState

WARM_UP = 6  # rounds for the town to open the feed


@pytest.fixture(scope="module")
def town() -> SocialFeedScenario:
    s = load_scenario(SCENARIO_ROOT / "town-square.yaml")
    return s.model_copy(update={"config": SimulationConfig(max_rounds=45)})


def activity(
    scenario: SocialFeedScenario, seed: int, agents: int
) -> tuple[list[int], list[dict[str, object]]]:
    """Likes, replies, reshares and posts written in each round of a whole run, and its decision log."""
    sim = rounds.start(scenario, seed=seed, agents=agents)
    log: list[dict[str, object]] = []
    per_round: list[int] = []

    def count(_: rounds.Simulation, result: rounds.RoundResult) -> None:
        kinds = Counter(d.action.action_type for d in result.decisions if d.action is not None)
        per_round.append(kinds["like"] + kinds["reply"] + kinds["reshare"] + kinds["compose"])

    rounds.run(sim, log=log.append, on_round=count)
    return per_round, log


def autocorrelation(xs: list[int], lag: int) -> float:
    mean = statistics.fmean(xs)
    dev = [x - mean for x in xs]
    var = sum(d * d for d in dev)
    return sum(dev[i] * dev[i + lag] for i in range(len(xs) - lag)) / var if var else 1.0


@pytest.mark.parametrize("seed", [1, 5])
def test_the_towns_activity_has_no_three_round_cycle_and_does_not_die_out(
    town: SocialFeedScenario, seed: int
) -> None:
    per_round, _ = activity(town, seed, 400)
    settled = per_round[WARM_UP:]
    assert min(settled) > 0, settled  # somebody acts every round
    third = len(settled) // 3
    assert statistics.fmean(settled[-third:]) >= 0.4 * statistics.fmean(settled[:third]), settled
    assert statistics.pstdev(settled) > 0  # it varies
    # In step, round n looked like round n+3 (190/46/11, 197/51/14, ...): a lag-3 autocorrelation near 1.
    assert autocorrelation(settled, 3) < 0.5, (autocorrelation(settled, 3), settled)
    for lag in (1, 2):  # and no shorter cycle either
        assert abs(autocorrelation(settled, lag)) < 0.6, (lag, settled)


def test_agents_tire_rest_and_come_back(town: SocialFeedScenario) -> None:
    _, log = activity(town, 3, 200)
    triggers = Counter(str(d["trigger"]) for d in log)
    assert triggers["tires"] > 0 and triggers["rested"] > 0
    resting = Counter(int(str(d["round"])) for d in log if d["to_state"] == AgentState.RESTING.value)
    assert len(resting) > 10  # rests are spread over the run, not one wave


def test_interests_drift_with_what_agents_read(town: SocialFeedScenario) -> None:
    sim = rounds.start(town, seed=2, agents=200)
    before = {a.id: a.interests for a in sim.agents}
    rounds.run(sim)
    moved = [a for a in sim.agents if a.interests != before[a.id]]
    assert moved and len(moved) < len(sim.agents) // 2  # some drift, most keep theirs
    assert all(
        len(a.interests) <= rhythm.MAX_INTERESTS and list(a.interests) == sorted(a.interests) for a in moved
    )


def test_the_same_seed_replays_the_same_run_and_another_seed_another(town: SocialFeedScenario) -> None:
    first, log1 = activity(town, 8, 150)
    again, log2 = activity(town, 8, 150)
    other, _ = activity(town, 9, 150)
    assert first == again and json.dumps(log1) == json.dumps(log2)
    assert first != other
