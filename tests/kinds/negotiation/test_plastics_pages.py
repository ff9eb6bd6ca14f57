"""The pages with two negotiation scenarios loaded: the lobby lists both and starts either, and the game page of the
second scenario says its own numbers and chair in every phase (nothing of Mercury's six countries, four issues or
Japan leaks)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.headless import play_game
from simulations.models import Game
from simulations.services.ledger.turns import create_game
from tests.helpers import mercury_version
from tests.kinds.negotiation.plastics import plastics_version

pytestmark = pytest.mark.django_db
PASSWORD = "a-long-test-passphrase-42"
MERCURY_LEAKS = re.compile(r"\bsix\b|\bJapan\b|\bof 4\b|\bfour issues\b|Minamata", re.IGNORECASE)


def _client(name: str) -> tuple[User, Client]:
    user = User.objects.create_user(name, password=PASSWORD)
    client = Client()
    client.force_login(user)
    return user, client


def _visible_text(html: bytes) -> str:
    return re.sub(r"<[^>]+>", " ", html.decode())


def test_the_lobby_lists_every_scenario_and_starts_a_game_of_each() -> None:
    mercury, plastics = mercury_version(), plastics_version()
    _, client = _client("ana")
    lobby = client.get("/")
    assert lobby.status_code == 200
    for version in (mercury, plastics):
        assert f'name="scenario" value="{version.slug}"'.encode() in lobby.content
        assert version.title.encode() in lobby.content
    for version, seats in ((plastics, 6), (mercury, 9)):
        response = client.post("/games/new/", {"scenario": version.slug})
        game = Game.objects.filter(owner__username="ana").order_by("-pk").first()
        assert game is not None and game.scenario_id == version.pk
        assert response.status_code == 302 and response["Location"] == f"/games/{game.pk}/"
        page = client.get(f"/games/{game.pk}/")
        assert page.content.count(b'class="role-card"') == seats
    lobby = client.get("/")
    assert lobby.content.count(b"Resume") == 2 and plastics.title.encode() in lobby.content


def test_a_new_game_needs_a_known_scenario_when_several_are_loaded() -> None:
    mercury_version(), plastics_version()
    _, client = _client("ben")
    for form, said in (
        ({}, "Choose a scenario to play."),
        ({"scenario": "no-such-treaty"}, "Unknown scenario"),
    ):
        response = client.post("/games/new/", form, follow=True)
        assert response.status_code == 200 and not Game.objects.exists()
        assert said in _visible_text(response.content)


def test_the_plastics_setup_page_states_its_own_shape() -> None:
    plastics_version()
    _, client = _client("cy")
    client.post("/games/new/", {"scenario": "plastics"})
    game = Game.objects.get(owner__username="cy")
    text = _visible_text(client.get(f"/games/{game.pk}/").content)
    assert "Four countries vote and every decision needs all four" in text
    assert "Two NGOs speak but do not vote" in text and "Uruguay chairs" in text
    assert not MERCURY_LEAKS.search(text), MERCURY_LEAKS.search(text)


def test_the_plastics_game_page_in_every_phase_says_nothing_of_mercury() -> None:
    owner, client = _client("dee")
    game = create_game(scenario_version=plastics_version(), seed=2, owner=owner)
    seen: dict[str, str] = {}

    def render(g: Game, what: str) -> None:
        if g.phase in seen:
            return
        response = client.get(f"/games/{g.pk}/")
        assert response.status_code == 200, g.phase
        seen[g.phase] = _visible_text(response.content)

    play_game(game_id=game.pk, policy=make_policy("advocate", "IND"), on_progress=render)
    game.refresh_from_db()
    render(game, "done")
    review = client.get(f"/games/{game.pk}/review/")
    assert review.status_code == 200
    seen["review page"] = _visible_text(review.content)
    assert {"ROUND_1_OPENING_STATEMENTS", "ROUND_2_CONVERSATION_ACTIVE", "ISSUE_DEBATE_ROUND_1",
            "ISSUE_VOTE", "REVIEW"} <= set(seen), sorted(seen)  # fmt: skip
    for phase, text in seen.items():
        leak = MERCURY_LEAKS.search(text)
        assert not leak, (
            f"{phase}: {leak.group(0)!r} in {text[max(0, leak.start() - 80) : leak.end() + 80]!r}"
        )
    issue_pages = [t for p, t in seen.items() if p.startswith("ISSUE_")]
    assert all(re.search(r"Issue \d of 3", t) for t in issue_pages)
    assert all("Issues resolved:" not in t or re.search(r"Issues resolved: \d of 3", t) for t in issue_pages)
