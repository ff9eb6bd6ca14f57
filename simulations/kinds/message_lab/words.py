"""Every name of Message Lab's machine that a person reads, in words, in one place: the stages, the concepts'
statuses, the run's phases. Pages (presenters.py) and the Markdown report (report.py) take their words from here;
the ids stay in data- attributes and in the JSON."""

from __future__ import annotations

from .state import ConceptStatus, RoundStage, SimulationStatus

CS = ConceptStatus
STAGE_NAMES = {1: "creation", 2: "critique", 3: "synthesis", 4: "refinement", 5: "presentation"}
PLACED = {CS.WINNER: "Winner", CS.RUNNER_UP: "Runner-up", CS.FINALIST: "Finalist"}
STATUS_WORDS = {
    CS.DRAFT: "being written", CS.SUBMITTED: "new", CS.ANONYMIZED: "in critique", CS.CRITIQUED: "critiqued",
    CS.SCORED: "scored", CS.SURVIVING: "survived", CS.REFINED: "refined", CS.PRESENTED: "presented",
    CS.ELIMINATED: "eliminated", CS.MERGED: "merged", **{k: v.lower() for k, v in PLACED.items()},
}  # fmt: skip
PHASES = {
    SimulationStatus.INITIALIZED: "Starting", SimulationStatus.RUNNING: "Running",
    SimulationStatus.PAUSED_AT_GATE: "Quality gate: your decision", SimulationStatus.COMPLETED: "The moderator decides",
    SimulationStatus.OUTPUT_READY: "Finished", SimulationStatus.FAILED: "Stopped: waiting for you to resume",
}  # fmt: skip
STAGE_PHASES = {
    RoundStage.ROUND_STARTING: "Round starting", RoundStage.ROUND_COMPLETE: "Round complete",
    RoundStage.QUALITY_GATE: "Quality gate", RoundStage.NEXT_ROUND: "Next round",
}  # fmt: skip


def concept_status(status: ConceptStatus) -> str:
    return STATUS_WORDS[status]


def phase_label(phase: str) -> str:
    """A run status or a round stage (the lobby's `phase`, the board's progress line), in words."""
    if phase in PHASES:
        return PHASES[SimulationStatus(phase)]
    if phase in STAGE_PHASES:
        return STAGE_PHASES[RoundStage(phase)]
    if phase.startswith("STAGE_") and phase[6:7].isdigit():
        done = " (done)" if phase.endswith("_COMPLETE") else ""
        return f"Stage {phase[6]}: {STAGE_NAMES[int(phase[6])]}{done}"
    return phase.replace("_", " ").capitalize()
