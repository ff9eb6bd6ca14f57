"""Seed 003's social-feed engine (pure): every row of the trigger table with its guard holding and failing, the
ActionResult invariants, the config's messages, the checkpoint's version check, the reasoner consulted only when
guards leave several targets, and resume from a checkpoint after any round equal to the run uninterrupted."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from simulations.kinds.social_feed import rounds, statechart
from simulations.kinds.social_feed.config import (
    SCENARIO_ROOT,
    Guards,
    SimulationConfig,
    SocialFeedScenario,
    load_scenario,
)
from simulations.kinds.social_feed.entities import (
    ActionResult,
    AgentState,
    CheckpointData,
    Post,
    SocialAgent,
    Tendencies,
)

S = AgentState
G = Guards()


def agent(state: AgentState = S.IDLE, *, like: float = 0.0, reply: float = 0.0, reshare: float = 0.0,
          compose: float = 0.0, interests: tuple[str, ...] = ("transit",), waited: int = 0) -> SocialAgent:  # fmt: skip
    a = SocialAgent(
        id="a1", name="A", interests=interests, tendencies=Tendencies(like, reply, reshare, compose)
    )
    a.state, a.rounds_in_state = state, waited
    return a


def post(topics: tuple[str, ...] = ("transit",), engagement: int = 0) -> Post:
    return Post(id="p1", author="b", topics=topics, content="x", round=0, likes=engagement)


def fire(
    a: SocialAgent, trigger: str, *, feed: list[Post] | None = None, p: Post | None = None
) -> list[AgentState]:
    return statechart.fire(trigger, statechart.Context(a, feed or [], p, G))


# --- every row of the trigger table ---------------------------------------------------------------------------


def test_idle_starts_browsing_always() -> None:
    assert fire(agent(S.IDLE), "start_browsing") == [S.SCROLLING]


def test_scrolling_sees_a_post_only_with_posts_and_rests_only_without() -> None:
    assert fire(agent(S.SCROLLING), "sees_post", feed=[post()]) == [S.EVALUATING]
    assert fire(agent(S.SCROLLING), "feed_empty") == [S.RESTING]
    with pytest.raises(statechart.NoTransition):
        fire(agent(S.SCROLLING), "sees_post")
    with pytest.raises(statechart.NoTransition):
        fire(agent(S.SCROLLING), "feed_empty", feed=[post()])


@pytest.mark.parametrize(
    ("tendencies", "p", "expected"),
    [
        ({"compose": 0.9}, post(engagement=G.high_engagement), [S.COMPOSING]),
        ({"compose": 0.9}, post(engagement=G.high_engagement - 1), [S.SCROLLING]),  # not engaged enough
        ({"like": 0.9}, post(), [S.ENGAGING_LIKE]),
        ({"like": 0.9}, post(topics=("parks",)), [S.SCROLLING]),  # not relevant to the agent
        ({"reply": 0.9}, post(), [S.ENGAGING_REPLY]),
        ({"reshare": 0.9}, post(engagement=1), [S.ENGAGING_RESHARE]),
        ({"reshare": 0.9}, post(engagement=0), [S.SCROLLING]),  # nobody touched it yet
        ({"like": 0.1, "reply": 0.2}, post(), [S.SCROLLING]),  # low engagement
        ({"like": 0.9, "reply": 0.9}, post(), [S.ENGAGING_LIKE, S.ENGAGING_REPLY]),  # ambiguous
    ],
)
def test_evaluating_decides_by_its_guards(
    tendencies: dict[str, Any], p: Post, expected: list[AgentState]
) -> None:
    assert fire(agent(S.EVALUATING, **tendencies), "decides", p=p) == expected


def test_composing_and_engaging_finish_back_to_scrolling_and_resting_returns_to_idle() -> None:
    assert fire(agent(S.COMPOSING), "finishes_composing") == [S.SCROLLING]
    for state in (S.ENGAGING_LIKE, S.ENGAGING_REPLY, S.ENGAGING_RESHARE):
        assert fire(agent(state), "finishes_engaging") == [S.SCROLLING]
    assert fire(agent(S.RESTING), "rested") == [S.IDLE]  # its attention is whole
    with pytest.raises(statechart.NoTransition):
        fire(agent(S.IDLE), "finishes_engaging")


@pytest.mark.parametrize("state", list(AgentState))
def test_timeout_from_any_state_once_timed_out(state: AgentState) -> None:
    assert fire(agent(state, waited=G.timeout_rounds), "timeout") == [S.SCROLLING]
    with pytest.raises(statechart.NoTransition):
        fire(agent(state, waited=G.timeout_rounds - 1), "timeout")


def test_scrolling_tires_only_with_its_attention_spent_and_resting_ends_only_with_it_back() -> None:
    tired, fresh = agent(S.SCROLLING), agent(S.SCROLLING)
    tired.energy = G.tired - 0.01
    assert fire(tired, "tires") == [S.RESTING]
    with pytest.raises(statechart.NoTransition):
        fire(fresh, "tires")
    resting = agent(S.RESTING)
    resting.energy = G.rested - 0.01
    with pytest.raises(statechart.NoTransition):
        fire(resting, "rested")


def test_the_trigger_an_agent_meets() -> None:
    t = statechart.determine_trigger
    assert t(agent(S.SCROLLING), [post()], G) == "sees_post"
    assert t(agent(S.SCROLLING), [], G) == "feed_empty"
    assert t(agent(S.SCROLLING), [post()], G, on_feed=False) is None  # its rhythm has it off the feed
    spent = agent(S.SCROLLING)
    spent.energy = 0.0
    assert t(spent, [post()], G) == "tires"
    resting = agent(S.RESTING, waited=1)
    assert t(resting, [], G, on_feed=False) == "rested"  # attention back: it rests no longer
    resting.energy = G.rested / 2
    assert t(resting, [], G) is None
    assert t(agent(S.EVALUATING, waited=G.timeout_rounds), [], G) == "timeout"


# --- entities and config --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"action_type": "like"}, "target_post_id required"),
        ({"action_type": "reply", "new_post": {"id": "p2"}}, "target_post_id required"),
        ({"action_type": "reshare", "target_post_id": "p1"}, "new_post required"),
        ({"action_type": "compose"}, "new_post required"),
        ({"action_type": "scroll", "target_post_id": "p1"}, "a scroll carries no target"),
    ],
)
def test_action_result_invariants(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ActionResult.model_validate(fields)
    ActionResult(action_type="reply", target_post_id="p1", new_post={"id": "p2"}, content="yes")  # valid


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"max_rounds": 0}, "max_rounds must be >= 1"),
        ({"checkpoint_frequency": 0}, "checkpoint_frequency must be >= 1"),
    ],
)
def test_config_validation_messages(fields: dict[str, int], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        SimulationConfig.model_validate(fields)
    assert SimulationConfig().max_rounds == 50 and SimulationConfig().reasoner_enabled


def test_a_scenario_without_agents_is_refused() -> None:
    doc = load_scenario(SCENARIO_ROOT / "town-square.yaml").model_dump()
    doc |= {"agents": [], "population": None}
    with pytest.raises(ValidationError, match="simulation requires at least one agent"):
        SocialFeedScenario.model_validate(doc)


def test_a_checkpoint_of_another_version_is_refused() -> None:
    with pytest.raises(ValidationError, match="unsupported checkpoint version"):
        CheckpointData(version="0.9", round_number=0, posts=[], agents=[], metrics={}, state_distribution={},
                       timestamp="2026-01-01T00:00:00")  # fmt: skip


# --- whole runs ----------------------------------------------------------------------------------------------


@pytest.fixture
def small() -> SocialFeedScenario:
    s = load_scenario(SCENARIO_ROOT / "town-square.yaml")
    return s.model_copy(update={"config": SimulationConfig(max_rounds=12, checkpoint_frequency=1)})


def final(sim: rounds.Simulation) -> str:
    return json.dumps(rounds.checkpoint(sim, timestamp="-").model_dump(), sort_keys=True)


def test_the_reasoner_is_asked_only_when_guards_leave_several_targets(small: SocialFeedScenario) -> None:
    sim = rounds.start(small, seed=3, agents=40)
    log: list[dict[str, object]] = []
    rounds.run(sim, log=log.append)
    asked = [d for d in log if d["reasoner_used"]]
    assert asked and sim.reasoner_calls == len(asked)
    assert all(d["trigger"] == "decides" and d["reason"] for d in asked)
    assert all(not d["reasoner_used"] for d in log if d["trigger"] != "decides")
    actions = {d["action"]["action_type"] for d in log if "action" in d}  # type: ignore[index]
    assert {"like", "reply", "scroll", "compose"} <= actions


@pytest.mark.parametrize("stop", list(range(0, 12)))
def test_resume_from_a_checkpoint_after_any_round_equals_the_run_uninterrupted(
    small: SocialFeedScenario, stop: int
) -> None:
    whole = rounds.start(small, seed=7, agents=30)
    rounds.run(whole)
    part = rounds.start(small, seed=7, agents=30)
    rounds.run(part, rounds=stop)
    saved = json.loads(
        json.dumps(rounds.checkpoint(part, timestamp="t").model_dump())
    )  # through its file form
    resumed = rounds.restore(small, saved, seed=7)
    rounds.run(resumed)
    assert final(resumed) == final(whole)


def test_checkpoint_files_and_the_decision_log_when_the_config_names_them(
    small: SocialFeedScenario, tmp_path: Any
) -> None:
    config = SimulationConfig(max_rounds=7, checkpoint_frequency=3, checkpoint_dir=str(tmp_path / "cp"),
                              log_file=str(tmp_path / "log" / "decisions.jsonl"))  # fmt: skip
    sim = rounds.start(small.model_copy(update={"config": config}), seed=2, agents=10)
    result = rounds.run(sim)
    names = sorted(p.name for p in (tmp_path / "cp").iterdir())
    assert names == [
        "round-00003.json",
        "round-00006.json",
        "round-00007.json",
    ]  # every 3 rounds, and the last
    assert result.checkpoint_path and result.checkpoint_path.endswith("round-00007.json")
    restored = rounds.restore(small, json.loads((tmp_path / "cp" / "round-00007.json").read_text()), seed=2)
    assert final(restored) == final(sim)
    lines = (tmp_path / "log" / "decisions.jsonl").read_text().splitlines()
    assert lines and {json.loads(line)["round"] for line in lines} == set(range(7))
