"""A stored negotiation game read back as the machine's objects (its scenario, state and next step)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from simulations.services.scenarios import parsed_scenario

from . import machine
from .machine import Step
from .scenario import Scenario
from .state import GameState

if TYPE_CHECKING:
    from simulations.models import Game, ScenarioVersion


def scenario_of_version(version: ScenarioVersion) -> Scenario:
    """A stored negotiation scenario as the engine's Scenario (parsed once per version, cached)."""
    return cast(Scenario, parsed_scenario(version))


def scenario_of(game: Game) -> Scenario:
    return scenario_of_version(game.scenario)


def state_of(game: Game) -> GameState:
    return GameState.model_validate(game.state)


def step_of(game: Game) -> Step:
    return machine.next_step(scenario_of(game), state_of(game))
