"""Message Lab on a real model's path: litellm over HTTP to the fake OpenAI-compatible server, which answers what
a model would (JSON, sometimes fenced or wrapped in prose, sometimes not JSON at all)."""

from __future__ import annotations

import json

import pytest

from simulations.kinds import get_kind
from simulations.kinds.message_lab.games import state_of
from simulations.kinds.message_lab.machine import Event, next_step
from simulations.kinds.message_lab.scenario import load_default_scenario
from simulations.kinds.message_lab.state import ConceptStatus, SimulationStatus
from simulations.models import Game, ModelCall
from simulations.services.content.scenarios import store_scenario
from simulations.services.ledger.turns import create_game
from simulations.services.play.drive import Outcome, drive_game

from .fake_openai import FakeOpenAI, Fault

pytestmark = pytest.mark.django_db(transaction=True)
PANEL = ["direct_response", "storyteller", "skeptic"]


def _game() -> Game:
    kind = get_kind("message_lab")
    version, _ = store_scenario(kind=kind, source=kind.scenarios.source_of(load_default_scenario().model_dump(mode="json")),
                                origin="tests")  # fmt: skip
    return create_game(
        scenario_version=version, seed=3, options={"rounds": 1, "gates": [], "participants": PANEL}
    )


def test_a_parallel_stage_reads_a_real_models_json_however_it_is_wrapped(fake: FakeOpenAI) -> None:
    concept = {
        "name": "Mend it this weekend",
        "text": "Subject: Your first repair\n\nThe kit costs £24 with postage.",
    }
    fake.inject(
        Fault(body=json.dumps(concept)),
        Fault(body="```json\n" + json.dumps(concept | {"name": "Visible and proud"}) + "\n```"),
        Fault(body="Here is my concept:\n" + json.dumps(concept | {"name": "No small print"}) + "\nThanks!"),
    )
    game = _game()
    drive = drive_game(game_id=game.pk, stream=False, max_steps=1)  # the whole creation stage: one step
    assert drive.outcome is Outcome.PAUSED and drive.steps == 1
    game.refresh_from_db()
    st = state_of(game)
    assert sorted(c.name for c in st.concepts) == [
        "Mend it this weekend",
        "No small print",
        "Visible and proud",
    ]
    assert [c.persona for c in st.concepts] == PANEL  # committed in the panel's order, whoever answered first
    assert all(c.status is ConceptStatus.ANONYMIZED for c in st.concepts)
    calls = ModelCall.objects.filter(game=game, status="ok")
    assert calls.count() == 3 and {c.model for c in calls} == {"openai/fake-delegate"}
    assert len(fake.requests("turn")) == 3


def test_replies_that_are_not_json_fail_the_panel_with_the_reason_and_keep_its_work(fake: FakeOpenAI) -> None:
    concept = {"name": "Mend it this weekend", "text": "Subject: Your first repair\n\nThe kit costs £24."}
    fake.inject(*[Fault(body=json.dumps(concept | {"name": f"Concept {n}"})) for n in range(3)])
    game = _game()
    drive_game(game_id=game.pk, stream=False, max_steps=1)
    fake.inject(*[Fault(body="I would rather not critique my colleagues.") for _ in range(6)])
    drive = drive_game(game_id=game.pk, stream=False)
    assert drive.outcome is Outcome.FAILED
    game.refresh_from_db()
    st = state_of(game)
    assert st.status is SimulationStatus.FAILED and st.failure is not None
    assert "critique could not be written" in st.failure.reason and st.failure.cause == "unusable"
    assert len(st.concepts) == 3  # the concepts stay; resuming asks only for the critiques
    assert next_step(st).event is Event.SIMULATION_RESUMED
    assert ModelCall.objects.filter(game=game, status="error", purpose="critique").exists()
