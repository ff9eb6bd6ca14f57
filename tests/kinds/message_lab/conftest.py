"""Message Lab games through the real ledger, driver and checkpoints, on the shipped scenario."""

from __future__ import annotations

from typing import Any

import pytest

from simulations.kinds import get_kind
from simulations.kinds.message_lab.scenario import MessageLabScenario, load_default_scenario
from simulations.models import Game, ScenarioVersion


@pytest.fixture
def lab_scenario() -> MessageLabScenario:
    return load_default_scenario()


@pytest.fixture
def lab_version(transactional_db: None) -> ScenarioVersion:
    from simulations.services.content.scenarios import store_scenario

    kind = get_kind("message_lab")
    source = kind.scenarios.source_of(load_default_scenario().model_dump(mode="json"))
    version, _ = store_scenario(kind=kind, source=source, origin="tests")
    return version


def new_lab_game(version: ScenarioVersion, *, seed: int = 5, **options: Any) -> Game:
    from simulations.services.ledger.turns import create_game

    return create_game(scenario_version=version, seed=seed, options=options)
