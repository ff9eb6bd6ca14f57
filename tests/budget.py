"""What the work-budget tests share: the shipped limits whatever the environment says, and the town-square feed."""

from __future__ import annotations

from typing import Any

from simulations.kinds import get_kind
from simulations.kinds.social_feed.config import SCENARIO_ROOT
from simulations.models import ScenarioVersion
from simulations.services.content.scenarios import store_scenario


def set_school_limits(settings: Any) -> None:
    """The shipped defaults (mercury/settings.py), whatever the environment running the tests says."""
    settings.MERCURY_MAX_RUN_SECONDS, settings.MERCURY_MAX_RUN_MB = 60, 50
    settings.MERCURY_MAX_RUN_MODEL_CALLS = 2000
    settings.MERCURY_MAX_RUN_SECONDS_PER_USER, settings.MERCURY_MAX_RUN_MB_PER_USER = 90, 75
    settings.MERCURY_MAX_BACKGROUND_RUNS_PER_USER = 2
    settings.MERCURY_MAX_RUN_MB_PER_USER_PER_DAY = 500


def town_square() -> ScenarioVersion:
    kind = get_kind("social_feed")
    [source] = kind.scenarios.read(SCENARIO_ROOT / "town-square.yaml")
    return store_scenario(kind=kind, source=source, origin="tests")[0]
