"""Every kind answers the same bad move with the same status and sentence (the platform's move checks,
`services.policy.move_form` and `services.policy.student_errors`): a form without its version, a NUL in any field, a page behind
the game, too many moves a minute. Parametrized over every registered kind: a kind that answers otherwise fails."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from simulations.kinds import all_kinds, get_kind
from simulations.models import Event, Game, ScenarioVersion
from simulations.services.content.scenarios import find_scenarios, parsed_scenario, store_scenario
from simulations.services.ledger.turns import create_game
from simulations.services.policy.move_form import MissingVersion, NulInForm
from simulations.services.policy.rate_limit import RateLimited
from simulations.services.policy.student_errors import ALREADY_PLAYED

pytestmark = pytest.mark.django_db
SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
KINDS = sorted(kind.name for kind in all_kinds())
HTMX = {"HX-Request": "true"}  # as htmx posts it: the kind answers with its fragment and the real status


def _version(kind: str) -> ScenarioVersion:
    folder = SCENARIOS / ("mercury" if kind == "negotiation" else kind)
    found = [(k, s) for k, s in find_scenarios(folder) if k.name == kind]
    assert found, f"no shipped scenario of {kind}"
    return store_scenario(kind=found[0][0], source=found[0][1], origin="tests")[0]


@pytest.fixture(autouse=True)
def _fresh_counters() -> None:
    cache.clear()


def _game_and_client(kind: str) -> tuple[Game, Client]:
    version = _version(kind)
    _, options = get_kind(kind).admin.rehearsal(parsed_scenario(version))
    owner = User.objects.create_user(f"{kind}-student", password="a-long-test-passphrase-42")
    game = create_game(scenario_version=version, seed=3, owner=owner, options=options)
    client = Client()
    client.force_login(owner)
    return game, client


def _post(client: Client, game: Game, fields: dict[str, Any]) -> tuple[int, str]:
    response = client.post(
        f"/games/{game.pk}/move/", {"event": "ANY", "text": "Hello.", **fields}, headers=HTMX
    )
    return response.status_code, html.unescape(response.content.decode())


def _nothing_committed(game: Game) -> bool:
    return (
        Game.objects.get(pk=game.pk).version == game.version
        and not Event.objects.filter(game=game, seq__gt=Event.objects.filter(game=game).count()).exists()
    )


@pytest.mark.parametrize("kind", KINDS)
def test_a_move_without_its_version_is_400_with_the_same_sentence(kind: str) -> None:
    game, client = _game_and_client(kind)
    status, body = _post(client, game, {})
    assert (status, MissingVersion.MESSAGE in body) == (400, True)
    assert _nothing_committed(game)


@pytest.mark.parametrize("kind", KINDS)
def test_a_nul_in_any_field_is_400_with_the_same_sentence(kind: str) -> None:
    game, client = _game_and_client(kind)
    status, body = _post(client, game, {"version": str(game.version), "text": "Hello.\x00"})
    assert (status, NulInForm.MESSAGE in body) == (400, True)
    assert _nothing_committed(game)


@pytest.mark.parametrize("kind", KINDS)
def test_a_page_behind_the_game_is_409_already_played(kind: str) -> None:
    game, client = _game_and_client(kind)
    status, body = _post(client, game, {"version": str(game.version - 1)})
    assert (status, ALREADY_PLAYED in body) == (409, True)
    assert _nothing_committed(game)


@pytest.mark.parametrize("kind", KINDS)
def test_too_many_moves_a_minute_is_429_with_the_same_sentence(kind: str, settings: Any) -> None:
    settings.MERCURY_RATE_MOVES_PER_MINUTE = 1
    game, client = _game_and_client(kind)
    _post(client, game, {})  # the minute's one move (refused for its missing version, but counted)
    status, body = _post(client, game, {"version": str(game.version)})
    assert (status, RateLimited.MOVES in body) == (429, True)
    assert _nothing_committed(game)
