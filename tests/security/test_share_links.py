"""Finding 8 (part): share links expire (MERCURY_SHARE_LINK_DAYS) and the owner can revoke them at once."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from simulations.models import Game
from simulations.services.turns import create_game
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


def _readable(game: Game, token: str) -> list[int]:
    anonymous = _client()
    return [
        anonymous.get(f"/shared/{token}/").status_code,
        anonymous.get(f"/games/{game.pk}/export.json?token={token}").status_code,
        anonymous.get(f"/games/{game.pk}/export.md?token={token}").status_code,
    ]


def test_a_revoked_link_stops_working_at_once_and_sharing_again_makes_a_new_one() -> None:
    owner = User.objects.create_user("owner", password="a-long-test-passphrase-42")
    game, token = _shared(owner)
    assert _readable(game, token) == [200, 200, 200]
    stranger = User.objects.create_user("stranger", password="a-long-test-passphrase-42")
    assert _client(stranger).post(f"/games/{game.pk}/unshare/").status_code == 404  # not theirs to revoke
    assert _readable(game, token) == [200, 200, 200]
    assert _client(owner).post(f"/games/{game.pk}/unshare/").status_code == 302
    assert _readable(game, token) == [404, 404, 404]
    _, again = _shared(owner, game)
    assert (
        again != token and _readable(game, again) == [200, 200, 200] and _readable(game, token) == [404] * 3
    )


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
    assert _readable(game, token) == [404, 404, 404]
    assert token.encode() not in _client(owner).get(f"/games/{game.pk}/review/").content
    _, fresh = _shared(owner, game)
    assert fresh != token and _readable(game, fresh) == [200, 200, 200]
