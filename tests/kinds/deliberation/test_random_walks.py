"""Random legal play through the machine: one actor at a time, and every deliberation concludes by round 5."""

from __future__ import annotations

import random

import pytest

from simulations.engine.errors import MachineError
from simulations.kinds.deliberation import machine
from simulations.kinds.deliberation.machine import Event
from simulations.kinds.deliberation.scenario import DeliberationScenario
from simulations.kinds.deliberation.state import MAX_ROUNDS, Finding, Stance, State

from .conftest import fresh, secret_finding, shell_finding, style_finding


def random_payload(r: random.Random, st: machine.DeliberationState, step: machine.Step, event: Event) -> dict:
    if event == Event.OPINION_GIVEN:
        return {"seat": step.seat, "stance": r.choice(list(Stance)).value, "confidence": r.random(), "text": "t",
                "fix_items": r.choice([[], ["fix it"]])}  # fmt: skip
    if event == Event.AMENDED_CODE_SUBMITTED:
        findings = r.choice([[], [secret_finding()], [shell_finding()], [style_finding()]])
        return {"submission": st.submission.model_copy(update={"findings": findings}).model_dump()}
    if event == Event.COMPROMISE_OFFERED:
        return {"text": "cost of delay", "conditions": ["flag"]}
    if event in (Event.AMENDMENT_DECLINED, Event.COMPROMISE_DECLINED):
        return {"text": "no"}
    return {}


@pytest.mark.parametrize("start", [(), (secret_finding(),), (shell_finding(),), (style_finding(),)])
def test_random_legal_play_always_concludes_within_five_rounds(
    scenario: DeliberationScenario, start: tuple[Finding, ...]
) -> None:
    for seed in range(60):
        r = random.Random(seed)
        st = fresh(scenario, *start)
        for _ in range(400):
            step = machine.next_step(scenario, st)  # asserts a single actor holds the floor
            if step.done:
                break
            event = r.choice(step.events)
            try:
                st = machine.apply(scenario, st, event, random_payload(r, st, step, event)).state
            except MachineError:
                continue  # e.g. a random veto without a critical finding: refused, nothing changed
        assert st.status == State.CONCLUSION and st.round <= MAX_ROUNDS and st.verdict is not None
        assert [r.number for r in st.rounds] == list(range(1, len(st.rounds) + 1))
