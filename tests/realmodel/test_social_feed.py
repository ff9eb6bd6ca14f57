"""A social-feed run on a real model's path (litellm over HTTP to the fake OpenAI-compatible server): the reasoner
reads a valid JSON choice, settles an unusable answer with the offline reasoner and says so; the writer's words
become the posts; the block commits with them and replays to the same run on import."""

from __future__ import annotations

import json

import pytest

from simulations.kinds import get_kind
from simulations.kinds.social_feed.config import SCENARIO_ROOT
from simulations.kinds.social_feed.games import state_of
from simulations.models import Game, ModelCall
from simulations.services.content.scenarios import store_scenario
from simulations.services.ledger.turns import create_game
from simulations.services.play.drive import Outcome, drive_game

from .fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_block_of_rounds_on_a_real_model(fake: FakeOpenAI) -> None:
    kind = get_kind("social_feed")
    [source] = kind.scenarios.read(SCENARIO_ROOT / "town-square.yaml")
    version, _ = store_scenario(kind=kind, source=source, origin="tests")
    game = create_game(scenario_version=version, seed=5, options={"agents": 0, "max_rounds": 8,
                                                                  "checkpoint_frequency": 8})  # fmt: skip
    assert drive_game(game_id=game.pk, stream=False).outcome is Outcome.DONE
    game = Game.objects.get(pk=game.pk)
    calls = ModelCall.objects.filter(game=game, status="ok")
    purposes = set(calls.values_list("purpose", flat=True))
    assert {
        "writer",
        "reasoner",
    } <= purposes  # the six listed residents decided, posted and replied via the model
    played = game.events.get(name="ROUNDS_PLAYED").payload
    assert played["texts"] and all(len(t) <= 600 for t in played["texts"].values())
    posts = state_of(game).simulation["posts"]
    assert set(played["texts"].values()) <= {p["content"] for p in posts}
    assert played["choices"]
    for choice in played["choices"]:  # the fake model answers the reasoner's JSON: its choices are used
        assert choice["reason"] == "It fits what this member follows."

    from simulations.services.files.export import export_game
    from simulations.services.files.import_game import import_game

    copy = import_game(data=json.loads(json.dumps(export_game(game=game))))
    assert state_of(copy).simulation == state_of(game).simulation
