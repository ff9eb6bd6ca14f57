"""Message Lab's machine, played whole by the offline personas (pure): every round and concept transition, the
anonymization, the gate's choices, the refusals."""

from __future__ import annotations

from typing import Any

import pytest

from simulations.engine.errors import IllegalEvent
from simulations.kinds.message_lab import machine, prompts
from simulations.kinds.message_lab.document import LabState
from simulations.kinds.message_lab.machine import Event, Refusal
from simulations.kinds.message_lab.scenario import MessageLabScenario
from simulations.kinds.message_lab.state import (
    CONCEPT_MOVES,
    PLACINGS,
    ROUND_ORDER,
    ConceptStatus,
    RoundStage,
    SimulationStatus,
)

from . import lab_loop

CS = ConceptStatus


def test_a_six_round_run_with_two_gates_walks_the_seeds_tables(lab_scenario: MessageLabScenario) -> None:
    outcomes: list[machine.Outcome] = []
    st = lab_loop.play(lab_scenario, lab_loop.config(lab_scenario), on_outcome=outcomes.append)
    assert st.status is SimulationStatus.OUTPUT_READY and st.round == 6
    stages = [o.target for o in outcomes if o.event is Event.STAGE_ADVANCED]
    per_round = [s.value for s in ROUND_ORDER]
    for n in range(6):  # each round walks the round table in order
        start = stages.index(RoundStage.ROUND_STARTING.value, n * len(per_round) if n else 0)
        assert stages[start : start + len(per_round)] == per_round
    assert [o.event for o in outcomes].count(Event.GATE_OPENED) == 2
    assert [g.after_round for g in st.gates if g.status == "decided"] == [3, 6]
    assert [o.event for o in outcomes][-2:] == [Event.SIMULATION_COMPLETED, Event.VERDICT_GIVEN]
    assert all(r.status == "complete" for r in st.rounds)


def test_every_concept_moves_only_along_the_lifecycle_and_ends_placed_or_out(
    lab_scenario: MessageLabScenario,
) -> None:
    st = lab_loop.play(lab_scenario, lab_loop.config(lab_scenario), seed=8)
    for concept in st.concepts:
        path = [CS.DRAFT, *(h.status for h in concept.history)]
        for a, b in zip(path, path[1:], strict=False):
            assert a == b or b in CONCEPT_MOVES[a], f"{concept.id}: {a} -> {b}"
        assert concept.status in PLACINGS | {CS.ELIMINATED, CS.MERGED}
        assert all(h.reason for h in concept.history)  # every transition says why
        assert [v.version for v in concept.versions] == list(range(1, len(concept.versions) + 1))
    assert sum(c.status is CS.WINNER for c in st.concepts) == 1
    winner = st.concept(st.verdict.winner)  # type: ignore[union-attr]
    assert len(winner.scores) >= 2 and len(winner.versions) >= 2  # it went round, was scored and refined


def test_the_same_seed_replays_the_same_run_and_another_seed_does_not(
    lab_scenario: MessageLabScenario,
) -> None:
    cfg = lab_loop.config(lab_scenario, rounds=3, gates=[2])
    one, two = (lab_loop.play(lab_scenario, cfg, seed=4) for _ in range(2))
    assert one.model_dump() == two.model_dump()
    assert lab_loop.play(lab_scenario, cfg, seed=5).model_dump() != one.model_dump()


def test_no_critique_prompt_names_an_author(lab_scenario: MessageLabScenario) -> None:
    seen: list[prompts.Request] = []
    states: list[LabState] = []

    def record(req: prompts.Request) -> None:
        if req.event is Event.CRITIQUE_SUBMITTED:
            seen.append(req)

    lab_loop.play(lab_scenario, lab_loop.config(lab_scenario, rounds=3, gates=[]), on_request=record,
                  on_outcome=lambda o: states.append(o.state))  # fmt: skip
    assert len(seen) >= 10
    others = [p for p in lab_scenario.of_role("participant")]
    for req in seen:
        text = "\n".join(m["content"] for m in prompts.with_facts(req))  # the offline model's facts included
        for persona in others:
            if persona.id == req.unit.persona:
                continue  # a critic's own name is in its own system prompt; its own concept is not shown
            assert persona.name not in text and persona.name.split()[-1] not in text
            assert f"concept_{persona.id}" not in text and f'"{persona.id}"' not in text
        assert "Concept A" in text


def test_a_signed_concept_is_scrubbed_before_critics_read_it(lab_scenario: MessageLabScenario) -> None:
    st = machine.start(lab_loop.config(lab_scenario, rounds=1, gates=[]), seed=1)[-1].state
    for persona in st.config.participants:
        name = lab_scenario.persona(persona).name
        st = machine.apply(
            st, Event.CONCEPT_SUBMITTED, {"persona": persona, "name": f"By {name}", "text": f"Love, {name}"}
        )[-1].state
    step = machine.next_step(st)
    for req in prompts.requests_for(lab_scenario, st, step):
        text = "\n".join(m["content"] for m in prompts.with_facts(req))
        assert all(
            lab_scenario.persona(p).name not in text for p in st.config.participants if p != req.unit.persona
        )


def test_aliases_are_drawn_afresh_each_round(lab_scenario: MessageLabScenario) -> None:
    st = lab_loop.play(lab_scenario, lab_loop.config(lab_scenario, rounds=4, gates=[]), seed=2)
    by_round = [r.aliases for r in st.rounds]
    followed = {cid for r in by_round for cid in r.values()}
    assert any(
        len({next((a for a, c in r.items() if c == cid), None) for r in by_round if cid in r.values()}) > 1
        for cid in followed
    )


def _at(lab_scenario: MessageLabScenario, stop: Event, **changes: Any) -> LabState:
    """A run stopped at the first step that owes `stop`."""
    cfg = lab_loop.config(lab_scenario, **changes)
    st = machine.start(cfg, seed=6)[-1].state
    while machine.next_step(st).event is not stop:
        step = machine.next_step(st)
        if step.event is Event.GATE_DECIDED:
            st = machine.apply(st, Event.GATE_DECIDED, {})[-1].state
            continue
        for req in prompts.requests_for(lab_scenario, st, step):
            reply = prompts.offline_answer(prompts.with_facts(req))
            assert reply is not None
            st = machine.apply(st, req.event, prompts.payload_from_reply(req, reply))[-1].state
    return st


def test_refusals_change_nothing(lab_scenario: MessageLabScenario) -> None:
    st = _at(lab_scenario, Event.CRITIQUE_SUBMITTED)
    before = st.model_dump()
    critic = machine.owed_critics(st)[0]
    shown = machine.shown_to(st, critic)
    note = {"strength": "s", "weakness": "w", "score": 5}
    with pytest.raises(Refusal, match="cover exactly"):  # a critic may not skip a concept
        machine.apply(
            st, Event.CRITIQUE_SUBMITTED, {"persona": critic, "notes": [note | {"alias": shown[0].alias}]}
        )
    own = next(c for c in st.concepts if c.persona == critic)
    with pytest.raises(Refusal, match="cover exactly"):  # nor critique its own
        notes = [note | {"alias": c.alias} for c in [*shown, own]]
        machine.apply(st, Event.CRITIQUE_SUBMITTED, {"persona": critic, "notes": notes})
    with pytest.raises(IllegalEvent, match="Allowed now: CRITIQUE_SUBMITTED"):
        machine.apply(st, Event.VERDICT_GIVEN, {"winner": own.id, "reasoning": "r"})
    with pytest.raises(Refusal, match="not valid"):
        machine.apply(
            st, Event.CRITIQUE_SUBMITTED, {"persona": critic, "notes": [note | {"alias": "A", "score": 11}]}
        )
    assert st.model_dump() == before


def test_synthesis_keeps_within_the_limit_and_merges_only_into_survivors(
    lab_scenario: MessageLabScenario,
) -> None:
    st = _at(lab_scenario, Event.SYNTHESIS_SUBMITTED)
    aliases = sorted(st.current.aliases)

    def decide(verdicts: list[tuple[str, str]]) -> dict[str, Any]:
        return {
            "direction": "d",
            "decisions": [
                {"alias": a, "verdict": v, "into": i, "reason": "r"}
                for a, (v, i) in zip(aliases, verdicts, strict=True)
            ],
        }

    with pytest.raises(Refusal, match="keep at least one"):
        machine.apply(st, Event.SYNTHESIS_SUBMITTED, decide([("survive", "")] * len(aliases)))
    with pytest.raises(Refusal, match="keep at least one"):
        machine.apply(st, Event.SYNTHESIS_SUBMITTED, decide([("eliminate", "")] * len(aliases)))
    rest = [("eliminate", "")] * (len(aliases) - 3)
    with pytest.raises(Refusal, match="merge into"):  # into an eliminated concept
        machine.apply(
            st,
            Event.SYNTHESIS_SUBMITTED,
            decide([("survive", ""), ("merge", aliases[2]), *rest, ("eliminate", "")]),
        )
    after = machine.apply(
        st,
        Event.SYNTHESIS_SUBMITTED,
        decide([("survive", ""), ("merge", aliases[0]), *rest, ("eliminate", "")]),
    )[-1].state
    host = after.concept(st.current.aliases[aliases[0]])
    merged = after.concept(st.current.aliases[aliases[1]])
    assert merged.status is CS.MERGED and merged.merged_into == host.id
    assert after.stage is RoundStage.STAGE_4_REFINING
    refine = prompts.request(
        lab_scenario, after, Event.REFINEMENT_SUBMITTED, machine.next_step(after).units[0]
    )
    assert merged.text in refine.messages[1]["content"]  # the host's author folds the merged idea in


def test_the_gate_eliminates_rescues_and_carries_the_players_direction(
    lab_scenario: MessageLabScenario,
) -> None:
    st = _at(lab_scenario, Event.GATE_DECIDED, rounds=3, gates=[1, 3])
    assert st.status is SimulationStatus.PAUSED_AT_GATE and st.gates[0].status == "open"
    presented = [c.id for c in st.with_status(CS.PRESENTED)]
    out = [c.id for c in st.with_status(CS.ELIMINATED)]
    with pytest.raises(Refusal, match="at least one"):
        machine.apply(st, Event.GATE_DECIDED, {"eliminate": presented})
    with pytest.raises(Refusal, match="no such concept"):
        machine.apply(st, Event.GATE_DECIDED, {"rescue": presented[:1]})
    decision = {"eliminate": presented[:1], "rescue": out[:1], "direction": "Lead with the 30-day returns"}
    after = machine.apply(st, Event.GATE_DECIDED, decision)[-1].state
    assert after.status is SimulationStatus.RUNNING and after.round == 2
    assert after.concept(presented[0]).status is CS.ELIMINATED
    rescued = after.concept(out[0])
    assert rescued.rescued and rescued.persona not in after.current.creators  # its author writes nothing new
    assert "From the player: Lead with the 30-day returns" in after.current.focus
    step = machine.next_step(after)
    if step.event is Event.CONCEPT_SUBMITTED:  # the next round's prompts carry the player's direction
        req = prompts.request(lab_scenario, after, step.event, step.units[0])
        assert "Lead with the 30-day returns" in req.messages[1]["content"]
    for req in prompts.requests_for(lab_scenario, after, step):
        reply = prompts.offline_answer(prompts.with_facts(req))
        assert reply is not None
        after = machine.apply(after, req.event, prompts.payload_from_reply(req, reply))[-1].state
    assert after.stage is RoundStage.STAGE_2_CRITIQUING
    assert out[0] in after.current.aliases.values()  # the rescued concept is back in the critique
    assert after.concept(out[0]).status is CS.ANONYMIZED


def test_no_rescue_at_the_last_gate(lab_scenario: MessageLabScenario) -> None:
    st = _at(lab_scenario, Event.GATE_DECIDED, rounds=1, gates=[1])
    out = [c.id for c in st.with_status(CS.ELIMINATED)]
    with pytest.raises(Refusal, match="while a round remains"):
        machine.apply(st, Event.GATE_DECIDED, {"rescue": out[:1]})
    done = machine.apply(st, Event.GATE_DECIDED, {})[-1].state
    assert done.status is SimulationStatus.COMPLETED and machine.next_step(done).event is Event.VERDICT_GIVEN


def test_a_failure_resumes_where_it_struck(lab_scenario: MessageLabScenario) -> None:
    st = _at(lab_scenario, Event.REFINEMENT_SUBMITTED)
    owed = machine.next_step(st).units
    failed = machine.apply(st, Event.SIMULATION_FAILED, {"reason": "budget spent", "cause": "budget"})[
        -1
    ].state
    assert (
        failed.status is SimulationStatus.FAILED
        and failed.failure
        and failed.failure.reason == "budget spent"
    )
    with pytest.raises(IllegalEvent):
        machine.apply(failed, Event.REFINEMENT_SUBMITTED, {})
    back = machine.apply(failed, Event.SIMULATION_RESUMED, {})[-1].state
    assert back.status is SimulationStatus.RUNNING and back.failure is None
    assert machine.next_step(back).units == owed  # only what the stage still owes
