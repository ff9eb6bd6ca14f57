"""What each Message Lab event carries: one pydantic model per event (pure).

A model's reply, an offline persona's output and a person's gate decision all become one of these before the
machine sees them; the machine then checks them against the state (who may act, which aliases exist). Sizes are
bounded so a runaway model cannot bloat a checkpoint."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_NAME = 80
MAX_TEXT = 3000  # a concept: the seed's briefs ask for 120-150 words, a model may draft longer
MAX_NOTE = 600  # a strength, a weakness, a reason, what changed
MAX_DIRECTION = 1000
MAX_PITCH = 1500
MIN_SCORE, MAX_SCORE = 1.0, 10.0


class Payload(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


Name = Field(min_length=1, max_length=MAX_NAME)
Note = Field(min_length=1, max_length=MAX_NOTE)
Score = Field(ge=MIN_SCORE, le=MAX_SCORE)


class ConceptSubmitted(Payload):
    """STAGE_1_CREATING: one participant's new concept (DRAFT -> SUBMITTED)."""

    persona: str
    name: str = Name
    text: str = Field(min_length=1, max_length=MAX_TEXT)


class CritiqueNote(Payload):
    alias: str  # "Concept B": a critic never sees who wrote it
    strength: str = Note
    weakness: str = Note
    score: float = Score


class CritiqueSubmitted(Payload):
    """STAGE_2_CRITIQUING: one participant's notes on every concept in play but their own."""

    persona: str
    notes: list[CritiqueNote] = Field(min_length=1, max_length=20)


class ScoreNote(Payload):
    alias: str
    score: float = Score
    reason: str = Note


class EvaluationSubmitted(Payload):
    """STAGE_3_SYNTHESIZING, first: the evaluator scores every concept in play against the brief."""

    scores: list[ScoreNote] = Field(min_length=1, max_length=20)


class Decision(Payload):
    alias: str
    verdict: Literal["survive", "eliminate", "merge"]
    into: str = ""  # merge: the alias of the concept that carries this one's best idea on
    reason: str = Note


class SynthesisSubmitted(Payload):
    """STAGE_3_SYNTHESIZING, second: the moderator decides every concept's fate and sets the next direction."""

    decisions: list[Decision] = Field(min_length=1, max_length=20)
    direction: str = Field(min_length=1, max_length=MAX_DIRECTION)


class RefinementSubmitted(Payload):
    """STAGE_4_REFINING: a surviving concept's author writes its next version (SURVIVING -> REFINED)."""

    concept: str  # the concept's id
    name: str = Name
    text: str = Field(min_length=1, max_length=MAX_TEXT)
    changes: str = Note  # what changed
    why: str = Note  # which critique or direction it answers


class PresentationGiven(Payload):
    """STAGE_5_PRESENTING: the author pitches the refined concept to the room (REFINED -> PRESENTED)."""

    concept: str
    text: str = Field(min_length=1, max_length=MAX_PITCH)


class GateDecided(Payload):
    """QUALITY_GATE: the person approves the survivors as they are, or eliminates some, rescues some eliminated
    ones (only while a round remains) and gives a direction that the next round's prompts carry."""

    eliminate: list[str] = Field(default_factory=list, max_length=20)  # concept ids
    rescue: list[str] = Field(default_factory=list, max_length=20)
    direction: str = Field(default="", max_length=MAX_DIRECTION)


class VerdictGiven(Payload):
    """COMPLETED -> OUTPUT_READY: the moderator places the finalists."""

    winner: str  # concept id
    runners_up: list[str] = Field(default_factory=list, max_length=2)
    reasoning: str = Field(min_length=1, max_length=MAX_DIRECTION)


class SimulationFailed(Payload):
    """RUNNING or COMPLETED -> FAILED: a model kept failing or the budget ran out."""

    reason: str = Field(min_length=1, max_length=MAX_NOTE)
    cause: str = ""


class SimulationResumed(Payload):
    """FAILED -> where it failed: the person asks to carry on."""
