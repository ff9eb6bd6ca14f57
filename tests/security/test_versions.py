"""Finding 10: a move must say which turn it answers; without `version` it is refused and nothing is committed."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from simulations.models import Event, Game
from simulations.services.turns import create_game
from simulations.views.play import MissingVersion
from tests.helpers import mercury_version


def _owner_and_game() -> tuple[Client, Game]:
    owner = User.objects.create_user(f"v{User.objects.count()}", password="a-long-test-passphrase-42")
    game = create_game(scenario_version=mercury_version(), seed=5, owner=owner)
    client = Client()
    client.force_login(owner)
    return client, game


@pytest.mark.django_db
@pytest.mark.parametrize("version", [None, "", "abc", "-1"])
def test_a_move_without_a_usable_version_is_refused_and_changes_nothing(version: str | None) -> None:
    client, game = _owner_and_game()
    form = {"event": "ROLE_CONFIRMED", "role": "EU"} | ({} if version is None else {"version": version})
    response = client.post(f"/games/{game.pk}/move/", form, HTTP_HX_REQUEST="true")
    assert response.status_code == 400
    assert MissingVersion.MESSAGE.encode() in response.content
    game.refresh_from_db()
    assert game.version == 1 and game.phase == "ROLE_SELECTION"
    assert not Event.objects.filter(game=game, name="ROLE_CONFIRMED").exists()


@pytest.mark.django_db
def test_repeated_versionless_posts_never_commit_but_the_versioned_one_does() -> None:
    client, game = _owner_and_game()
    for _ in range(5):
        client.post(f"/games/{game.pk}/move/", {"event": "ROLE_CONFIRMED", "role": "EU"})
    assert Event.objects.filter(game=game, name="ROLE_CONFIRMED").count() == 0
    client.post(f"/games/{game.pk}/move/", {"event": "ROLE_CONFIRMED", "role": "EU", "version": 1})
    client.post(f"/games/{game.pk}/move/", {"event": "OPENING_PRESENTED"})  # no version: refused
    assert Event.objects.filter(game=game, name="ROLE_CONFIRMED").count() == 1
    assert not Event.objects.filter(game=game, name="OPENING_PRESENTED").exists()
