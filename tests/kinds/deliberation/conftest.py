from __future__ import annotations

from typing import Any

import pytest

from simulations.kinds.deliberation import checks, machine
from simulations.kinds.deliberation.scenario import DeliberationScenario, load_default_scenario
from simulations.kinds.deliberation.state import DeliberationState, Finding, Severity, Stance, Submission


@pytest.fixture(scope="session")
def scenario() -> DeliberationScenario:  # shadows the Mercury `scenario` fixture in this folder
    return load_default_scenario()


@pytest.fixture(scope="session")
def checked(scenario: DeliberationScenario) -> dict[str, Submission]:
    """The samples checked once per session by the real tools (each check costs about a second)."""
    out = {sample.id: checks.check_sample(scenario, sample.id) for sample in scenario.samples}
    out["secret-amended"] = checks.check_sample(scenario, "secret", amended=True)
    return out


def secret_finding(line: int = 3) -> Finding:
    return Finding(tool="detect-secrets", code="Secret Keyword", message="possible hard-coded secret", line=line,
                   severity=Severity.CRITICAL, category="secret", rule="no-hardcoded-secrets")  # fmt: skip


def shell_finding(line: int = 5) -> Finding:
    return Finding(tool="bandit", code="B602", message="shell=True", line=line, severity=Severity.CRITICAL,
                   category="security", rule="no-high-severity-security", compromise_allowed=True)  # fmt: skip


def style_finding(line: int = 2) -> Finding:
    return Finding(tool="ruff", code="E711", message="comparison to None", line=line, severity=Severity.MINOR,
                   category="style", rule="style")  # fmt: skip


def submission(*findings: Finding, label: str = "change") -> Submission:
    return Submission(version=1, source="paste", label=label, code="x = 1\n", findings=list(findings))


def fresh(sc: DeliberationScenario, *findings: Finding, human_seat: str | None = None) -> DeliberationState:
    return machine.new_deliberation(sc, seed=3, submission=submission(*findings), human_seat=human_seat)


def act(
    sc: DeliberationScenario, st: DeliberationState, event: machine.Event, **payload: Any
) -> DeliberationState:
    return machine.apply(sc, st, event, payload).state


def debate_round(
    sc: DeliberationScenario,
    st: DeliberationState,
    votes: dict[str, Stance],
    *,
    confidence: dict[str, float] | None = None,
) -> DeliberationState:
    """Every elected member speaks once, in the machine's order (which must be the order it asks for)."""
    for _ in sc.members:
        step = machine.next_step(sc, st)
        assert step.actor == machine.Actor.MEMBER and step.seat is not None
        conf = (confidence or {}).get(step.seat, 0.9)
        st = act(sc, st, machine.Event.OPINION_GIVEN, seat=step.seat, stance=votes[step.seat], confidence=conf,
                 text=f"{step.seat} says {votes[step.seat].value}")  # fmt: skip
    return st


def all_members(sc: DeliberationScenario, stance: Stance) -> dict[str, Stance]:
    return dict.fromkeys(sc.members, stance)
