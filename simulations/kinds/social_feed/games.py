"""A stored social-feed run read back as the machine's objects (its scenario and state)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from simulations.services.content.scenarios import parsed_scenario

from . import machine
from .config import SocialFeedScenario
from .machine import RunState

if TYPE_CHECKING:
    from simulations.models import Game


def scenario_of(game: Game) -> SocialFeedScenario:
    return cast(SocialFeedScenario, parsed_scenario(game.scenario))


def state_of(game: Game) -> RunState:
    return machine.restore(game.state)
