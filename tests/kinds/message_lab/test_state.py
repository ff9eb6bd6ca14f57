"""The seed's state tables for Message Lab: the order a round walks, where gates fall, which moves a concept and a
simulation may make (and which they may not)."""

from __future__ import annotations

import pytest

from simulations.kinds.message_lab.state import (
    CONCEPT_MOVES,
    PLACINGS,
    ROUND_ORDER,
    SIMULATION_MOVES,
    ConceptStatus,
    RoundStage,
    SimulationStatus,
    can_move,
    stage_after,
)

C, S = ConceptStatus, SimulationStatus


def _walk(rounds: int, gates: set[int]) -> list[tuple[int, RoundStage]]:
    stage, number, seen = RoundStage.ROUND_STARTING, 1, []
    while True:
        seen.append((number, stage))
        if stage is RoundStage.SIMULATION_COMPLETE:
            return seen
        stage = stage_after(stage, round_number=number, rounds=rounds, gates=frozenset(gates))
        if stage is RoundStage.ROUND_STARTING:
            number += 1
        assert len(seen) < 500


def test_six_rounds_with_gates_after_three_and_six_walk_the_seeds_stages() -> None:
    walked = _walk(6, {3, 6})
    for number in range(1, 7):
        stages = [s for n, s in walked if n == number]
        assert tuple(stages[: len(ROUND_ORDER)]) == ROUND_ORDER  # every stage, in the seed's order
        after = stages[len(ROUND_ORDER) :]
        gate = [RoundStage.QUALITY_GATE] if number in (3, 6) else []
        end = [RoundStage.SIMULATION_COMPLETE] if number == 6 else [RoundStage.NEXT_ROUND]
        assert after == gate + end, (number, after)


def test_a_run_without_gates_never_pauses_and_one_round_ends_at_once() -> None:
    assert all(stage is not RoundStage.QUALITY_GATE for _, stage in _walk(4, set()))
    assert [s for _, s in _walk(1, set())][-2:] == [RoundStage.ROUND_COMPLETE, RoundStage.SIMULATION_COMPLETE]
    with pytest.raises(ValueError, match="nothing follows"):
        stage_after(RoundStage.SIMULATION_COMPLETE, round_number=1, rounds=1, gates=frozenset())


def test_a_concept_that_survives_two_rounds_and_wins_makes_only_legal_moves() -> None:
    path = [C.DRAFT, C.SUBMITTED, C.ANONYMIZED, C.CRITIQUED, C.SCORED, C.SURVIVING, C.REFINED, C.PRESENTED,
            C.ANONYMIZED, C.CRITIQUED, C.SCORED, C.SURVIVING, C.REFINED, C.PRESENTED, C.WINNER]  # fmt: skip
    assert all(can_move(CONCEPT_MOVES, a, b) for a, b in zip(path, path[1:], strict=False))


@pytest.mark.parametrize(
    ("current", "target"),
    [(C.SUBMITTED, C.SCORED), (C.DRAFT, C.ANONYMIZED), (C.SCORED, C.REFINED), (C.MERGED, C.SURVIVING),
     (C.WINNER, C.ANONYMIZED), (C.REFINED, C.ELIMINATED), (C.CRITIQUED, C.SURVIVING)],
)  # fmt: skip
def test_a_concept_cannot_skip_or_leave_an_end(current: ConceptStatus, target: ConceptStatus) -> None:
    assert not can_move(CONCEPT_MOVES, current, target)


def test_every_concept_status_is_reachable_and_only_placings_and_merges_end() -> None:
    reached, frontier = {C.DRAFT}, [C.DRAFT]
    while frontier:
        for nxt in CONCEPT_MOVES[frontier.pop()]:
            if nxt not in reached:
                reached.add(nxt)
                frontier.append(nxt)
    assert reached == set(C)
    assert {s for s, moves in CONCEPT_MOVES.items() if not moves} == PLACINGS | {C.MERGED}


def test_the_simulation_path_of_the_seed_and_a_failure_resumed() -> None:
    path = [
        S.INITIALIZED,
        S.RUNNING,
        S.PAUSED_AT_GATE,
        S.RUNNING,
        S.FAILED,
        S.RUNNING,
        S.COMPLETED,
        S.OUTPUT_READY,
    ]
    assert all(can_move(SIMULATION_MOVES, a, b) for a, b in zip(path, path[1:], strict=False))
    assert not SIMULATION_MOVES[S.OUTPUT_READY]
    assert not can_move(SIMULATION_MOVES, S.INITIALIZED, S.COMPLETED)
    assert not can_move(SIMULATION_MOVES, S.PAUSED_AT_GATE, S.COMPLETED)  # a gate left open waits
