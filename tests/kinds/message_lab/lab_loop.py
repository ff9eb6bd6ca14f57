"""A whole Message Lab run without Django: the machine, the prompts and the offline personas, as the driver would
play them (every request of a stage built from the state the stage found, committed in order)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from simulations.kinds.message_lab import machine, prompts
from simulations.kinds.message_lab.document import Config, LabState
from simulations.kinds.message_lab.scenario import MessageLabScenario

GateChoice = Callable[[LabState], dict[str, Any]]


def config(scenario: MessageLabScenario, **changes: Any) -> Config:
    d = scenario.defaults
    data: dict[str, Any] = {
        "rounds": d.rounds, "gates": d.gates, "participants": d.participants, "moderator": d.moderator,
        "evaluator": d.evaluator, "parallel": d.parallel, "keep": 3, "brief": scenario.briefs[0],
    }  # fmt: skip
    return Config(**(data | changes))


def play(
    scenario: MessageLabScenario,
    cfg: Config,
    *,
    seed: int = 3,
    gate: GateChoice = lambda st: {},
    on_request: Callable[[prompts.Request], None] | None = None,
    on_outcome: Callable[[machine.Outcome], None] | None = None,
) -> LabState:
    outcomes = machine.start(cfg, seed=seed)
    state = outcomes[-1].state
    for o in outcomes:
        if on_outcome:
            on_outcome(o)
    for _ in range(1000):
        step = machine.next_step(state)
        if step.done:
            return state
        moves: list[tuple[str, dict[str, Any]]] = []
        if step.event is machine.Event.GATE_DECIDED:
            moves.append((step.event.value, gate(state)))
        elif step.actor == "ai":
            for req in prompts.requests_for(scenario, state, step):
                if on_request:
                    on_request(req)
                reply = prompts.offline_answer(prompts.with_facts(req))
                assert reply is not None
                moves.append(
                    (req.event.value, prompts.payload_from_reply(req, reply).model_dump(mode="json"))
                )
        else:
            raise AssertionError(f"unexpected step {step}")
        for event, payload in moves:
            for o in machine.apply(state, event, payload):
                state = o.state
                if on_outcome:
                    on_outcome(o)
    raise AssertionError("the run did not end")


def winners(
    scenario: MessageLabScenario, brief_id: str, seeds: Iterable[int], *, rounds: int = 2
) -> tuple[Counter[str], list[LabState]]:
    """Who wins, by persona, over whole runs of one brief (no gates), and the finished states. A panel judging
    comparably good concepts should not crown the same writer run after run; measure it with

        .venv/bin/python -c "from tests.kinds.message_lab.lab_loop import *; from simulations.kinds.message_lab.\\
    scenario import load_default_scenario as d; print(winners(d(), 'darning-kit-launch', range(10), rounds=6)[0])"
    """
    cfg = config(scenario, brief=scenario.brief(brief_id), rounds=rounds, gates=[])
    states = [play(scenario, cfg, seed=seed) for seed in seeds]
    return Counter(st.concept(st.verdict.winner).persona for st in states if st.verdict), states
