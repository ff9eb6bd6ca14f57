"""A stored practice conversation read back as the machine's objects (its scenario, the document as stored, and
its state)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from simulations.services.content.scenarios import parsed_scenario

from . import machine
from .document import RoleplayState
from .scenario import RoleplayScenario

if TYPE_CHECKING:
    from simulations.models import Game


def scenario_of(game: Game) -> RoleplayScenario:
    return cast(RoleplayScenario, parsed_scenario(game.scenario))


def document_of(game: Game) -> dict[str, Any]:
    return dict(game.scenario.document)


def state_of(game: Game) -> RoleplayState:
    return machine.restore(game.state)
