"""The pure machine played to CONCLUSION with no database, the tests' reference (as tests/kinds/negotiation/driver.py is
Mercury's): the platform's games must end exactly as this loop ends them. The product's one game loop is the
driver (simulations/services/play/drive.py); this one exists so the rules can be tested in milliseconds."""

from __future__ import annotations

from collections.abc import Callable

from simulations.kinds.deliberation import machine, offline
from simulations.kinds.deliberation.amendments import Checker, check_amended, payload_for
from simulations.kinds.deliberation.machine import Step
from simulations.kinds.deliberation.offline import AmendedCode, Move
from simulations.kinds.deliberation.scenario import DeliberationScenario
from simulations.kinds.deliberation.state import DeliberationState

# (scenario, state, step) -> the person's move; it is asked only when the step is the person's seat.
HumanPolicy = Callable[[DeliberationScenario, DeliberationState, Step], Move]
MAX_STEPS = 200


def play(
    scenario: DeliberationScenario,
    state: DeliberationState,
    *,
    human: HumanPolicy | None = None,
    amended: AmendedCode | None = None,
    checker: Checker = check_amended,
    on_outcome: Callable[[machine.Outcome], None] | None = None,
) -> DeliberationState:
    """Play to CONCLUSION. `amended` is what the offline proposer submits after a veto (if anything)."""
    for _ in range(MAX_STEPS):
        step = machine.next_step(scenario, state)
        if step.done:
            return state
        if step.human and human is not None:
            move = human(scenario, state, step)
        else:
            move = offline.decide(scenario, state, step, amended=amended)
        outcome = machine.apply(scenario, state, move.event, payload_for(scenario, move, checker=checker))
        if on_outcome is not None:
            on_outcome(outcome)
        state = outcome.state
    raise RuntimeError(f"the deliberation did not conclude within {MAX_STEPS} steps")
