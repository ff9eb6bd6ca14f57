"""A Message Lab run's state document: what a checkpoint stores and a resume reads back (pure, pydantic).

Close to the seed's JSON (config, current round and stage, rounds with their stage outputs, quality gates,
concepts with scores per round and an evolution history, the transcript); `export.py` writes it in the seed's
exact shape. Deterministic: no clock in here (the ledger's rows carry the times)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .scenario import Brief
from .state import ConceptStatus, RoundStage, SimulationStatus

SCHEMA_VERSION = 1


class Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Config(Doc):
    rounds: int
    gates: list[int]
    participants: list[str]  # in the panel's order: parallel outputs commit in this order
    moderator: str
    evaluator: str
    parallel: int  # model calls in flight at once in a parallel stage
    keep: int  # concepts the moderator keeps alive at most after a round's synthesis
    brief: Brief  # the brief as the panel reads it (a shipped one, or one the player pasted)


class Version(Doc):
    round: int
    version: int  # v1, v2 ...
    name: str
    text: str
    changes: str = ""  # what changed from the version before, and why
    why: str = ""


class Change(Doc):
    """One step of a concept's lifecycle, with its reason: the seed's `concept_eliminated` event and its kin."""

    round: int
    stage: str
    status: ConceptStatus
    reason: str = ""


class Concept(Doc):
    id: str  # concept_<persona>_<nn>
    persona: str
    name: str
    status: ConceptStatus
    round_created: int
    alias: str = ""  # this round's anonymous name ("Concept B") once anonymized; critics see only this
    scores: dict[str, float] = Field(default_factory=dict)  # "round_1": 7.8
    versions: list[Version] = Field(default_factory=list)
    history: list[Change] = Field(default_factory=list)
    merged_into: str = ""
    rescued: bool = False  # brought back at a gate: re-enters the next round's critique

    @property
    def text(self) -> str:
        return self.versions[-1].text


class RoundRecord(Doc):
    number: int
    status: Literal["in_progress", "complete"] = "in_progress"
    focus: str = ""  # what this round's prompts carry: the last direction (moderator's, then the player's)
    creators: list[str] = Field(default_factory=list)  # participants who owe a new concept this round
    aliases: dict[str, str] = Field(default_factory=dict)  # alias -> concept id
    critiques: dict[str, dict[str, Any]] = Field(default_factory=dict)  # persona -> CritiqueSubmitted
    evaluation: dict[str, Any] | None = None  # EvaluationSubmitted
    synthesis: dict[str, Any] | None = None  # SynthesisSubmitted
    refined: list[str] = Field(default_factory=list)  # concept ids, in commit order
    presented: list[str] = Field(default_factory=list)
    direction: str = ""  # the moderator's direction for the next round


class Gate(Doc):
    after_round: int
    status: Literal["pending", "open", "decided"] = "pending"
    decision: dict[str, Any] | None = None  # GateDecided


class Line(Doc):
    """One transcript entry (the seed's transcript.entries)."""

    round: int
    stage: int  # 1-5 for the round's stages, 0 for the simulation's own lines (a gate, the verdict)
    persona: str
    type: (
        str  # concept | critique | evaluation | synthesis | refinement | presentation | gate | verdict | note
    )
    content: str
    concept: str = ""


class Failure(Doc):
    reason: str
    cause: str = ""
    resume_to: SimulationStatus  # RUNNING (mid-round) or COMPLETED (the verdict)


class Verdict(Doc):
    winner: str
    runners_up: list[str]
    finalists: list[str]
    reasoning: str


class LabState(Doc):
    schema_version: int = SCHEMA_VERSION
    seed: int
    status: SimulationStatus = SimulationStatus.INITIALIZED
    config: Config
    round: int = 0
    stage: RoundStage = RoundStage.ROUND_STARTING
    rounds: list[RoundRecord] = Field(default_factory=list)
    gates: list[Gate] = Field(default_factory=list)
    concepts: list[Concept] = Field(default_factory=list)
    transcript: list[Line] = Field(default_factory=list)
    failure: Failure | None = None
    verdict: Verdict | None = None
    event_seq: int = 0

    @property
    def current(self) -> RoundRecord:
        return self.rounds[-1]

    def concept(self, concept_id: str) -> Concept:
        for c in self.concepts:
            if c.id == concept_id:
                return c
        raise KeyError(concept_id)

    def with_status(self, *statuses: ConceptStatus) -> list[Concept]:
        return [c for c in self.concepts if c.status in statuses]

    def gate_after(self, round_number: int) -> Gate | None:
        return next((g for g in self.gates if g.after_round == round_number), None)
