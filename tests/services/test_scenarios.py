from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from simulations.kinds.negotiation.games import scenario_of_version
from simulations.models import ScenarioRole, ScenarioVersion
from simulations.services.content.scenarios import load_scenario
from simulations.services.ledger.turns import create_game
from tests.conftest import SCENARIO_DIR

pytestmark = pytest.mark.django_db


def test_loading_is_idempotent_and_changes_make_new_versions(tmp_path: Path) -> None:
    first, created = load_scenario(folder=SCENARIO_DIR)
    assert created and first.version == 1
    again, created = load_scenario(folder=SCENARIO_DIR)
    assert not created and again.pk == first.pk
    assert ScenarioRole.objects.filter(scenario=first).count() == 9
    game = create_game(scenario_version=first, seed=1)

    folder = tmp_path / "mercury"
    shutil.copytree(SCENARIO_DIR, folder)
    path = folder / "roles" / "USA.yaml"
    data = yaml.safe_load(path.read_text())
    data["public_brief"] += " Edited."
    path.write_text(yaml.safe_dump(data))
    second, created = load_scenario(folder=folder)
    assert created and second.version == 2
    assert ScenarioVersion.objects.filter(slug="mercury").count() == 2
    # Games stay pinned to the version they started with.
    game.refresh_from_db()
    assert game.scenario_id == first.pk
    assert (
        scenario_of_version(first).role("USA").public_brief
        != scenario_of_version(second).role("USA").public_brief
    )
