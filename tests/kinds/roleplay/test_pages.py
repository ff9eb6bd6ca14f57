"""A practice conversation in the browser's terms (Django's test client): the lobby starts one, the page shows the
goal, the opening and the graph; a message posted the way htmx posts it comes back in the conversation and the
graph marks what the judge found; refusals say why and keep the text; the end screen and the review show the
ending, each transition with its explanation and the score per branch. The driver plays the judge and the
character with the offline model, as a background worker would."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape

from simulations.kinds.roleplay.document import MAX_MESSAGE, Status
from simulations.kinds.roleplay.games import scenario_of, state_of
from simulations.models import Game, ScenarioVersion
from simulations.services.play.drive import Outcome, drive_game

from .scripts import SCRIPTS

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def client(transactional_db: None) -> Client:
    c = Client()
    c.force_login(User.objects.create_user("sam", first_name="Sam", password="a-long-test-passphrase-42"))
    return c


def start(client: Client, version: ScenarioVersion) -> Game:
    response = client.post("/games/new/", {"scenario": version.slug})
    game = Game.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/games/{game.pk}/"
    return game


def say(client: Client, game: Game, text: str, **extra: str) -> tuple[int, str]:
    game.refresh_from_db()
    data = {"event": "STUDENT_SPOKE", "text": text, "version": str(game.version)} | extra
    response = client.post(f"/games/{game.pk}/move/", data, **HTMX)  # type: ignore[arg-type]
    return response.status_code, response.content.decode()


def marks(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-state="(\w+)" data-mark="(\w+)"', html))


def assert_plain_words(game: Game, html: str) -> None:
    """The page's text as drawn (tags and their attributes, where ids stay for scripts and tests, taken out) names
    no state or branch by its id and shows no asterisk."""
    scenario = scenario_of(game)
    text = unescape(re.sub(r"<[^>]+>", " ", html.split("<main", 1)[1]))
    ids = ["START", "SUCCESS", "FAIL", *scenario.states, *scenario.state_names()]
    assert not [name for name in ids if re.search(rf"\b{name}\b", text)], text
    assert "*" not in text


def test_the_lobby_starts_a_conversation_showing_goal_opening_and_graph(
    client: Client, cafe: ScenarioVersion
) -> None:
    assert "Practice conversation" in client.get("/").content.decode()
    game = start(client, cafe)
    page = client.get(f"/games/{game.pk}/").content.decode()
    assert "Your goal:" in page and "Dana" in page
    assert "<em>Dana sets a cup down on the counter, hard.</em> I asked for an oat milk latte." in page
    graph = marks(page)
    assert graph["AcknowledgeFeelings"] == "available" and graph["OfferGoodwill"] == "ahead"
    assert "If it goes well</strong> — Dana leaves happy: she" in page  # the goal in the character's world
    assert graph["SUCCESS"] == "available" and 'role="img"' in page


def test_a_message_moves_the_graph_and_the_character_answers(client: Client, cafe: ScenarioVersion) -> None:
    game = start(client, cafe)
    status, html = say(client, game, SCRIPTS["cafeBarista"]["success"][0])
    assert status == 200 and "Dana is listening" in html and 'hx-swap-oob="outerHTML"' in html
    assert drive_game(game_id=game.pk, stream=False).outcome is Outcome.HUMAN
    page = client.get(f"/games/{game.pk}/").content.decode()
    assert marks(page)["AcknowledgeFeelings"] == "visited" and marks(page)["TakeOwnership"] == "available"
    assert escape(state_of(Game.objects.get()).messages[-1].text) in page


def test_refusals_say_why_and_store_nothing(client: Client, cafe: ScenarioVersion) -> None:
    game = start(client, cafe)
    status, html = say(client, game, "   ")
    assert status == 400 and "Your message" in html
    status, html = say(client, game, "x" * (MAX_MESSAGE + 1))
    assert status == 400 and f"the limit is {MAX_MESSAGE:,}" in html
    status, html = say(client, game, "hello", version="0")
    assert status == 409
    assert state_of(Game.objects.get()).turns == 0
    say(client, game, "I am so sorry about that.")
    status, html = say(client, game, "and another thing")  # the judge has not read the first yet
    assert status == 409 and "still answering" in html
    assert state_of(Game.objects.get()).turns == 1


@pytest.mark.parametrize("invisible", ["\u3164", "\u2800", "\u0301", "\u200b\u3164\u2800"])
def test_text_that_draws_nothing_is_refused_and_the_turn_stays_open(
    client: Client, cafe: ScenarioVersion, invisible: str
) -> None:
    game = start(client, cafe)
    status, html = say(client, game, invisible)
    assert status == 400 and "nothing visible" in html
    assert state_of(Game.objects.get()).turns == 0


def test_another_player_cannot_read_or_drive_it(client: Client, cafe: ScenarioVersion) -> None:
    game = start(client, cafe)
    other = Client()
    other.force_login(User.objects.create_user("eve", password="a-long-test-passphrase-42"))
    assert other.get(f"/games/{game.pk}/").status_code == 404
    assert other.post(f"/games/{game.pk}/move/", {"text": "hi", "version": "1"}).status_code == 404


def test_the_end_screen_and_the_review_show_the_ending_transitions_and_scores(
    client: Client, cafe: ScenarioVersion
) -> None:
    game = start(client, cafe)
    for line in SCRIPTS["cafeBarista"]["success"]:
        assert say(client, game, line)[0] == 200
        drive_game(game_id=game.pk, stream=False)
    game.refresh_from_db()
    assert state_of(game).status is Status.ENDED and game.finished_at
    page = client.get(f"/games/{game.pk}/").content.decode()
    assert "Goal reached" in page and "Open the review" in page and 'id="say"' not in page
    assert "What went well" in page and escape(scenario_of(game).spec("UseCleanJug").plain) in page
    assert_plain_words(game, page)
    review = client.get(f"/games/{game.pk}/review/").content.decode()
    assert_plain_words(game, review)
    assert "Each message, and why" in review and "Score per branch" in review
    s = scenario_of(game)
    chose = f"chose “{s.spec('PrioritizeOrder').plain}” (which closed “{s.spec('SendToBackOfQueue').plain}” for good)"
    assert escape(chose) in review
    assert '<th scope="row">Empathy</th><td>3 of 3</td>' in review
    md = client.get(f"/games/{game.pk}/export.md").content.decode()
    assert md.startswith("# Cafe barista") and "**Outcome:** Goal reached" in md


def test_leaving_ends_the_conversation_without_the_goal(client: Client, cafe: ScenarioVersion) -> None:
    game = start(client, cafe)
    response = client.post(f"/games/{game.pk}/move/", {"event": "STUDENT_LEFT", "version": str(game.version)})
    assert response.status_code == 302
    drive_game(game_id=game.pk, stream=False)
    page = client.get(f"/games/{game.pk}/").content.decode()
    assert "ended without the goal" in page and state_of(Game.objects.get()).outcome == "FAIL"
    assert "You ended the conversation before reaching the goal." in page and "What went well" not in page


def test_a_failed_conversation_says_who_ended_it_and_the_steps_reached_in_words(
    client: Client, cafe: ScenarioVersion
) -> None:
    game = start(client, cafe)
    assert_plain_words(game, client.get(f"/games/{game.pk}/").content.decode())  # the opening's direction too
    for line in SCRIPTS["cafeBarista"]["fail"]:
        assert say(client, game, line)[0] == 200
        drive_game(game_id=game.pk, stream=False)
    page = client.get(f"/games/{game.pk}/").content.decode()
    assert state_of(Game.objects.get()).outcome == "FAIL"
    assert "Dana ended the conversation before the goal was reached." in page
    s = scenario_of(game)
    assert "What set you back" in page and escape(s.spec("SendToBackOfQueue").plain) in page
    assert_plain_words(game, page)
    review = client.get(f"/games/{game.pk}/review/").content.decode()
    assert (
        "<strong>Outcome:</strong> Goal not reached" in review
        and escape(f"chose “{s.spec('SendToBackOfQueue').plain}”") in review
    )
    assert_plain_words(game, review)
    md = client.get(f"/games/{game.pk}/export.md").content.decode()
    assert "> *Dana sets a cup down on the counter, hard.* I asked for an oat milk latte." in md
    assert "| Remake | 2 of 3 | Offer remake, Send to back of queue |" in md
    assert not re.search(r"\b(SendToBackOfQueue|OfferRemake|RemakeBranch|FAIL)\b", md)
