"""The simulation export, format "simulation-export/3": one pydantic schema that writes and reads the file.

`services.files.export` builds a `SimulationExport` from the database and dumps it; `services.files.import_game` validates a
file against the same classes, so the two can never drift apart. The document is an envelope any simulation kind
shares (who, what, when, the ledger in order with every event's payload, transcript, votes, model calls and their
cost), defined here, plus what only the kind has, defined by the kind: a subclass of `SimulationExport` (its
`Kind.exports.export_model`, e.g. `simulations/kinds/negotiation/export.py`) with one section named after the kind
(`"kind": "negotiation"` -> the `negotiation` key). An import reads `kind` and validates the whole file with that
kind's class.

Changes from "mercury-game/2" (which, like "mercury-game/1", is refused on import: export the game again):
- `format` is "simulation-export/3" and a new top-level `kind` ("negotiation": Mercury, Plastics and any other negotiation scenario) says which
  section follows.
- every event carries its `payload` (the student's text and choices, an AI's text, a model judge's reading as
  "signals"), so an import applies the events instead of reconstructing them, and model-judged games import.
- `game.scenario` gains `content_hash`; `game.status` is now the game's status (active | finished) and the
  machine state moved to `game.phase`; `game.human_policy` records the scripted student of a headless game.
- every transcript entry has `audience` (empty when public).
- model calls gain `event_seq` (the event they produced; empty for a call that produced nothing),
  `prompt_version` and `error`.
- `roles`, `issues`, `stance_changes`, `commitments` and `summary` moved into the `negotiation` section.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

FORMAT = "simulation-export/3"
OLD_FORMATS = ("mercury-game/1", "mercury-game/2")


class Strict(BaseModel):
    # Unknown fields are refused: a file that says more than the schema knows is not this format.
    model_config = ConfigDict(extra="forbid", validate_by_name=True, serialize_by_alias=True)


class ScenarioRef(Strict):
    slug: str
    version: int = Field(ge=1)
    content_hash: str


class GameInfo(Strict):
    id: int
    scenario: ScenarioRef
    seed: int
    status: Literal["active", "finished"]
    phase: str
    human_role: str | None
    human_policy: dict[str, Any]
    model: str | None  # None: a game from before per-game models (the settings played it)
    judge_model: str | None
    created_at: datetime
    finished_at: datetime | None


class EventInfo(Strict):
    seq: int = Field(ge=1)
    name: str
    from_: str = Field(alias="from")
    to: str
    actor: str
    payload: dict[str, Any]  # checked by the machine when applied, as any move is


class EntryInfo(Strict):
    seq: int = Field(ge=1)
    round: int = Field(ge=0)
    phase: str
    issue: str | None
    speaker: str
    kind: str
    visibility: Literal["public", "private"]
    audience: list[str]
    text: str


class CheckpointInfo(Strict):
    """Where each committed step ended; a checkpoint's state is large and rebuilt by the import."""

    seq: int = Field(ge=1)
    after_event: int = Field(ge=1)
    transcript_seq: int = Field(ge=0)


class VoteInfo(Strict):
    issue: str
    proposal: str
    ballots: dict[str, Literal["yes", "no"]]
    adopted: bool


class ModelCallInfo(Strict):
    seq: int = Field(ge=1)
    event_seq: int | None  # None: the call produced no event (it failed; the game did not move)
    role: str
    purpose: str
    phase: str
    context: list[int]
    prompt_version: str
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    counted_by: str | None
    model: str
    status: str
    error: str | None
    cost_usd: float | None
    outcome: str | None
    outcome_reason: str | None


class RoleUsage(Strict):
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None


class TokenUsage(Strict):
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    per_role: dict[str, RoleUsage]
    counted_by: list[str]


class JudgeCalls(Strict):
    calls: int
    used: int
    fallback: int
    failed: int
    fallback_rate: float | None


# --- the envelope -----------------------------------------------------------------------------------------------


class SimulationExport(Strict):
    """What every kind's export holds. A kind's export class (its `Kind.exports.export_model`) adds its own fields: its
    section, named after the kind, and anything else only it has (the negotiation's `judge_readings`)."""

    format: Literal["simulation-export/3"]
    kind: str
    game: GameInfo
    events: list[EventInfo]
    transcript: list[EntryInfo]
    checkpoints: list[CheckpointInfo]
    votes: list[VoteInfo]
    model_calls: list[ModelCallInfo]
    token_usage: TokenUsage
    judge_calls: JudgeCalls

    @model_validator(mode="after")
    def _one_ledger(self) -> SimulationExport:
        """The ledger is numbered as the database numbers it, in file order."""
        for name, seqs in (
            ("events", [e.seq for e in self.events]),
            ("transcript", [e.seq for e in self.transcript]),
            ("checkpoints", [c.seq for c in self.checkpoints]),
            ("model_calls", [m.seq for m in self.model_calls]),
        ):
            if seqs != list(range(1, len(seqs) + 1)):
                raise ValueError(f"{name}: seq must run 1, 2, 3, ... in file order, without gaps or repeats")
        afters = [c.after_event for c in self.checkpoints]
        if not afters or afters != sorted(set(afters)) or afters[-1] != len(self.events):
            raise ValueError("checkpoints: after_event must increase and end at the last event")
        return self
