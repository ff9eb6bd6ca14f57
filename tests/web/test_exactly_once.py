"""Exactly once: double submits and concurrent submits of one turn commit once; rate limits; CSRF on posts."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.utils.html import escape

from simulations.kinds.negotiation.human_turns import submit_human_event
from simulations.models import Event, Game, Submission
from simulations.services.ledger.turns import StaleTurn, create_game
from simulations.services.policy import rate_limit
from simulations.services.policy.student_errors import ALREADY_PLAYED
from tests.helpers import mercury_version

PASSWORD = "a-long-test-passphrase-42"


def _game() -> tuple[User, Game]:
    owner = User.objects.create_user(f"owner{User.objects.count()}", password=PASSWORD)
    game = create_game(scenario_version=mercury_version(), seed=2, owner=owner)
    game = submit_human_event(game=game, event="ROLE_CONFIRMED", payload={"role": "BRA"})
    return owner, game


@pytest.mark.django_db
def test_a_double_submit_with_one_key_commits_once() -> None:
    owner, game = _game()
    client = Client()
    client.force_login(owner)
    page = client.get(f"/games/{game.pk}/").content.decode()
    key = re.search(r'name="idem" value="([0-9a-f]{17,})"', page)
    assert key is not None
    form = {"event": "OPENING_PRESENTED", "version": game.version, "idem": key.group(1)}
    first = client.post(f"/games/{game.pk}/move/", form, HTTP_HX_REQUEST="true")
    again = client.post(
        f"/games/{game.pk}/move/", {**form, "version": game.version + 1}, HTTP_HX_REQUEST="true"
    )
    assert first.status_code == 200
    # The answer shows the game as the move left it (its panels carry the version the next form must send).
    assert f'data-version="{game.version + 1}"' in first.content.decode()
    assert again.status_code == 409 and escape(ALREADY_PLAYED).encode() in again.content
    assert Event.objects.filter(game=game, name="OPENING_PRESENTED").count() == 1
    assert Submission.objects.filter(game=game).count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_submits_of_one_turn_commit_exactly_one() -> None:
    _, game = _game()
    version = game.version

    def submit(n: int) -> str:
        try:
            submit_human_event(
                game=Game.objects.get(pk=game.pk), event="OPENING_PRESENTED", payload={},
                expected_version=version, idempotency_key=f"tab-{n}",
            )  # fmt: skip
            return "committed"
        except StaleTurn as exc:
            return str(exc)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(submit, range(8)))
    assert results.count("committed") == 1
    assert results.count(StaleTurn.MESSAGE) == 7
    assert Event.objects.filter(game=game, name="OPENING_PRESENTED").count() == 1
    game.refresh_from_db()
    assert game.version == version + 1


@pytest.mark.django_db
def test_moves_and_new_games_are_rate_limited(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    cache.clear()
    monkeypatch.setattr(
        rate_limit, "clock", lambda: 1_000_000 * 3600 + 1800.0
    )  # one window for the whole test
    settings.MERCURY_RATE_MOVES_PER_MINUTE = 3
    settings.MERCURY_RATE_GAMES_PER_HOUR = 2
    owner, game = _game()
    client = Client()
    client.force_login(owner)
    statuses = []
    for _ in range(4):
        game.refresh_from_db()
        response = client.post(
            f"/games/{game.pk}/move/",
            {"event": "OPENING_PRESENTED", "version": game.version},
            HTTP_HX_REQUEST="true",
        )
        statuses.append(response.status_code)
    assert statuses == [200, 200, 200, 429]
    assert b"You are moving faster than the game allows" in response.content
    made = [client.post("/games/new/", follow=True) for _ in range(3)]
    assert b"You have started many games recently" in made[-1].content
    assert Game.objects.filter(owner=owner).count() == 1 + 2
    cache.clear()


@pytest.mark.django_db
def test_every_post_needs_a_csrf_token() -> None:
    owner, game = _game()
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    for url, data in (
        (f"/games/{game.pk}/move/", {"event": "OPENING_PRESENTED", "version": game.version}),
        ("/games/new/", {}),
        (f"/games/{game.pk}/share/", {}),
    ):
        assert client.post(url, data).status_code == 403, url
    page = client.get(f"/games/{game.pk}/")
    token = page.cookies["csrftoken"].value
    response = client.post(
        f"/games/{game.pk}/move/", {"event": "OPENING_PRESENTED", "version": game.version},
        HTTP_X_CSRFTOKEN=token, HTTP_HX_REQUEST="true",
    )  # fmt: skip
    assert response.status_code == 200


@pytest.mark.django_db
def test_a_move_form_drawn_by_htmx_posts_with_the_pages_header_not_a_token_of_its_own() -> None:
    """A full page's move form carries the CSRF field for a post without JavaScript; one an HTMX response draws
    has none (a fresh masked token cost each move response 32 reads of the random source) and posts with the
    token from the page's body (base.html's hx-headers), as forms drawn over the websocket always have."""
    owner, game = _game()
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    page = client.get(f"/games/{game.pk}/")
    assert b'name="csrfmiddlewaretoken"' in page.content
    header = re.search(r'hx-headers=\'\{"X-CSRFToken": "(\w+)"\}\'', page.content.decode())
    assert header is not None
    plain = re.search(r'name="csrfmiddlewaretoken" value="(\w+)"', page.content.decode())
    assert plain is not None
    # Without JavaScript: the form's own field.
    game.refresh_from_db()
    response = client.post(
        f"/games/{game.pk}/move/", {"event": "OPENING_PRESENTED", "version": game.version,
                                    "csrfmiddlewaretoken": plain.group(1)},
    )  # fmt: skip
    assert response.status_code == 302  # a post without JavaScript is answered with the game's page again
    # With HTMX: the response's forms have no field, and their post carries the page's header.
    game.refresh_from_db()
    response = client.post(
        f"/games/{game.pk}/move/", {"event": "OPENING_PRESENTED", "version": game.version},
        HTTP_X_CSRFTOKEN=header.group(1), HTTP_HX_REQUEST="true",
    )  # fmt: skip
    assert response.status_code == 200
    assert b"<form" in response.content
    assert b"csrfmiddlewaretoken" not in response.content
    game.refresh_from_db()
    form = {"event": "OPENING_PRESENTED", "version": game.version}
    assert client.post(f"/games/{game.pk}/move/", form, HTTP_HX_REQUEST="true").status_code == 403
    assert (
        client.post(
            f"/games/{game.pk}/move/", form, HTTP_X_CSRFTOKEN=header.group(1), HTTP_HX_REQUEST="true"
        ).status_code
        == 200
    )
    assert Event.objects.filter(game=game, name="OPENING_PRESENTED").count() == 3
