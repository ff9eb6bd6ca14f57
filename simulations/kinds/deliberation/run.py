"""Drive a whole deliberation: offline personas everywhere, or a person in one seat (no Django, no litellm).

Every move, whoever makes it, goes through `machine.apply`; amended code is checked by the real tools first and
reaches the machine only as a validated AMENDED_CODE_SUBMITTED payload. The lead will route this loop through
the platform's driver later; until then `play` is the one loop (the `deliberate` command uses it).
"""

from __future__ import annotations

from collections.abc import Callable

from . import checks, machine, offline
from .machine import Amendment, Payload, Step
from .offline import AmendedCode, Move
from .scenario import DeliberationScenario
from .state import DeliberationState, Submission

# (scenario, state, step) -> the person's move; it is asked only when the step is the person's seat.
HumanPolicy = Callable[[DeliberationScenario, DeliberationState, Step], Move]
Checker = Callable[[DeliberationScenario, AmendedCode], Submission]
MAX_STEPS = 200  # far above a 5-round deliberation's need; a loop past it is a bug, not a long debate


def check_amended(scenario: DeliberationScenario, amended: AmendedCode) -> Submission:
    report = checks.run_checks(scenario, data=amended.code, source="paste", filename=amended.filename)
    return report.submission(source="paste", label=amended.label)


def payload_for(
    scenario: DeliberationScenario, move: Move, *, checker: Checker = check_amended
) -> Payload | None:
    if move.amended is not None:
        return Amendment(submission=checker(scenario, move.amended))
    return move.payload


def sample_amendment(scenario: DeliberationScenario, sample_id: str | None) -> AmendedCode | None:
    if sample_id is None:
        return None
    sample = scenario.sample(sample_id)
    if sample.amended is None:
        return None
    return AmendedCode(code=sample.amended, filename=sample.filename, label=f"{sample.label} (amended)")


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
