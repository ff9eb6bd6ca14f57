"""Finding 10: a move must say which turn it answers; without `version` it is refused and nothing is committed."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.http import Http404
from django.test import Client

from simulations.models import Event, Game, ScenarioVersion
from simulations.services.content.scenarios import find_scenarios, playable_version, store_scenario
from simulations.services.ledger.turns import create_game
from simulations.services.policy.move_form import MissingVersion
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


# --- finding 3 of the school's hostile pass: an unlisted version is not a game a student can start -----------------

ROOT = Path(__file__).resolve().parents[2] / "scenarios"
SET_UP_KINDS = {
    "deliberation": "code-review.yaml",
    "message_lab": "message-lab.yaml",
    "social_feed": "town-square.yaml",
}


def _stored(kind: str, *, listed: bool) -> ScenarioVersion:
    ((found_kind, source),) = find_scenarios(ROOT / kind / SET_UP_KINDS[kind])
    version, _ = store_scenario(kind=found_kind, source=source, origin="test", listed=listed)
    return version


@pytest.mark.django_db
@pytest.mark.parametrize("kind", sorted(SET_UP_KINDS))
def test_a_set_up_page_never_opens_an_unlisted_version(kind: str) -> None:
    """An admin's rehearsal of a draft is stored unlisted; its id must not open a set-up page nor start a game."""
    draft = _stored(kind, listed=False)
    client = Client()
    client.force_login(User.objects.create_user("pupil", password="a-long-test-passphrase-42"))
    assert client.get(f"/{kind}/new/{draft.pk}/").status_code == 404
    assert client.post(f"/{kind}/new/{draft.pk}/", {}).status_code == 404
    assert not Game.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("kind", sorted(SET_UP_KINDS))
def test_a_set_up_page_of_a_listed_version_opens(kind: str) -> None:
    listed = _stored(kind, listed=True)
    client = Client()
    client.force_login(User.objects.create_user("pupil", password="a-long-test-passphrase-42"))
    page = client.get(f"/{kind}/new/{listed.pk}/")
    assert page.status_code == 200 and page.context["version"].pk == listed.pk


@pytest.mark.django_db
def test_an_older_listed_version_gives_way_to_the_latest() -> None:
    first = _stored("social_feed", listed=True)
    newer = ScenarioVersion.objects.create(
        slug=first.slug, kind=first.kind, version=first.version + 1, title=first.title,
        content_hash="another", document=first.document, listed=True,
    )  # fmt: skip
    assert playable_version(version_id=first.pk, kind="social_feed") == newer
    with pytest.raises(Http404):
        playable_version(version_id=first.pk, kind="message_lab")  # a version is played only by its own kind
