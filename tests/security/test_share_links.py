"""Finding 8: share links expire (MERCURY_SHARE_LINK_DAYS), the owner can revoke them at once, and their tokens
never travel in a request line (what access logs record): the link carries the token after '#', the page posts it
once, the visitor's session gets a grant for that game, and every later URL names only the game."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from simulations.models import Game
from simulations.services.ledger.turns import create_game
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db


def _client(user: User | None = None) -> Client:
    client = Client()
    if user:
        client.force_login(user)
    return client


def _shared(owner: User, game: Game | None = None) -> tuple[Game, str]:
    game = game or create_game(scenario_version=mercury_version(), seed=4, owner=owner)
    assert _client(owner).post(f"/games/{game.pk}/share/").status_code == 302
    game.refresh_from_db()
    assert game.share_token
    return game, game.share_token


def _share_url(owner: User, game: Game) -> str:
    review = _client(owner).get(f"/games/{game.pk}/review/").content.decode()
    match = re.search(r'value="(http://testserver/shared/#[^"]+)"', review)
    assert match, "the owner's review shows the link"
    return match.group(1)


def _visit(token: str) -> tuple[Client, list[str], int]:
    """An anonymous visitor opens a share link as a browser does: GET the page (the part after '#' stays in
    the browser), post the token, follow the redirect. Returns the client, every request line's path and query
    (what an access log records) and the final status."""
    visitor, logged = _client(), []
    logged.append("/shared/")
    assert visitor.get("/shared/").status_code == 200
    response = visitor.post("/shared/", {"token": token})
    logged.append("/shared/")
    while response.status_code == 302:
        logged.append(response["Location"])
        response = visitor.get(response["Location"])
    return visitor, logged, response.status_code


REFUSED = [404, 302, 302]  # the link is refused; without a grant the downloads ask to log in


def _readable(game: Game, token: str) -> list[int]:
    visitor, _, status = _visit(token)
    return [
        status,
        visitor.get(f"/games/{game.pk}/export.json").status_code,
        visitor.get(f"/games/{game.pk}/export.md").status_code,
    ]


def _granted_reads(visitor: Client, game: Game) -> list[int]:
    """What a visitor who was granted earlier gets now (no token sent again)."""
    return [
        visitor.get(f"/games/{game.pk}/review/").status_code,
        visitor.get(f"/games/{game.pk}/export.json").status_code,
        visitor.get(f"/games/{game.pk}/export.md").status_code,
    ]


def test_the_token_never_appears_in_a_request_line_or_a_link() -> None:
    owner = User.objects.create_user("owner", password="a-long-test-passphrase-42")
    game, token = _shared(owner)
    url = _share_url(owner, game)
    assert url == f"http://testserver/shared/#{token}"  # after '#': browsers never send it
    visitor, logged, status = _visit(token)
    assert status == 200 and logged[-1] == f"/games/{game.pk}/review/"
    page = visitor.get(f"/games/{game.pk}/review/").content.decode()
    downloads = re.findall(r'href="([^"]*export[^"]*)"', page)
    assert len(downloads) == 2
    for line in logged + downloads:
        assert token not in line, line
    assert [visitor.get(u).status_code for u in downloads] == [200, 200]
    anonymous = _client()  # a token in a query string is not accepted any more
    for what in ("export.json", "export.md", "review/"):
        response = anonymous.get(f"/games/{game.pk}/{what}?token={token}")
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert _client().post("/shared/", {"token": token + "x"}).status_code == 404
    legacy = _client()  # a link made before the token moved after '#': one request carries it, then none
    response = legacy.get(f"/shared/{token}/")
    assert response.status_code == 302 and response["Location"] == f"/games/{game.pk}/review/"
    assert _granted_reads(legacy, game) == [200, 200, 200]


def test_a_grant_ends_with_the_link() -> None:
    owner = User.objects.create_user("owner", password="a-long-test-passphrase-42")
    game, token = _shared(owner)
    visitor, _, status = _visit(token)
    assert status == 200 and _granted_reads(visitor, game) == [200, 200, 200]
    other = create_game(scenario_version=mercury_version(), seed=5, owner=owner)
    assert visitor.get(f"/games/{other.pk}/review/").status_code == 302  # the grant names one game only
    assert _client(owner).post(f"/games/{game.pk}/unshare/").status_code == 302
    assert _granted_reads(visitor, game) == [404, 404, 404]  # revoked: at once, for those already in
    _, again = _shared(owner, game)
    assert _granted_reads(visitor, game) == [404, 404, 404]  # a new link is not the old grant
    visitor, _, _ = _visit(again)
    Game.objects.filter(pk=game.pk).update(share_expires_at=timezone.now() - timedelta(seconds=1))
    assert _granted_reads(visitor, game) == [404, 404, 404]  # expired


def test_a_revoked_link_stops_working_at_once_and_sharing_again_makes_a_new_one() -> None:
    owner = User.objects.create_user("owner", password="a-long-test-passphrase-42")
    game, token = _shared(owner)
    assert _readable(game, token) == [200, 200, 200]
    stranger = User.objects.create_user("stranger", password="a-long-test-passphrase-42")
    assert _client(stranger).post(f"/games/{game.pk}/unshare/").status_code == 404  # not theirs to revoke
    assert _readable(game, token) == [200, 200, 200]
    assert _client(owner).post(f"/games/{game.pk}/unshare/").status_code == 302
    assert _readable(game, token) == REFUSED
    _, again = _shared(owner, game)
    assert again != token and _readable(game, again) == [200, 200, 200] and _readable(game, token) == REFUSED


def test_a_link_expires_after_the_configured_days(settings: Any) -> None:
    settings.MERCURY_SHARE_LINK_DAYS = 3
    owner = User.objects.create_user("owner", password="a-long-test-passphrase-42")
    game, token = _shared(owner)
    assert game.share_expires_at is not None
    left = game.share_expires_at - timezone.now()
    assert timedelta(days=2, hours=23) < left <= timedelta(days=3)
    review = _client(owner).get(f"/games/{game.pk}/review/").content
    assert token.encode() in review and b"Revoke this link" in review
    Game.objects.filter(pk=game.pk).update(share_expires_at=timezone.now() - timedelta(seconds=1))
    assert _readable(game, token) == REFUSED
    assert token.encode() not in _client(owner).get(f"/games/{game.pk}/review/").content
    _, fresh = _shared(owner, game)
    assert fresh != token and _readable(game, fresh) == [200, 200, 200]
