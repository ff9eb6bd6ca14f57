"""Practice conversations through the real ledger, driver and checkpoints, on the shipped scenarios."""

from __future__ import annotations

import pytest

from simulations.kinds import get_kind
from simulations.kinds.roleplay.scenario import SCENARIO_ROOT
from simulations.models import Game, ScenarioVersion


def store(file: str) -> ScenarioVersion:
    from simulations.services.content.scenarios import store_scenario

    kind = get_kind("roleplay")
    [source] = kind.scenarios.read(SCENARIO_ROOT / file)
    version, _ = store_scenario(kind=kind, source=source, origin="tests")
    return version


@pytest.fixture
def cafe(transactional_db: None) -> ScenarioVersion:
    return store("cafe-barista.json")


def new_chat(version: ScenarioVersion, *, seed: int = 5, username: str = "Sam", **kw: object) -> Game:
    from simulations.services.ledger.turns import create_game

    return create_game(scenario_version=version, seed=seed, options={"username": username}, **kw)  # type: ignore[arg-type]
