"""What the offline writer makes of a whole run (offline.py, positions.py): replies answer the post they are on
(its topic and its stance, for or against, from the scenario's own lines), reshares pass on the original without
quoting a reshare inside a reshare, and no two posts of a run read the same — played round by round, and played
through the platform a block of rounds per committed step (replayed by the machine as it commits)."""

from __future__ import annotations

from collections import Counter

import pytest

from simulations.kinds import get_kind
from simulations.kinds.social_feed import rounds
from simulations.kinds.social_feed.config import (
    SCENARIO_ROOT,
    SimulationConfig,
    SocialFeedScenario,
    load_scenario,
)
from simulations.kinds.social_feed.entities import Post, post_from_dict
from simulations.kinds.social_feed.games import state_of
from simulations.kinds.social_feed.headless import play_headless
from simulations.kinds.social_feed.positions import Positions
from simulations.services.content.scenarios import store_scenario
from simulations.services.ledger.turns import create_game


@pytest.fixture(scope="module")
def town() -> SocialFeedScenario:
    s = load_scenario(SCENARIO_ROOT / "town-square.yaml")
    return s.model_copy(update={"config": SimulationConfig(max_rounds=30)})


@pytest.fixture(scope="module")
def run(town: SocialFeedScenario) -> dict[str, Post]:
    sim = rounds.start(town, seed=6, agents=600)
    rounds.run(sim)
    return sim.posts


def lines_of(scenario: SocialFeedScenario) -> dict[str, tuple[str, int]]:
    """Every line of the scenario's stances: (topic, stance) it belongs to."""
    out = {}
    for topic in scenario.topics:
        for k, stance in enumerate(topic.stances):
            for text in (stance.say, stance.agree, stance.disagree):
                if text:
                    out[text] = (topic.id, k)
    return out


def test_no_two_posts_of_a_run_read_the_same(run: dict[str, Post]) -> None:
    texts = Counter(p.content for p in run.values())
    assert len(run) > 300 and texts.most_common(1)[0][1] == 1, texts.most_common(3)


def test_reshares_pass_on_the_original_and_never_nest(town: SocialFeedScenario, run: dict[str, Post]) -> None:
    reshares = [p for p in run.values() if p.reshare_of]
    assert len(reshares) > 20
    openers = [*town.openers.reshare, *town.openers.reshare_against]
    for post in reshares:
        original = run[post.reshare_of or ""]
        assert original.reshare_of is None, (post.content, original.content)  # never a reshare of a reshare
        assert sum(post.content.count(o) for o in openers) == 1, (
            post.content
        )  # one opener, nothing quoted inside
        assert f"@{original.author}" in post.content and post.topics == original.topics
    assert not any("Worth reading: Worth reading" in p.content for p in run.values())
    credited = Counter(p.reshare_of or "" for p in reshares)
    assert all(
        run[pid].reshares == n for pid, n in credited.items()
    )  # the original counts every reshare of it


def test_replies_answer_the_topic_and_stance_of_their_parent(
    town: SocialFeedScenario, run: dict[str, Post]
) -> None:
    lines, positions = lines_of(town), Positions(town)
    replies = [p for p in run.values() if p.reply_to]
    assert len(replies) > 50
    answered = 0
    for reply in replies:
        parent = run[reply.reply_to or ""]
        assert reply.topics == parent.topics and reply.content.startswith(f"@{parent.author} ")
        carried = {where for text, where in lines.items() if text in reply.content}
        if carried:  # the line it carries is one for or against the parent's own stance, of no other topic
            at = positions.of(parent)
            assert carried == {(at.topic, at.stance)}, (reply.content, parent.content)
            answered += 1
    assert answered > len(replies) * 0.6  # most replies say more than "Agreed."
    openers = {*town.openers.agree, *town.openers.disagree}
    assert all(any(o in r.content for o in openers) for r in replies)


def test_the_initial_posts_are_read_as_the_stance_they_name(
    town: SocialFeedScenario, run: dict[str, Post]
) -> None:
    positions = Positions(town)
    for n, spec in enumerate(town.posts):
        at = positions.of(run[f"p{n + 1}"])
        assert (at.topic, at.stance + 1, at.side) == (spec.topics[0], spec.stance, "for")


@pytest.mark.django_db(transaction=True)
def test_a_run_played_through_the_platform_has_no_duplicate_or_nested_post() -> None:
    kind = get_kind("social_feed")
    [source] = kind.scenarios.read(SCENARIO_ROOT / "town-square.yaml")
    version = store_scenario(kind=kind, source=source, origin="tests")[0]
    options = {
        "agents": 120,
        "max_rounds": 16,
        "checkpoint_frequency": 4,
        "started_at": "2026-11-24T00:00:00+00:00",
    }
    game = play_headless(create_game(scenario_version=version, seed=3, options=options))
    posts = {d["id"]: post_from_dict(d) for d in state_of(game).simulation["posts"]}
    assert len({p.content for p in posts.values()}) == len(posts) > 40
    assert all(posts[p.reshare_of].reshare_of is None for p in posts.values() if p.reshare_of)
