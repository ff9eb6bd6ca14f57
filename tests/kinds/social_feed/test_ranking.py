"""The feed ranking a run is set up with (ranking.py): each orders a feed as the guide says; a hot feed reaches
beyond the agent's topics; the set-up form offers the rankings and the run's configuration keeps the choice; and
the reasoner's reasons cite what the agent saw — the post's author and topic and why the feed showed it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from simulations.kinds import get_kind
from simulations.kinds.social_feed import ranking, rounds
from simulations.kinds.social_feed.config import (
    SCENARIO_ROOT,
    SimulationConfig,
    SocialFeedScenario,
    load_scenario,
)
from simulations.kinds.social_feed.entities import Post
from simulations.kinds.social_feed.games import state_of
from simulations.kinds.social_feed.headless import play_headless
from simulations.models import Game, ScenarioVersion
from simulations.services.content.scenarios import store_scenario


def post(
    pid: int, round_: int, topics: tuple[str, ...] = ("transit",), likes: int = 0, reshares: int = 0
) -> Post:
    return Post(id=f"p{pid}", author="x", topics=topics, content=f"post {pid}", round=round_, likes=likes,
                reshares=reshares)  # fmt: skip


def ids(posts: list[Post]) -> list[str]:
    return [p.id for p in posts]


def test_chronological_puts_the_newest_first_by_creation_not_by_the_ids_spelling() -> None:
    feed = [post(9, 3), post(10, 3, likes=50), post(2, 0), post(11, 4)]
    assert ids(ranking.rank(feed, "chronological", ("transit",), 5)) == ["p11", "p10", "p9", "p2"]


def test_hot_weighs_engagement_against_age() -> None:
    fresh, engaged, old_star = post(20, 9), post(12, 5, likes=10), post(1, 0, likes=30)
    # At round 10 the old post's 30 likes still outweigh its age; the fresh one has nothing yet.
    assert ids(ranking.rank([fresh, engaged, old_star], "hot", ("transit",), 10)) == ["p1", "p12", "p20"]
    # Thirty rounds on, a post with less engagement but younger overtakes it: the score decays with time.
    younger = post(40, 35, likes=5)
    assert ids(ranking.rank([old_star, younger], "hot", ("transit",), 40)) == ["p40", "p1"]
    # A reshare weighs more than a like.
    assert ids(ranking.rank([post(5, 1, likes=2), post(4, 1, reshares=1)], "hot", (), 2)) == ["p4", "p5"]


def test_interest_match_puts_the_posts_of_the_agents_topics_first_then_the_newest() -> None:
    feed = [post(30, 9, ("transit", "parks")), post(3, 1, ("transit",)), post(31, 9, ("parks",)), post(4, 2)]
    assert ids(ranking.rank(feed, "interest", ("transit",), 10)) == ["p4", "p3", "p30", "p31"]


@pytest.fixture(scope="module")
def town() -> SocialFeedScenario:
    return load_scenario(SCENARIO_ROOT / "town-square.yaml")


def played(town: SocialFeedScenario, order: str, rounds_: int = 14, agents: int = 150) -> rounds.Simulation:
    scenario = town.model_copy(update={"config": SimulationConfig(max_rounds=rounds_, ranking=order)})
    sim = rounds.start(scenario, seed=4, agents=agents)
    rounds.run(sim)
    return sim


@pytest.mark.parametrize("order", ranking.RANKINGS)
def test_every_feed_of_a_run_is_in_its_ranking(town: SocialFeedScenario, order: ranking.Ranking) -> None:
    sim = played(town, order)
    feeds = rounds._feeds(sim)
    now = sim.round_number
    for interests, feed in feeds.items():
        assert feed
        if order == "chronological":
            keys: list[float] = [ranking.order(p) for p in feed]
        elif order == "hot":
            keys = [ranking.hot(p, now) for p in feed]
        else:
            keys = [ranking.match(p, interests) for p in feed]
        assert keys == sorted(keys, reverse=True), (order, interests)
        outside = [p for p in feed if not set(p.topics) & set(interests)]
        assert not outside or order == "hot"  # only a hot feed shows what catches fire elsewhere


def test_the_rankings_play_different_runs(town: SocialFeedScenario) -> None:
    runs = {order: [p.content for p in played(town, order).posts.values()] for order in ranking.RANKINGS}
    assert len({tuple(texts) for texts in runs.values()}) == 3


def test_the_reasoners_reasons_cite_the_post_seen_and_why_it_ranked(town: SocialFeedScenario) -> None:
    for order, marker in (("hot", "hot"), ("chronological", "new "), ("interest", "matches")):
        scenario = town.model_copy(update={"config": SimulationConfig(max_rounds=12, ranking=order)})
        sim = rounds.start(scenario, seed=2, agents=80)
        log: list[dict[str, object]] = []
        rounds.run(sim, log=log.append)
        cited = 0
        for d in log:
            action = d.get("action")
            if not d["reasoner_used"] or not isinstance(action, dict) or "target_post_id" not in action:
                continue
            if (
                action["action_type"] == "reshare"
            ):  # it targets the original, the reason names the post it saw
                continue
            seen = sim.posts[action["target_post_id"]]
            reason = str(d["reason"])
            names = [town.topic(t).name.lower() for t in seen.topics]
            assert reason.startswith(f"Saw @{seen.author} on ") and all(n in reason for n in names), reason
            assert marker in reason and " over " not in reason, reason
            cited += 1
        assert cited > 5, order


@pytest.mark.django_db(transaction=True)
def test_the_set_up_form_offers_the_rankings_and_the_run_keeps_the_choice() -> None:
    kind = get_kind("social_feed")
    [source] = kind.scenarios.read(SCENARIO_ROOT / "town-square.yaml")
    version: ScenarioVersion = store_scenario(kind=kind, source=source, origin="tests")[0]
    client = Client()
    client.force_login(User.objects.create_user("teacher", password="a-long-test-passphrase-42"))
    form = client.get(f"/social_feed/new/{version.pk}/").content.decode()
    assert "Feed ranking" in form
    for order in ranking.RANKINGS:
        assert f'value="{order}"' in form and ranking.WORDS[order] in form
    fields = {
        "agents": 80,  # the form's run draws its own seed: enough agents and rounds that the reasoner is asked
        "max_rounds": 8,
        "checkpoint_frequency": 4,
        "reasoner_enabled": "on",
        "ranking": "hot",
    }
    assert client.post(f"/social_feed/new/{version.pk}/", fields).status_code == 302
    game = Game.objects.get()
    assert state_of(game).config.ranking == "hot" and game.state["config"]["ranking"] == "hot"
    reasons = [c["reason"] for e in play_headless(game).events.filter(name="ROUNDS_PLAYED")
               for c in e.payload["choices"]]  # fmt: skip
    assert reasons and all("hot" in r for r in reasons)
    bad = client.post(f"/social_feed/new/{version.pk}/", fields | {"ranking": "loudest"})
    assert bad.status_code == 400 and Game.objects.count() == 1
