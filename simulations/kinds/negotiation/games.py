"""A stored negotiation game read back as the machine's objects (its scenario, state and next step)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

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
    state = parsed_state(game.state)
    game.__dict__["_negotiation_state"] = (game.state, state)
    return state


# The states this process committed last, each with the object it was dumped from, by the identity of the stored
# dict: the game a commit leaves holds that very dict, so its next step, prompt and commit (which would parse it
# again, 0.3-0.5 ms each for a state of 14 KB) take the object instead. Entries hold their dict, so an id is not
# reused while remembered; like `state_of`'s, the objects are read-only.
_COMMITTED: dict[int, tuple[dict[str, Any], GameState]] = {}
COMMITTED_KEPT = 128


def remember_state(stored: dict[str, Any], state: GameState) -> None:
    """`stored` is `state` dumped (a commit's new state): parsing `stored` may return `state` itself."""
    while len(_COMMITTED) >= COMMITTED_KEPT:
        try:
            del _COMMITTED[next(iter(_COMMITTED))]
        except (KeyError, RuntimeError, StopIteration):  # another thread removed it first
            break
    _COMMITTED[id(stored)] = (stored, state)


def parsed_state(stored: dict[str, Any]) -> GameState:
    known = _COMMITTED.get(id(stored))
    if known is not None and known[0] is stored:
        return known[1]
    return GameState.model_validate(stored)


def step_of(game: Game) -> Step:
    return machine.next_step(scenario_of(game), state_of(game))
