"""A stored Message Lab game read back as the machine's objects (its scenario and state)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from simulations.services.content.scenarios import parsed_scenario

from . import machine
from .document import LabState
from .scenario import MessageLabScenario

if TYPE_CHECKING:
    from simulations.models import Game


def scenario_of(game: Game) -> MessageLabScenario:
    return cast(MessageLabScenario, parsed_scenario(game.scenario))


def state_of(game: Game) -> LabState:
    return machine.restore(game.state)
