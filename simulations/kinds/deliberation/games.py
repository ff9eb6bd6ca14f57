"""A stored deliberation read back as the machine's objects (its scenario and state)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from simulations.services.content.scenarios import parsed_scenario

from . import machine
from .scenario import DeliberationScenario
from .state import DeliberationState

if TYPE_CHECKING:
    from simulations.models import Game


def scenario_of(game: Game) -> DeliberationScenario:
    return cast(DeliberationScenario, parsed_scenario(game.scenario))


def state_of(game: Game) -> DeliberationState:
    return machine.restore(game.state)
