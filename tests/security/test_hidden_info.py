"""Finding 9: while a game runs, its review and exports show no AI seat's stance changes or anyone else's private
talk; the set-up pages show public information, and a seat's confidential brief only on that seat's own page, where
the student weighs it for themselves (#69: read before a persona is chosen); never another seat's beside it."""

from __future__ import annotations

import json
from html import escape

import pytest
from django.contrib.auth.models import User
from django.test import Client

from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.headless import play_game
from simulations.kinds.negotiation.scenario import Scenario
from simulations.models import Event, Game
from simulations.services.ledger.turns import create_game
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db


class _Paused(Exception):
    pass


def _owner() -> tuple[User, Client]:
    owner = User.objects.create_user(f"h{User.objects.count()}", password="a-long-test-passphrase-42")
    client = Client()
    client.force_login(owner)
    return owner, client


def _secrets(scenario: Scenario, role_id: str) -> list[bytes]:
    brief = scenario.role(role_id).confidential_brief
    return [
        escape(t.strip()).encode()
        for t in [brief.interests, *brief.red_lines, *brief.priorities]
        if t.strip()
    ]


def test_a_setup_page_shows_the_confidential_brief_of_its_own_seat_only(scenario: Scenario) -> None:
    owner, client = _owner()
    game = create_game(scenario_version=mercury_version(), seed=3, owner=owner)
    listing = client.get(f"/games/{game.pk}/").content
    assert not any(s in listing for role_id in scenario.role_ids for s in _secrets(scenario, role_id))
    for role_id in scenario.role_ids:
        page = client.get(f"/games/{game.pk}/?role={role_id}").content
        assert escape(scenario.role(role_id).public_brief.strip()).encode() in page, role_id
        assert all(secret in page for secret in _secrets(scenario, role_id)), role_id
        own = scenario.role(role_id).confidential_brief
        own_text = escape(" ".join([own.interests, *own.priorities, *own.red_lines, *own.can_trade])).encode()
        for other in scenario.role_ids:
            # What this seat's own brief also says (a red line the EU and the USA share, word for word) is not
            # another seat's secret on this page.
            theirs = [secret for secret in _secrets(scenario, other) if secret not in own_text]
            assert other == role_id or theirs, (role_id, other)
            assert not any(secret in page for secret in theirs), (role_id, other)
    client.post(f"/games/{game.pk}/move/", {"event": "ROLE_CONFIRMED", "role": "CHN", "version": 1})
    page = client.get(f"/games/{game.pk}/").content
    assert all(secret in page for secret in _secrets(scenario, "CHN"))
    assert not any(
        s in page for other in scenario.role_ids if other != "CHN" for s in _secrets(scenario, other)
    )


def _ai_shifts(game: Game) -> list[dict[str, str]]:
    rows = Event.objects.filter(game=game).exclude(stance_changes=[]).values_list("stance_changes", flat=True)
    return [c for changes in rows for c in changes if c["role"] != game.human_role]


def test_review_and_exports_of_a_running_game_hide_ai_stance_changes_until_the_review() -> None:
    owner, client = _owner()
    game = create_game(scenario_version=mercury_version(), seed=3, owner=owner)

    def pause_after_a_shift(g: Game, what: str) -> None:
        if g.phase != "REVIEW" and _ai_shifts(g):
            raise _Paused

    with pytest.raises(_Paused):
        play_game(game_id=game.pk, policy=make_policy("advocate", "CHN"), on_progress=pause_after_a_shift)
    game.refresh_from_db()
    shifts = _ai_shifts(game)
    assert shifts and game.phase != "REVIEW"

    def shown(body: bytes) -> list[str]:
        text = body.decode()
        return [c["reason"] for c in shifts if c["reason"] in text or escape(c["reason"]) in text]

    review = client.get(f"/games/{game.pk}/review/")
    as_json = client.get(f"/games/{game.pk}/export.json")
    as_md = client.get(f"/games/{game.pk}/export.md")
    assert review.status_code == as_json.status_code == as_md.status_code == 200
    data = json.loads(as_json.content)
    assert [c for c in data["negotiation"]["stance_changes"] if c["role"] != "CHN"] == []
    assert data["negotiation"]["commitments"] == []
    assert all(e["visibility"] == "public" or "CHN" in e["audience"] for e in data["transcript"])
    assert shown(review.content) == [] and shown(as_md.content) == []

    play_game(game_id=game.pk, policy=make_policy("advocate", "CHN"))  # finished: the review tells all
    assert shown(client.get(f"/games/{game.pk}/review/").content)
    assert shown(client.get(f"/games/{game.pk}/export.md").content)
