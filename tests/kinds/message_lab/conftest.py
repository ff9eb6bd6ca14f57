"""Message Lab games through the real ledger, driver and checkpoints: the kind installed for these tests only
(it is not in settings.MERCURY_KINDS until its pages land)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from simulations.kinds import get_kind
from simulations.kinds.message_lab.scenario import MessageLabScenario, load_default_scenario
from simulations.models import Game, ScenarioVersion


@pytest.fixture
def lab_scenario() -> MessageLabScenario:
    return load_default_scenario()


@pytest.fixture
def lab_installed(settings: Any) -> Iterator[None]:
    settings.MERCURY_KINDS = (*settings.MERCURY_KINDS, "message_lab")
    yield


@pytest.fixture
def lab_version(lab_installed: None, transactional_db: None) -> ScenarioVersion:
    from simulations.services.scenarios import store_scenario

    kind = get_kind("message_lab")
    source = kind.source_of(load_default_scenario().model_dump(mode="json"))
    version, _ = store_scenario(kind=kind, source=source, origin="tests", listed=False)
    return version


def new_lab_game(version: ScenarioVersion, *, seed: int = 5, **options: Any) -> Game:
    from simulations.services.turns import create_game

    return create_game(scenario_version=version, seed=seed, options=options)
