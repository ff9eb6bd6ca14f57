"""The seed's three state tables (seed 000, "State Machine — Round & Simulation Management"), as data.

A simulation runs rounds; a round walks its stages in one fixed order; a concept walks its lifecycle, once per round
while it survives. Each table lists, for a state, the states it may move to; the machine (to come) refuses any
other move, so the tables are the one place the order lives. Pure: no Django, no litellm."""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar


class SimulationStatus(StrEnum):
    INITIALIZED = "INITIALIZED"
    RUNNING = "RUNNING"
    PAUSED_AT_GATE = "PAUSED_AT_GATE"
    COMPLETED = "COMPLETED"
    OUTPUT_READY = "OUTPUT_READY"
    FAILED = "FAILED"  # with its reason (a model that keeps failing, a budget exhausted); the user may resume


SIMULATION_MOVES: dict[SimulationStatus, frozenset[SimulationStatus]] = {
    SimulationStatus.INITIALIZED: frozenset({SimulationStatus.RUNNING}),
    SimulationStatus.RUNNING: frozenset(
        {SimulationStatus.PAUSED_AT_GATE, SimulationStatus.COMPLETED, SimulationStatus.FAILED}
    ),
    SimulationStatus.PAUSED_AT_GATE: frozenset({SimulationStatus.RUNNING}),
    SimulationStatus.COMPLETED: frozenset({SimulationStatus.OUTPUT_READY, SimulationStatus.FAILED}),
    SimulationStatus.OUTPUT_READY: frozenset(),
    # Resuming returns to where the failure struck: mid-round, or writing the final report.
    SimulationStatus.FAILED: frozenset({SimulationStatus.RUNNING, SimulationStatus.COMPLETED}),
}


class RoundStage(StrEnum):
    ROUND_STARTING = "ROUND_STARTING"
    STAGE_1_CREATING = "STAGE_1_CREATING"  # all participants in parallel
    STAGE_1_COMPLETE = "STAGE_1_COMPLETE"
    STAGE_2_CRITIQUING = "STAGE_2_CRITIQUING"  # all participants critique all concepts, anonymized first
    STAGE_2_COMPLETE = "STAGE_2_COMPLETE"
    STAGE_3_SYNTHESIZING = "STAGE_3_SYNTHESIZING"  # moderator and evaluator
    STAGE_3_COMPLETE = "STAGE_3_COMPLETE"
    STAGE_4_REFINING = "STAGE_4_REFINING"  # surviving authors in parallel
    STAGE_4_COMPLETE = "STAGE_4_COMPLETE"
    STAGE_5_PRESENTING = "STAGE_5_PRESENTING"  # sequential
    STAGE_5_COMPLETE = "STAGE_5_COMPLETE"
    ROUND_COMPLETE = "ROUND_COMPLETE"
    QUALITY_GATE = "QUALITY_GATE"  # only after the rounds configured for a gate
    NEXT_ROUND = "NEXT_ROUND"
    SIMULATION_COMPLETE = "SIMULATION_COMPLETE"


# The stages a round walks through, in order, up to ROUND_COMPLETE; what follows depends on the configuration.
ROUND_ORDER: tuple[RoundStage, ...] = (
    RoundStage.ROUND_STARTING,
    RoundStage.STAGE_1_CREATING,
    RoundStage.STAGE_1_COMPLETE,
    RoundStage.STAGE_2_CRITIQUING,
    RoundStage.STAGE_2_COMPLETE,
    RoundStage.STAGE_3_SYNTHESIZING,
    RoundStage.STAGE_3_COMPLETE,
    RoundStage.STAGE_4_REFINING,
    RoundStage.STAGE_4_COMPLETE,
    RoundStage.STAGE_5_PRESENTING,
    RoundStage.STAGE_5_COMPLETE,
    RoundStage.ROUND_COMPLETE,
)
PARALLEL_STAGES = frozenset(
    {RoundStage.STAGE_1_CREATING, RoundStage.STAGE_2_CRITIQUING, RoundStage.STAGE_4_REFINING}
)


def stage_after(stage: RoundStage, *, round_number: int, rounds: int, gates: frozenset[int]) -> RoundStage:
    """The stage that follows `stage` in round `round_number` of `rounds`, with gates after the rounds in `gates`.
    Precondition: `stage` is not SIMULATION_COMPLETE."""
    if stage in ROUND_ORDER and stage is not RoundStage.ROUND_COMPLETE:
        return ROUND_ORDER[ROUND_ORDER.index(stage) + 1]
    if stage is RoundStage.ROUND_COMPLETE and round_number in gates:
        return RoundStage.QUALITY_GATE
    if stage in (RoundStage.ROUND_COMPLETE, RoundStage.QUALITY_GATE):
        return RoundStage.SIMULATION_COMPLETE if round_number >= rounds else RoundStage.NEXT_ROUND
    if stage is RoundStage.NEXT_ROUND:
        return RoundStage.ROUND_STARTING
    raise ValueError(f"nothing follows {stage}")


class ConceptStatus(StrEnum):
    DRAFT = "DRAFT"  # being written (streaming); not yet committed
    SUBMITTED = "SUBMITTED"
    ANONYMIZED = "ANONYMIZED"  # carries an alias; no critique prompt names its author
    CRITIQUED = "CRITIQUED"
    SCORED = "SCORED"
    SURVIVING = "SURVIVING"
    ELIMINATED = "ELIMINATED"
    MERGED = "MERGED"  # folded into another concept, which carries its best idea on
    REFINED = "REFINED"
    PRESENTED = "PRESENTED"
    WINNER = "WINNER"
    RUNNER_UP = "RUNNER_UP"
    FINALIST = "FINALIST"


CONCEPT_MOVES: dict[ConceptStatus, frozenset[ConceptStatus]] = {
    ConceptStatus.DRAFT: frozenset({ConceptStatus.SUBMITTED}),
    ConceptStatus.SUBMITTED: frozenset({ConceptStatus.ANONYMIZED}),
    ConceptStatus.ANONYMIZED: frozenset({ConceptStatus.CRITIQUED}),
    ConceptStatus.CRITIQUED: frozenset({ConceptStatus.SCORED}),
    ConceptStatus.SCORED: frozenset(
        {ConceptStatus.SURVIVING, ConceptStatus.ELIMINATED, ConceptStatus.MERGED}
    ),
    ConceptStatus.SURVIVING: frozenset({ConceptStatus.REFINED}),
    ConceptStatus.REFINED: frozenset({ConceptStatus.PRESENTED}),
    # A presented concept goes round again (anonymized for the next critique), is cut at a gate, or is placed.
    ConceptStatus.PRESENTED: frozenset(
        {
            ConceptStatus.ANONYMIZED,
            ConceptStatus.ELIMINATED,
            ConceptStatus.WINNER,
            ConceptStatus.RUNNER_UP,
            ConceptStatus.FINALIST,
        }
    ),
    # A gate may rescue an eliminated concept: it re-enters the next round's critique.
    ConceptStatus.ELIMINATED: frozenset({ConceptStatus.ANONYMIZED}),
    ConceptStatus.MERGED: frozenset(),
    ConceptStatus.WINNER: frozenset(),
    ConceptStatus.RUNNER_UP: frozenset(),
    ConceptStatus.FINALIST: frozenset(),
}

PLACINGS = frozenset({ConceptStatus.WINNER, ConceptStatus.RUNNER_UP, ConceptStatus.FINALIST})


S = TypeVar("S", SimulationStatus, ConceptStatus)


def can_move(table: dict[S, frozenset[S]], current: S, target: S) -> bool:
    return target in table[current]
