"""Message Lab scenario schema and loader (pure: YAML + pydantic).

A scenario ships the personas (participants who create and critique, a moderator who keeps the best alive and sets
direction, an evaluator who scores against the brief), the briefs a player may pick, and the defaults of a run:
rounds, the rounds after which a quality gate pauses for the player, the panel, and how many model calls a parallel
stage may have in flight. A run set up from the page may seat another moderator or evaluator: one written for the
role, or a participant left off the panel (`seat_refusal`). Personas are data an admin edits; the offline writer and
the prompts read them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from simulations.engine.errors import ScenarioError as BaseScenarioError
from simulations.engine.scenario_files import read_yaml_model

MIN_PANEL, MAX_PANEL = 3, 7  # participants in one run (seed 000 and issue #12)
MAX_ROUNDS = 12
# A scenario's default calls at once; the set-up page offers 1 to MAX_PANEL (a stage asks one per participant).
MAX_PARALLEL = 16

Seat = Literal["moderator", "evaluator"]
VERBS = {"participant": "create", "moderator": "moderate", "evaluator": "evaluate"}


class ScenarioError(BaseScenarioError):
    """A Message Lab scenario file is missing or invalid; the message names the file and the problem."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Persona(Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    name: str = Field(min_length=1)
    role: Literal["participant", "moderator", "evaluator"] = "participant"
    voice: str = Field(min_length=1)  # how this persona writes and talks
    strengths: list[str] = Field(min_length=1)
    pushes_for: str = Field(min_length=1)  # what every concept of theirs, and every critique, pushes towards
    signature_moves: list[str] = Field(min_length=1)  # concrete moves the offline writer varies between
    critique_style: str = Field(min_length=1)


class Brief(Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    title: str = Field(min_length=1)
    product: str = Field(min_length=1)
    audience: str = Field(min_length=1)
    goal: str = Field(min_length=1)
    constraints: list[str] = Field(default_factory=list)
    proof_points: list[str] = Field(min_length=1)
    keywords: list[str] = Field(min_length=1)
    text: str = Field(min_length=1)  # the brief as the panel reads it (Markdown)


class RunDefaults(Strict):
    rounds: int = Field(default=6, ge=1, le=MAX_ROUNDS)
    gates: list[int] = Field(default_factory=lambda: [3, 6])  # pause for the player after these rounds
    participants: list[str]
    moderator: str
    evaluator: str
    # model calls in flight at once in a parallel stage
    parallel: int = Field(default=4, ge=1, le=MAX_PARALLEL)

    @model_validator(mode="after")
    def _gates_within_the_run(self) -> RunDefaults:
        outside = [g for g in self.gates if not 1 <= g <= self.rounds]
        if outside:
            raise ValueError(f"gates {outside} fall outside rounds 1..{self.rounds}")
        if len(set(self.gates)) != len(self.gates):
            raise ValueError("a round has two gates")
        if not MIN_PANEL <= len(self.participants) <= MAX_PANEL:
            raise ValueError(
                f"a panel has {MIN_PANEL} to {MAX_PANEL} participants, not {len(self.participants)}"
            )
        if len(set(self.participants)) != len(self.participants):
            raise ValueError("a participant is listed twice")
        return self


class MessageLabScenario(Strict):
    kind: Literal[
        "message_lab"
    ]  # declared in the file: a folder may hold one-file scenarios of several kinds
    slug: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    title: str = Field(min_length=1)
    summary: str = ""
    defaults: RunDefaults
    personas: list[Persona]
    briefs: list[Brief] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_cast(self) -> MessageLabScenario:
        for kind, ids in (("persona", [p.id for p in self.personas]), ("brief", [b.id for b in self.briefs])):
            twice = sorted({i for i in ids if ids.count(i) > 1})
            if twice:
                raise ValueError(f"{kind} ids used twice: {twice}")
        by_id = {p.id: p for p in self.personas}
        wanted = [(p, "participant") for p in self.defaults.participants] + [
            (self.defaults.moderator, "moderator"),
            (self.defaults.evaluator, "evaluator"),
        ]
        for persona_id, role in wanted:
            if persona_id not in by_id:
                raise ValueError(f"defaults name {persona_id!r}, which is not a persona")
            if by_id[persona_id].role != role:
                raise ValueError(
                    f"defaults use {persona_id!r} as a {role}, but it is a {by_id[persona_id].role}"
                )
        return self

    def persona(self, persona_id: str) -> Persona:
        for persona in self.personas:
            if persona.id == persona_id:
                return persona
        raise KeyError(persona_id)

    def brief(self, brief_id: str) -> Brief:
        for brief in self.briefs:
            if brief.id == brief_id:
                return brief
        raise KeyError(brief_id)

    def of_role(self, role: str) -> list[Persona]:
        return [p for p in self.personas if p.role == role]

    def may_take(self, seat: Seat) -> list[Persona]:
        """Who may take `seat` in a run: the personas written for it, then any participant left off the panel."""
        return self.of_role(seat) + self.of_role("participant")

    def seat_refusal(self, seat: Seat, persona_id: str, *, panel: Sequence[str], other: str = "") -> str:
        """Why `persona_id` cannot take `seat` in a run with `panel`, whose other seat `other` holds ("" if it
        can), as a sentence for the person setting up the run. A moderator or an evaluator judges the panel's
        concepts, so it cannot have one of its own; the two seats are two people, as in seed 000."""
        try:
            persona = self.persona(persona_id)
        except KeyError:
            return f"There is no persona {persona_id!r}."
        if persona.role not in (seat, "participant"):
            return f"{persona.name} is written to {VERBS[persona.role]}, not to {VERBS[seat]}."
        if persona_id in panel:
            return (
                f"{persona.name} is on the panel and cannot also {VERBS[seat]} it: choose someone else, "
                "or take them off the panel."
            )
        if persona_id == other:
            return f"{persona.name} cannot both moderate and evaluate: choose two different personas."
        return ""


def load_scenario(path: str | Path) -> MessageLabScenario:
    return read_yaml_model(path, MessageLabScenario, ScenarioError)


SCENARIO_ROOT = Path(__file__).resolve().parents[3] / "scenarios" / "message_lab"


def load_default_scenario() -> MessageLabScenario:
    return load_scenario(SCENARIO_ROOT / "message-lab.yaml")
