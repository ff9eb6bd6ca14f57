"""A social-feed run's work, estimated before it starts (issue #64, finding 1): one form used to start a run of
2,000 agents for 200 rounds checkpointed every round (12 minutes of background work, 1.2 GB). The set-up page
shows what a run would cost, refuses one over the limit with a sentence saying what to lower (nothing created, the
form's values kept), takes the largest the limits allow, and the estimate is never below what a run stores."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape

from simulations.kinds import get_kind
from simulations.kinds.social_feed.estimate import run_estimate
from simulations.kinds.social_feed.games import scenario_of, state_of
from simulations.kinds.social_feed.headless import play_headless
from simulations.kinds.social_feed.machine import RunConfig
from simulations.models import Checkpoint, Event, Game, ModelCall, ScenarioVersion, TranscriptEntry
from simulations.services.ledger.turns import create_game
from tests.budget import set_school_limits, town_square

pytestmark = pytest.mark.django_db(transaction=True)

REFUSED = (
    "This run would take about 15 minutes of the server's time and store about 58 MB; the limit for one run is "
    "60 seconds and 50 MB. Lower the number of agents or rounds, or checkpoint less often."
)


@pytest.fixture(autouse=True)
def _school_limits(settings: Any) -> None:
    set_school_limits(settings)


@pytest.fixture
def town() -> ScenarioVersion:
    return town_square()


@pytest.fixture
def client() -> Client:
    c = Client()
    c.force_login(User.objects.create_user("student", password="a-long-test-passphrase-42"))
    return c


def set_up(client: Client, version: ScenarioVersion, **fields: Any) -> Any:
    data = {"agents": 200, "max_rounds": 50, "checkpoint_frequency": 5, "reasoner_enabled": "on"} | fields
    return client.post(f"/social_feed/new/{version.pk}/", data)


def test_the_run_that_filled_a_disk_is_refused_with_what_to_lower(
    client: Client, town: ScenarioVersion
) -> None:
    response = set_up(client, town, agents=2000, max_rounds=200, checkpoint_frequency=1)
    page = response.content.decode()
    assert response.status_code == 400 and escape(REFUSED) in page
    assert not Game.objects.exists()
    assert 'value="2000"' in page and 'value="200"' in page  # the form keeps what was asked for
    assert "This run: about 15 minutes of the server&#x27;s time and 58 MB of storage" in page


def test_the_largest_run_the_limits_allow_is_accepted(client: Client, town: ScenarioVersion) -> None:
    """All 2,000 agents the form offers fit for 47 rounds checkpointed once (about 59 s and 6 MB estimated: a
    real run of it on SQLite took 21 s of CPU, the command's start included, and grew the file by 3.2 MB); one
    round more is over a minute."""
    over = set_up(client, town, agents=2000, max_rounds=48, checkpoint_frequency=50)
    assert over.status_code == 400
    assert escape(
        "This run would take about 61 seconds of the server's time; the limit for one run is 60 seconds."
    ) in (over.content.decode())
    response = set_up(client, town, agents=2000, max_rounds=47, checkpoint_frequency=50)
    game = Game.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/games/{game.pk}/"
    assert state_of(game).config == RunConfig(agents=2000, max_rounds=47, checkpoint_frequency=50)


def test_a_run_over_the_storage_limit_alone_is_refused_and_fits_checkpointed_less_often(
    client: Client, town: ScenarioVersion, settings: Any
) -> None:
    """A run stores what happened in it (stored.py), so within the minute's limit no run reaches the 50 MB; a
    server with little disk lowers the storage limit. At 2 MB, 500 agents for 40 rounds checkpointed every round
    would store about 3 MB (the time is well within the minute), and fit checkpointed every fifth round: fewer
    checkpoints, fewer whole states."""
    settings.MERCURY_MAX_RUN_MB = 2
    response = set_up(client, town, agents=500, max_rounds=40, checkpoint_frequency=1)
    assert response.status_code == 400 and not Game.objects.exists()
    assert (
        escape(
            "This run would store about 3 MB; the limit for one run is 2 MB. Lower the number of agents or rounds, "
            "or checkpoint less often."
        )
        in response.content.decode()
    )
    assert set_up(client, town, agents=500, max_rounds=40, checkpoint_frequency=5).status_code == 302


def test_the_set_up_page_shows_what_the_run_would_cost(client: Client, town: ScenarioVersion) -> None:
    page = client.get(f"/social_feed/new/{town.pk}/").content.decode()
    assert (
        escape(
            "This run: about 3 seconds of the server's time and 814 KB of storage (the limit for one run: 60 seconds "
            "and 50 MB)."
        )
        in page
    )


def _stored_bytes(game: Game) -> int:
    """The JSON the run's rows hold: checkpoints, events, model calls, transcript, the game's state."""

    def size(value: Any) -> int:
        return (
            len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
            if value is not None
            else 0
        )

    rows = [
        *Checkpoint.objects.filter(game=game).values_list("state", "changes"),
        *Event.objects.filter(game=game).values_list("payload", "stance_changes"),
        *ModelCall.objects.filter(game=game).values_list("context", "error"),
        *TranscriptEntry.objects.filter(game=game).values_list("text", "audience"),
    ]
    return sum(size(a) + size(b) for a, b in rows) + size(game.state)


@pytest.mark.parametrize(
    "options",
    [
        {"agents": 30, "max_rounds": 12, "checkpoint_frequency": 1, "reasoner_enabled": True},
        {"agents": 60, "max_rounds": 16, "checkpoint_frequency": 3, "reasoner_enabled": False},
        {"agents": 10, "max_rounds": 40, "checkpoint_frequency": 40, "reasoner_enabled": True},
        {
            "agents": 30,
            "max_rounds": 12,
            "checkpoint_frequency": 1,
            "reasoner_enabled": True,
            "compare": {"setting": "ranking", "ranking": "hot"},
        },  # two towns side by side (twins.py)
    ],
    ids=["every-round", "every-third-no-reasoner", "one-block", "two-towns"],
)
def test_the_estimate_is_not_below_what_a_run_stores(town: ScenarioVersion, options: dict[str, Any]) -> None:
    game = play_headless(create_game(scenario_version=town, seed=11, options=options))
    estimate = run_estimate(scenario_of(game), state_of(game).config, offline=True)
    stored = _stored_bytes(game)
    assert stored > 0 and estimate.storage_bytes >= stored
    assert get_kind("social_feed").work_estimate(game, game.state["config"]) == estimate  # type: ignore[attr-defined]
