"""The person watching takes part (machine.Event.POST_WRITTEN, pages.read_move): a post of their own, written on
the run page between blocks of rounds, joins the feed as it is; the agents read it, answer it and pass it on like
any other post; the results tell them what became of it. A post the run already has, one on no topic of the
scenario's, one too long or one after the run has finished is refused with a sentence, and nothing is written."""

from __future__ import annotations

import html
import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from simulations.kinds import get_kind
from simulations.kinds.social_feed.config import SCENARIO_ROOT
from simulations.kinds.social_feed.entities import STUDENT
from simulations.kinds.social_feed.games import state_of
from simulations.kinds.social_feed.headless import play_headless
from simulations.kinds.social_feed.machine import STUDENT_TEXT, Event
from simulations.models import Game
from simulations.services.content.scenarios import store_scenario
from simulations.services.files.export import export_game
from simulations.services.files.import_game import import_game
from simulations.services.ledger.turns import create_game
from simulations.services.play.drive import drive_game
from tests.kinds.visible_text import visible

pytestmark = pytest.mark.django_db(transaction=True)
MINE = "Put a bike rack at every bus stop on route 7 and half the short car trips into town would go."


@pytest.fixture
def owner() -> User:
    return User.objects.create_user("student", password="a-long-test-passphrase-42")


@pytest.fixture
def game(owner: User) -> Game:
    kind = get_kind("social_feed")
    [source] = kind.scenarios.read(SCENARIO_ROOT / "town-square.yaml")
    version = store_scenario(kind=kind, source=source, origin="tests")[0]
    options = {
        "agents": 250,
        "max_rounds": 16,
        "checkpoint_frequency": 2,
        "started_at": "2026-11-24T00:00:00+00:00",
    }
    return create_game(scenario_version=version, seed=21, owner=owner, options=options)


def client_for(user: User) -> Client:
    c = Client()
    c.force_login(user)
    return c


def write(client: Client, game: Game, text: str, topic: str = "transit") -> int:
    game.refresh_from_db()
    fields = {"event": Event.POST_WRITTEN.value, "version": str(game.version), "text": text, "topic": topic}
    return client.post(f"/games/{game.pk}/move/", fields).status_code


def test_a_post_of_ones_own_joins_the_run_and_the_town_answers_it(game: Game, owner: User) -> None:
    client = client_for(owner)
    page = client.get(f"/games/{game.pk}/").content.decode()
    assert "Post to the town square yourself" in page and 'name="topic"' in page
    drive_game(game_id=game.pk, stream=False, max_steps=1)  # two rounds played
    assert write(client, game, MINE) == 302
    st = state_of(Game.objects.get(pk=game.pk))
    [mine] = [p for p in st.simulation["posts"] if p["author"] == STUDENT]
    assert mine["content"] == MINE and mine["topics"] == ["transit"] and mine["round"] == st.round_number == 2
    finished = play_headless(Game.objects.get(pk=game.pk))
    posts = state_of(finished).simulation["posts"]
    mine = next(p for p in posts if p["author"] == STUDENT)
    answers = [p for p in posts if p["reply_to"] == mine["id"] or p["reshare_of"] == mine["id"]]
    assert mine["likes"] + mine["replies"] + mine["reshares"] > 0 and answers  # the town read it
    assert all(p["content"].startswith(f"@{STUDENT} ") for p in answers if p["reply_to"])
    assert all(p["topics"] == ["transit"] for p in answers)
    review = visible(client.get(f"/games/{finished.pk}/review/").content.decode())
    assert "Your posts" in review and MINE in review and "You posted once" in review
    copy = import_game(data=json.loads(json.dumps(export_game(game=finished))))  # the post replays on import
    assert state_of(copy).simulation == state_of(finished).simulation


def test_a_post_the_run_cannot_take_is_refused_with_a_sentence(game: Game, owner: User) -> None:
    client = client_for(owner)
    seed_post = state_of(game).simulation["posts"][0]["content"]
    events = game.events.count()
    for text, topic, sentence in (
        (seed_post, "housing", "already says exactly that"),
        (MINE, "weather", "Choose one of the town's topics"),
        ("x" * (STUDENT_TEXT + 1), "transit", f"at most {STUDENT_TEXT} characters"),
    ):
        game.refresh_from_db()
        fields = {
            "event": Event.POST_WRITTEN.value,
            "version": str(game.version),
            "text": text,
            "topic": topic,
        }
        response = client.post(f"/games/{game.pk}/move/", fields)
        assert response.status_code == 400 and sentence in html.unescape(response.content.decode()), topic
    assert game.events.count() == events
    finished = play_headless(game)
    assert write(client, finished, MINE) == 409 and not any(
        p["author"] == STUDENT for p in state_of(Game.objects.get(pk=game.pk)).simulation["posts"]
    )
