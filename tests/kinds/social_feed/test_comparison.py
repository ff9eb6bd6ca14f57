"""Two towns side by side (twins.py, comparing.py): a run set up to compare with a second town plays both in the
same game, from the same seed and people, one setting apart; the person's posts go into both; a checkpoint restores
both; the set-up counts both against the limits; the results show both on the same scales with a written
comparison whose direction comes from the run's own figures."""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from simulations import faults
from simulations.kinds import get_kind
from simulations.kinds.social_feed import machine
from simulations.kinds.social_feed.config import SCENARIO_ROOT, load_scenario
from simulations.kinds.social_feed.entities import STUDENT, AgentState
from simulations.kinds.social_feed.estimate import run_estimate
from simulations.kinds.social_feed.games import state_of
from simulations.kinds.social_feed.headless import cli_options, play_headless
from simulations.kinds.social_feed.machine import Event, RunConfig, Status, town_state
from simulations.kinds.social_feed.twins import Compare, NotDifferent
from simulations.models import Game, ScenarioVersion
from simulations.services.files.export import export_game
from simulations.services.files.import_game import import_game
from simulations.services.ledger.resume import resume_game
from simulations.services.ledger.turns import create_game
from simulations.services.play.drive import drive_game
from tests.budget import set_school_limits, town_square
from tests.kinds.visible_text import names_in, visible

RUMOUR = "Heard the council will scrap the route 7 night bus next month to pay for the bus lanes."
HOT = {"setting": "ranking", "ranking": "hot"}
SMALL = {"agents": 120, "max_rounds": 14, "checkpoint_frequency": 2, "started_at": "2026-11-24T00:00:00+00:00",
         "compare": HOT}  # fmt: skip


def test_the_second_town_holds_the_same_people_one_setting_apart() -> None:
    """Engine only: the same seed builds the same agents in both towns; a population mix moves only the chosen
    tendency; a one-town run's stored state and start event read as before comparisons."""
    scenario = load_scenario(SCENARIO_ROOT / "town-square.yaml")
    ranked = machine.start(scenario, seed=3, timestamp="t", config=RunConfig(agents=40, max_rounds=4,
                           checkpoint_frequency=2, compare=Compare(setting="ranking", ranking="interest"))).state  # fmt: skip
    other = town_state(ranked)
    assert other.config.ranking == "interest" and ranked.config.ranking == "chronological"
    assert other.sim == ranked.sim  # before any round the two towns are one and the same
    mixed = machine.start(scenario, seed=3, timestamp="t", config=RunConfig(agents=40, max_rounds=4,
                          checkpoint_frequency=2, compare=Compare(setting="population", mix="sharing"))).state  # fmt: skip
    a, b = mixed.sim, town_state(mixed).sim
    assert (
        a.interests == b.interests
        and a.listed == b.listed
        and town_state(mixed).config.ranking == "chronological"
    )
    listed = len(a.listed)
    assert a.tendencies[:listed] == b.tendencies[:listed]  # the listed residents are the scenario's own
    for (like, reply, reshare, compose), (like2, reply2, reshare2, compose2) in zip(
        a.tendencies[listed:], b.tendencies[listed:], strict=True
    ):
        assert (like, reply, compose) == (like2, reply2, compose2) and reshare2 == pytest.approx(
            min(1.0, reshare + 0.3)
        )
    single = machine.start(scenario, seed=3, timestamp="t", config=RunConfig(agents=40, max_rounds=4,
                           checkpoint_frequency=2))  # fmt: skip
    assert "comparison" not in single.state.model_dump(mode="json") and "compare" not in single.payload
    assert cli_options(role=None, human=None, options={"compare": "hot"})["compare"] == HOT
    assert cli_options(role=None, human=None, options={"compare": "quiet"})["compare"] == {"setting": "population",
                                                                                        "mix": "quiet"}  # fmt: skip
    assert cli_options(role=None, human=None, options={"compare": "correction"})["compare"] == {
        "setting": "correction"
    }
    with pytest.raises(ValueError, match="Unknown comparison"):
        cli_options(role=None, human=None, options={"compare": "louder"})
    with pytest.raises(NotDifferent, match="rank its feeds differently"):
        machine.config_from_options(scenario, {"ranking": "hot", "compare": HOT})
    with pytest.raises(ValueError, match="generate some"):
        machine.config_from_options(
            scenario, {"agents": 0, "compare": {"setting": "population", "mix": "quiet"}}
        )


@pytest.fixture
def town() -> ScenarioVersion:
    return town_square()


@pytest.fixture
def owner() -> User:
    return User.objects.create_user("student", password="a-long-test-passphrase-42")


def client_for(user: User) -> Client:
    c = Client()
    c.force_login(user)
    return c


def write(client: Client, game: Game, text: str, into: str = "") -> int:
    game.refresh_from_db()
    fields = {"event": Event.POST_WRITTEN.value, "version": str(game.version), "text": text, "topic": "transit",
              "into": into}  # fmt: skip
    return client.post(f"/games/{game.pk}/move/", fields).status_code


def said_about(comparison: str, text: str) -> str:
    """The written comparison's sentence on one of the person's posts."""
    [sentence] = [
        s for s in re.split(r"(?<=\.) (?=[A-Z])", comparison) if s.startswith(f"Your post “{text[:30]}")
    ]
    return sentence


def direction(readers_a: int, readers_b: int) -> str:
    """What the comparison must say of a post read by so many agents in each town, worked out from the figures."""
    (big, more), (small, fewer) = sorted(((readers_a, "Town A"), (readers_b, "Town B")), reverse=True)
    if small:
        times = f"{big / small:.1f}×" if f"{big / small:.1f}" != "1.0" else "about"  # a tenth apart at least
        return f"reached {times} as many agents in {more} as in {fewer} ({big} against {small})"
    return f"and none in {fewer}"


def mine(state: machine.RunState) -> dict[str, Any]:
    [post] = [p for p in state.posts() if p["author"] == STUDENT]
    return post


@pytest.mark.django_db(transaction=True)
def test_the_same_post_spreads_differently_under_another_ranking_and_the_comparison_says_which_way(
    town: ScenarioVersion, owner: User
) -> None:
    game = create_game(scenario_version=town, seed=8, owner=owner, options=SMALL)
    client = client_for(owner)
    drive_game(game_id=game.pk, stream=False, max_steps=1)  # two rounds played in each town
    assert write(client, game, RUMOUR) == 302
    finished = play_headless(Game.objects.get(pk=game.pk))
    st = state_of(finished)
    a, b = st, town_state(st)
    assert st.status is Status.FINISHED and len(a.history) == len(b.history) == 14
    post_a, post_b = mine(a), mine(b)
    assert post_a["content"] == post_b["content"] == RUMOUR and post_a["round"] == post_b["round"] == 2
    assert st.comparison is not None
    readers_a, readers_b = (st.comparison.readers[0][post_a["id"]], st.comparison.readers[1][post_b["id"]])
    for town_run, post, readers in ((a, post_a, readers_a), (b, post_b, readers_b)):
        places = [place for place, _ in readers]
        assert len(places) == len(set(places))  # each reader once
        ids = [agent for agent, _ in town_run.people()]
        answered = {p["author"] for p in town_run.posts() if post["id"] in (p["reply_to"], p["reshare_of"])}
        assert answered <= {ids[place] for place in places}  # whoever answered or passed it on had read it
        assert len(readers) >= post["likes"]  # a like comes from someone who read it
    assert len(readers_a) != len(readers_b)  # the ranking alone made the difference
    html = client_for(owner).get(f"/games/{finished.pk}/review/").content.decode()
    comparison = visible(re.search(r'aria-labelledby="comparing-title".*?</section>', html, re.S).group(0))  # type: ignore[union-attr]
    assert direction(len(readers_a), len(readers_b)) in said_about(comparison, RUMOUR)
    engaged = [sum(getattr(t.history[-1], k) for k in ("likes", "replies", "reshares")) for t in (a, b)]
    leader, ratio = ("Town A" if engaged[0] > engaged[1] else "Town B"), f"{max(engaged) / min(engaged):.1f}×"
    if ratio == "1.0×":  # within a twentieth: no town is said to have engaged more
        assert "about as many likes, replies and reshares" in comparison
    else:
        assert f"{leader} gave {ratio} as many likes, replies and reshares" in comparison
    assert "Town A's feeds rank newest first; Town B's by engagement (hot)" in comparison
    assert not names_in(visible(html), [*AgentState, *Status, *Event])
    copy = import_game(
        data=json.loads(json.dumps(export_game(game=finished)))
    )  # the export replays both towns
    assert state_of(copy).comparison == st.comparison and state_of(copy).sim == st.sim
    # The CSV says which town each round's row is of.
    rows = list(
        csv.reader(
            io.StringIO(client.get(reverse("social_feed_rounds_csv", args=[game.pk])).content.decode())
        )
    )
    assert rows[0][:2] == ["Town", "Round"]
    assert [r[0] for r in rows[1:]] == ["Town A"] * 14 + ["Town B"] * 14
    assert [int(r[2]) for r in rows[1:15]] != [int(r[2]) for r in rows[15:]]  # each town's own likes


def charts(html: str) -> dict[str, list[tuple[str, list[str], list[str]]]]:
    """Each town's charts: (its kind, its x tick labels, its y tick labels)."""
    out: dict[str, list[tuple[str, list[str], list[str]]]] = {}
    for name, body in re.findall(r'data-town="(Town [AB])">(.*?)</section>', html, re.S):
        out[name] = [(kind, re.findall(r'class="tick x-tick"[^>]*>([^<]*)<', svg),
                      re.findall(r'class="tick y-tick"[^>]*>([^<]*)<', svg))
                     for kind, svg in re.findall(r'<svg class="feed-chart (\w+)"(.*?)</svg>', body, re.S)]  # fmt: skip
    return out


@pytest.mark.django_db(transaction=True)
def test_the_results_draw_both_towns_on_the_same_axes(town: ScenarioVersion, owner: User) -> None:
    game = play_headless(create_game(scenario_version=town, seed=5, owner=owner, options=SMALL))
    st = state_of(game)
    html = client_for(owner).get(f"/games/{game.pk}/review/").content.decode()
    drawn = charts(html)
    assert set(drawn) == {"Town A", "Town B"}
    assert (
        [k for k, _, _ in drawn["Town A"]]
        == [k for k, _, _ in drawn["Town B"]]
        == ["states", "engagement", "activity"]
    )
    assert (
        drawn["Town A"] == drawn["Town B"]
    )  # the same rounds along the bottom and the same scale up the side
    top = max(getattr(t.history[-1], k) for t in (st, town_state(st)) for k in ("likes", "replies", "reshares",
                                                                               "posts_created"))  # fmt: skip
    assert dict((k, y) for k, _, y in drawn["Town A"])["engagement"] == ["0", str(top)]
    assert len(set(re.findall(r'id="([^"]+)"', html))) == len(re.findall(r'id="([^"]+)"', html))  # ids unique
    live = client_for(owner).get(f"/games/{game.pk}/").content.decode()
    assert 'data-town="Town A"' in live and 'data-town="Town B"' in live


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("nth", [2, 4])
def test_a_comparison_interrupted_mid_run_resumes_both_towns_identically(
    town: ScenarioVersion, owner: User, nth: int
) -> None:
    def run(interrupt: bool) -> Game:
        game = create_game(scenario_version=town, seed=13, owner=owner, options=SMALL | {"max_rounds": 10})
        drive_game(game_id=game.pk, stream=False, max_steps=1)
        assert write(client_for(owner), game, RUMOUR) == 302
        if interrupt:
            faults.arm("before_model_call", nth, raise_instead=True)
            try:
                with pytest.raises(faults.InjectedFault):
                    play_headless(Game.objects.get(pk=game.pk))
            finally:
                faults.disarm()
            stopped, restored = resume_game(game_id=game.pk)  # from the latest checkpoint: both towns
            assert restored == state_of(stopped) and restored.comparison is not None
            assert restored.round_number == 2 * nth and len(restored.comparison.town.history) == 2 * nth
        return play_headless(Game.objects.get(pk=game.pk))

    whole, resumed = state_of(run(False)), state_of(run(True))
    assert resumed.comparison is not None and whole.comparison is not None
    # Both towns as the uninterrupted run left them (but the time each block was played: its checkpoint's stamp).
    for a, b in ((resumed.sim, whole.sim), (resumed.comparison.town.sim, whole.comparison.town.sim)):
        assert a.model_copy(update={"timestamp": ""}) == b.model_copy(update={"timestamp": ""})
    assert (
        resumed.comparison.town.history == whole.comparison.town.history and resumed.history == whole.history
    )
    assert resumed.comparison.readers == whole.comparison.readers  # who read the post, in each town


@pytest.mark.django_db(transaction=True)
def test_the_set_up_counts_both_towns_against_the_limits(settings: Any, town: ScenarioVersion) -> None:
    set_school_limits(settings)
    client = Client()
    client.force_login(User.objects.create_user("teacher", password="a-long-test-passphrase-42"))
    form = client.get(f"/social_feed/new/{town.pk}/").content.decode()
    assert "Compare with a second town" in form and 'name="second_ranking"' in form
    size = {"agents": 2000, "max_rounds": 30, "checkpoint_frequency": 50, "reasoner_enabled": "on"}
    scenario = get_kind("social_feed").scenarios.parse(town.document)
    one = run_estimate(scenario, RunConfig(agents=2000, max_rounds=30, checkpoint_frequency=50), offline=True)
    two = run_estimate(scenario, RunConfig(agents=2000, max_rounds=30, checkpoint_frequency=50,
                                           compare=Compare(**HOT)), offline=True)  # type: ignore[arg-type]  # fmt: skip
    assert one.seconds < 60 < two.seconds and two.storage_bytes > 2 * one.storage_bytes * 0.9
    refused = client.post(
        f"/social_feed/new/{town.pk}/", size | {"compare": "ranking", "second_ranking": "hot"}
    )
    page = refused.content.decode()
    assert refused.status_code == 400 and not Game.objects.exists()
    assert "the limit for one run is 60 seconds" in page and 'value="2000"' in page
    same = client.post(f"/social_feed/new/{town.pk}/", size | {"agents": 20, "compare": "ranking",
                                                                "second_ranking": "chronological"})  # fmt: skip
    assert same.status_code == 400 and NotDifferent.SAME_RANKING in visible(same.content.decode())
    unnamed = client.post(f"/social_feed/new/{town.pk}/", size | {"agents": 20, "compare": "ranking"})
    assert unnamed.status_code == 400 and not Game.objects.exists()
    accepted = client.post(f"/social_feed/new/{town.pk}/", size | {"agents": 20, "compare": "population",
                                                                    "second_mix": "quiet"})  # fmt: skip
    game = Game.objects.get()
    assert accepted.status_code == 302 and state_of(game).config.compare == Compare(
        setting="population", mix="quiet"
    )
    assert client.post(f"/social_feed/new/{town.pk}/", size).status_code == 302  # one town of that size fits


CORRECTION = "The route 7 night bus is not being cut: the council's budget keeps it, page 14 of the papers."


@pytest.mark.django_db(transaction=True)
def test_a_rumour_in_both_towns_and_its_correction_in_one(town: ScenarioVersion, owner: User) -> None:
    options = SMALL | {"compare": {"setting": "correction"}, "max_rounds": 12}
    game = create_game(scenario_version=town, seed=6, owner=owner, options=options)
    client = client_for(owner)
    assert 'name="into"' in client.get(f"/games/{game.pk}/").content.decode()
    drive_game(game_id=game.pk, stream=False, max_steps=1)
    assert write(client, game, RUMOUR) == 302  # into both towns, after round 2
    drive_game(game_id=game.pk, stream=False, max_steps=1)
    assert write(client, game, CORRECTION, into="B") == 302  # into Town B alone, after round 4
    st = state_of(play_headless(Game.objects.get(pk=game.pk)))
    a, b = st, town_state(st)
    assert [p["content"] for p in a.posts() if p["author"] == STUDENT] == [RUMOUR]
    assert [p["content"] for p in b.posts() if p["author"] == STUDENT] == [RUMOUR, CORRECTION]
    assert a.history[:4] == b.history[:4]  # one and the same town until the correction...
    assert a.sim.agents != b.sim.agents  # ...which alone made the difference (some read it instead)
    assert st.comparison is not None
    ids = [next(p["id"] for p in t.posts() if p["content"] == RUMOUR) for t in (a, b)]
    rumour_a, rumour_b = (len(st.comparison.readers[n][pid]) for n, pid in enumerate(ids))
    [correction] = [p["id"] for p in b.posts() if p["content"] == CORRECTION]
    corrected = len(st.comparison.readers[1][correction])
    html = client.get(f"/games/{game.pk}/review/").content.decode()
    comparison = visible(re.search(r'aria-labelledby="comparing-title".*?</section>', html, re.S).group(0))  # type: ignore[union-attr]
    assert "Town B also has what you posted into it alone" in comparison
    assert direction(rumour_a, rumour_b) in said_about(comparison, RUMOUR)
    agents = f"{corrected} agent{'s' if corrected != 1 else ''}"
    assert f"in Town B alone, reached {agents} there" in said_about(comparison, CORRECTION)


@pytest.mark.django_db(transaction=True)
def test_a_post_into_town_b_alone_is_refused_where_a_setting_differs(
    town: ScenarioVersion, owner: User
) -> None:
    game = create_game(scenario_version=town, seed=6, owner=owner, options=SMALL)
    game.refresh_from_db()
    fields = {"event": Event.POST_WRITTEN.value, "version": str(game.version), "text": CORRECTION,
              "topic": "transit", "into": "B"}  # fmt: skip
    response = client_for(owner).post(f"/games/{game.pk}/move/", fields)
    sentence = machine.Refusal.STUDENT_SENTENCES[machine.Refusal.ONE_TOWN]
    assert response.status_code == 400 and sentence in visible(response.content.decode())
    assert not any(
        p["author"] == STUDENT for t in (state_of(game), town_state(state_of(game))) for p in t.posts()
    )
