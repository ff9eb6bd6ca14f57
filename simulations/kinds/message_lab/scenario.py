"""Message Lab scenario schema and loader (pure: YAML + pydantic).

A scenario ships the personas (participants who create and critique, a moderator who keeps the best alive and sets
direction, an evaluator who scores against the brief), the briefs a player may pick, and the defaults of a run:
rounds, the rounds after which a quality gate pauses for the player, the panel, and how many model calls a parallel
stage may have in flight. Personas are data an admin edits; the offline writer and the prompts read them."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from simulations.engine.errors import ScenarioError as BaseScenarioError
from simulations.engine.scenario_files import read_yaml_model

MIN_PANEL, MAX_PANEL = 3, 7  # participants in one run (seed 000 and issue #12)


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
    rounds: int = Field(default=6, ge=1, le=12)
    gates: list[int] = Field(default_factory=lambda: [3, 6])  # pause for the player after these rounds
    participants: list[str]
    moderator: str
    evaluator: str
    parallel: int = Field(default=4, ge=1, le=16)  # model calls in flight at once in a parallel stage

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


def load_scenario(path: str | Path) -> MessageLabScenario:
    return read_yaml_model(path, MessageLabScenario, ScenarioError)


SCENARIO_ROOT = Path(__file__).resolve().parents[3] / "scenarios" / "message_lab"


def load_default_scenario() -> MessageLabScenario:
    return load_scenario(SCENARIO_ROOT / "message-lab.yaml")
