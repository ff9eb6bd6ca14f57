"""Pages and moves over HTTP: who may open and drive a game, HTMX partials, errors and escaping."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape

from simulations.models import Event, Game, TranscriptEntry
from simulations.services.ledger.turns import create_game
from simulations.services.policy.student_errors import ALREADY_PLAYED, NOT_OPEN_NOW
from tests.helpers import game_in_private_talk, mercury_version

pytestmark = pytest.mark.django_db
PASSWORD = "a-long-test-passphrase-42"


def _user(name: str, staff: bool = False) -> User:
    return User.objects.create_user(name, password=PASSWORD, is_staff=staff)


def _client(user: User | None) -> Client:
    client = Client()
    if user:
        client.force_login(user)
    return client


def _started(owner: User, role: str = "EU") -> Game:
    game = create_game(scenario_version=mercury_version(), seed=4, owner=owner)
    _client(owner).post(f"/games/{game.pk}/move/", {"event": "ROLE_CONFIRMED", "role": role, "version": 1})
    game.refresh_from_db()
    return game


def test_sign_up_then_lobby_and_new_game() -> None:
    mercury_version()
    client = Client()
    response = client.post(
        "/accounts/signup/", {"username": "ana", "password1": PASSWORD, "password2": PASSWORD}, follow=True
    )
    assert response.status_code == 200 and b"Start a new game" in response.content
    response = client.post("/games/new/")
    game = Game.objects.get(owner__username="ana")
    assert response.status_code == 302 and response["Location"] == f"/games/{game.pk}/"
    page = client.get(f"/games/{game.pk}/")
    assert page.status_code == 200 and page.content.count(b'class="role-card"') == 9
    persona = client.get(f"/games/{game.pk}/?role=TZA")
    assert b"Confidential brief" in persona.content and persona.content.count(b'name="variant"') == 3
    lobby = client.get("/")
    assert f"#{game.pk}".encode() in lobby.content and b"Choose your delegation" in lobby.content


def test_anonymous_visitors_are_sent_to_log_in() -> None:
    owner = _user("owner")
    game = _started(owner)
    client = Client()
    for url in ("/", f"/games/{game.pk}/", f"/games/{game.pk}/review/", f"/games/{game.pk}/export.json"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next="), url
    response = client.post(f"/games/{game.pk}/move/", {"event": "OPENING_PRESENTED", "version": game.version})
    assert response.status_code == 302
    game.refresh_from_db()
    assert game.version == 2


def test_another_user_can_neither_open_nor_drive_a_game() -> None:
    owner, other = _user("owner"), _user("other")
    game = _started(owner)
    client = _client(other)
    for url in (f"/games/{game.pk}/", f"/games/{game.pk}/review/", f"/games/{game.pk}/export.md"):
        assert client.get(url).status_code == 404, url
    response = client.post(f"/games/{game.pk}/move/", {"event": "OPENING_PRESENTED", "version": game.version})
    assert response.status_code == 404
    assert client.post(f"/games/{game.pk}/share/").status_code == 404
    game.refresh_from_db()
    assert game.version == 2 and not game.share_token
    assert f"#{game.pk}".encode() not in client.get("/").content


def test_staff_and_share_links_read_but_do_not_drive() -> None:
    owner, staff = _user("owner"), _user("teacher", staff=True)
    game = _started(owner)
    assert _client(staff).get(f"/games/{game.pk}/review/").status_code == 200
    response = _client(staff).post(f"/games/{game.pk}/move/", {"event": "OPENING_PRESENTED", "version": 2})
    assert response.status_code == 404
    review = _client(owner).post(f"/games/{game.pk}/share/", follow=True)
    game.refresh_from_db()
    assert game.share_token and game.share_token.encode() in review.content
    anonymous = Client()
    assert anonymous.get(f"/shared/{game.share_token}x/").status_code == 404
    assert anonymous.get(f"/games/{game.pk}/export.json").status_code == 302  # no grant yet: log in
    assert anonymous.post("/shared/", {"token": game.share_token}, follow=True).status_code == 200
    export = anonymous.get(f"/games/{game.pk}/export.json")
    assert export.status_code == 200 and export.json()["format"] == "simulation-export/3"
    assert (
        anonymous.post(f"/games/{game.pk}/move/", {"event": "OPENING_PRESENTED", "version": 2}).status_code
        == 302
    )


def test_htmx_moves_return_the_panels_and_errors_say_what_happened() -> None:
    owner = _user("owner")
    game = _started(owner)
    client = _client(owner)
    move = f"/games/{game.pk}/move/"
    response = client.post(move, {"event": "OPENING_PRESENTED", "version": 2}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and b'data-version="3"' in response.content
    stale = client.post(move, {"event": "OPENING_PRESENTED", "version": 2}, HTTP_HX_REQUEST="true")
    assert stale.status_code == 409 and escape(ALREADY_PLAYED).encode() in stale.content
    illegal = client.post(
        move, {"event": "HUMAN_VOTE_CAST", "ballot": "yes", "version": 3}, HTTP_HX_REQUEST="true"
    )
    assert illegal.status_code == 409
    assert escape(NOT_OPEN_NOW).encode() in illegal.content  # the student's words, not the engine's
    assert b"HUMAN_VOTE_CAST" not in illegal.content and b'data-action="advance"' in illegal.content
    ai_move = client.post(
        move, {"event": "AI_MESSAGE_COMMITTED", "text": "x", "version": 3}, HTTP_HX_REQUEST="true"
    )
    assert ai_move.status_code == 409  # a student cannot submit an AI seat's event
    game.refresh_from_db()
    assert game.version == 3


def test_forged_fields_are_dropped_and_text_is_escaped() -> None:
    owner = _user("owner")
    client = _client(owner)
    game = game_in_private_talk(client, owner)
    hostile = "<script>alert('x')</script> We support 2.1."
    forged = '{"offers": ["financing"]}'
    client.post(
        f"/games/{game.pk}/move/",
        {"event": "HUMAN_MESSAGE_SUBMITTED", "text": hostile, "signals": forged, "version": game.version},
    )
    event = Event.objects.filter(game=game, name="HUMAN_MESSAGE_SUBMITTED").get()
    assert event.payload == {"text": hostile}  # the forged judge reading never reaches the engine
    assert TranscriptEntry.objects.filter(game=game, text=hostile).exists()
    for url in (f"/games/{game.pk}/", f"/games/{game.pk}/review/", f"/games/{game.pk}/export.md"):
        body = client.get(url).content
        assert b"<script>alert" not in body and b"&lt;script&gt;alert" in body, url


def test_the_students_own_briefs_are_readable_in_every_phase_and_no_one_elses() -> None:
    """From Round 1 to the review the game page carries the student's public and confidential brief and persona
    (escaped), and never another seat's confidential brief; another player cannot open the page at all."""
    from html import escape

    from simulations.kinds.negotiation.bots import make_policy
    from simulations.kinds.negotiation.headless import play_game
    from simulations.kinds.negotiation.scenario import load_scenario_dir
    from tests.conftest import SCENARIO_DIR

    scenario = load_scenario_dir(SCENARIO_DIR)
    owner, other = _user("owner"), _user("other")
    client, stranger = _client(owner), _client(other)
    game = create_game(scenario_version=mercury_version(), seed=3, owner=owner)
    assert b'id="brief"' not in client.get(f"/games/{game.pk}/").content  # set-up shows its own brief pages
    moved = client.post(
        f"/games/{game.pk}/move/",
        {"event": "ROLE_CONFIRMED", "role": "CHN", "variant": "CHN-b", "version": 1},
    )
    assert moved.status_code == 302
    mine = scenario.role("CHN")

    def secret(role_id: str) -> bytes:
        return escape(scenario.role(role_id).confidential_brief.interests.strip()).encode()

    seen: set[str] = set()

    def check(g: Game, what: str) -> None:
        if g.phase in seen:
            return
        seen.add(g.phase)
        page = client.get(f"/games/{g.pk}/").content
        assert page.count(b'id="brief"') == 1, g.phase
        assert secret("CHN") in page and escape(mine.public_brief.strip()).encode() in page, g.phase
        assert escape(mine.confidential_brief.red_lines[0]).encode() in page
        assert escape(mine.opening("CHN-b").persona.name).encode() in page
        for role_id in scenario.role_ids:
            if role_id != "CHN":
                assert secret(role_id) not in page, (g.phase, role_id)
        assert stranger.get(f"/games/{g.pk}/").status_code == 404

    check(Game.objects.get(pk=game.pk), "confirmed")
    play_game(game_id=game.pk, policy=make_policy("advocate", "CHN"), on_progress=check)
    assert {"ROUND_1_OPENING_STATEMENTS", "ROUND_2_CONVERSATION_ACTIVE", "ISSUE_DEBATE_ROUND_1", "ISSUE_VOTE",
            "REVIEW"} <= seen  # fmt: skip
