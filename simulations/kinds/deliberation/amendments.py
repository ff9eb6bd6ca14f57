"""The proposer's amended code on its way to the machine: checked by the real tools first, then an
AMENDED_CODE_SUBMITTED payload (the machine never sees unchecked code)."""

from __future__ import annotations

from collections.abc import Callable

from . import checks
from .machine import Amendment, Payload
from .offline import AmendedCode, Move
from .scenario import DeliberationScenario
from .state import DeliberationState, Submission

Checker = Callable[[DeliberationScenario, AmendedCode], Submission]


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


def proposer_amendment(scenario: DeliberationScenario, state: DeliberationState) -> AmendedCode | None:
    """What the AI proposer submits after a veto: the sample's own amended code, when the deliberation began with
    a sample that has one."""
    first = state.submissions[0]
    if first.source != "sample":
        return None
    sample = next((s for s in scenario.samples if s.label == first.label), None)
    return sample_amendment(scenario, sample.id) if sample else None
