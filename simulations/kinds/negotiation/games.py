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
    """The game's state as the engine's object, read once per loaded game and state: a turn reads it four or
    five times (its next step, its prompt, the page's render), 0.3 ms each. Read-only: the machine applies
    events to a copy (`machine.apply`), and so must anything else that changes it."""
    memo = game.__dict__.get("_negotiation_state")
    if memo is not None and memo[0] is game.state:
        return cast(GameState, memo[1])
    state = GameState.model_validate(game.state)
    game.__dict__["_negotiation_state"] = (game.state, state)
    return state


def step_of(game: Game) -> Step:
    return machine.next_step(scenario_of(game), state_of(game))
