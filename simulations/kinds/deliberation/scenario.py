"""Deliberation scenario schema and loader (pure: YAML + pydantic).

A scenario names the personas (who votes, who may veto, each one's confidence threshold and expertise), the house
rules that turn a tool's report into a finding of some severity, the checks' limits, and the sample submissions.
"""

from __future__ import annotations

import fnmatch
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from simulations.engine.errors import ScenarioError as BaseScenarioError
from simulations.engine.scenario_files import read_yaml_model

from .state import Severity

Tool = Literal["detect-secrets", "bandit", "ruff", "code-reading"]


class ScenarioError(BaseScenarioError):
    """A scenario file is missing or invalid; the message names the file and the problem."""


class PersonaRole(StrEnum):
    PROPOSER = "proposer"
    CHAIRPERSON = "chairperson"
    OPERATIONS_KNOWLEDGE_MANAGER = "operations_knowledge_manager"
    BUSINESS_DRIVER = "business_driver"
    SECURITY = "security"
    MEMBER = "member"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Persona(Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]{0,15}$")  # a game's seat column holds 16 characters
    name: str
    title: str
    role: PersonaRole
    brief: str
    votes: bool = False  # an elected member: counted by the quorum
    can_veto: bool = False
    confidence_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    expertise: list[str] = Field(
        default_factory=list
    )  # finding categories this persona judges with confidence

    @property
    def label(self) -> str:
        return f"{self.title} ({self.name})"


class HouseRule(Strict):
    """Maps a tool's report to a finding. The first rule that matches wins, so specific rules come first."""

    id: str
    description: str
    tool: Tool
    codes: list[str] = Field(default_factory=list)  # glob patterns on the tool's code; empty matches any
    tool_severities: list[str] = Field(default_factory=list)  # bandit's HIGH/MEDIUM/LOW; empty matches any
    severity: Severity
    category: str
    compromise_allowed: bool = False

    def matches(self, tool: str, code: str, tool_severity: str | None) -> bool:
        if tool != self.tool:
            return False
        if self.codes and not any(fnmatch.fnmatchcase(code, pattern) for pattern in self.codes):
            return False
        return not self.tool_severities or (tool_severity or "").upper() in self.tool_severities


class Checks(Strict):
    ruff_select: list[str] = Field(default_factory=lambda: ["E", "F", "W"])
    timeout_seconds: float = Field(default=20.0, gt=0, le=120)
    max_bytes: int = Field(default=200_000, gt=0, le=200_000)


class Delivery(Strict):
    """The business driver's figures: what a day of delay costs, and how long fixing a finding of each severity
    takes; its cost-of-delay argument is built from these and the findings on the table, never a fixed step."""

    currency: str = Field(default="€", min_length=1, max_length=5)
    cost_per_day: int = Field(default=4000, ge=0)
    fix_days: dict[Severity, float] = Field(
        default_factory=lambda: {Severity.CRITICAL: 3.0, Severity.MAJOR: 1.0, Severity.MINOR: 0.5}
    )

    def delay_days(self, severities: list[Severity]) -> float:
        return sum(self.fix_days.get(s, 0.0) for s in severities)


class Sample(Strict):
    id: str
    label: str
    description: str
    filename: str = "submission.py"
    code: str
    amended: str | None = None  # what the proposer submits after a veto (the offline proposer uses it)


class DeliberationScenario(Strict):
    id: str
    title: str
    description: str
    personas: list[Persona] = Field(min_length=5)
    house_rules: list[HouseRule] = Field(min_length=1)
    checks: Checks = Field(default_factory=Checks)
    delivery: Delivery = Field(default_factory=Delivery)
    samples: list[Sample] = Field(default_factory=list)

    @model_validator(mode="after")
    def _seats_make_a_committee(self) -> DeliberationScenario:
        ids = [p.id for p in self.personas]
        if len(set(ids)) != len(ids):
            raise ValueError("persona ids must be unique")
        for role in (PersonaRole.PROPOSER, PersonaRole.CHAIRPERSON, PersonaRole.BUSINESS_DRIVER):
            if sum(1 for p in self.personas if p.role == role) != 1:
                raise ValueError(f"exactly one persona must have the role {role.value}")
        for role in (PersonaRole.OPERATIONS_KNOWLEDGE_MANAGER, PersonaRole.SECURITY):
            if not any(p.role == role for p in self.personas):
                raise ValueError(f"a persona must have the role {role.value}")
        if not any(p.can_veto for p in self.personas if p.role == PersonaRole.OPERATIONS_KNOWLEDGE_MANAGER):
            raise ValueError("the operations/knowledge manager holds the absolute veto (can_veto: true)")
        for p in self.personas:
            if p.role in (PersonaRole.PROPOSER, PersonaRole.CHAIRPERSON) and (p.votes or p.can_veto):
                raise ValueError(f"{p.id}: the proposer and the chairperson neither vote nor veto")
            if p.can_veto and not p.votes:
                raise ValueError(f"{p.id}: only an elected member (votes: true) can veto")
        if len({s.id for s in self.samples}) != len(self.samples):
            raise ValueError("sample ids must be unique")
        return self

    @property
    def members(self) -> list[str]:
        """The elected members in speaking order (the quorum's denominator before abstentions)."""
        return [p.id for p in self.personas if p.votes]

    def persona(self, seat: str) -> Persona:
        for p in self.personas:
            if p.id == seat:
                return p
        raise KeyError(seat)

    def seat_of(self, role: PersonaRole) -> str:
        return next(p.id for p in self.personas if p.role == role)

    @property
    def chair(self) -> str:
        return self.seat_of(PersonaRole.CHAIRPERSON)

    @property
    def proposer(self) -> str:
        return self.seat_of(PersonaRole.PROPOSER)

    @property
    def business_driver(self) -> str:
        return self.seat_of(PersonaRole.BUSINESS_DRIVER)

    def sample(self, sample_id: str) -> Sample:
        for s in self.samples:
            if s.id == sample_id:
                return s
        raise KeyError(sample_id)

    def rule_for(self, tool: str, code: str, tool_severity: str | None = None) -> HouseRule | None:
        return next((r for r in self.house_rules if r.matches(tool, code, tool_severity)), None)


def load_scenario(path: str | Path) -> DeliberationScenario:
    return read_yaml_model(path, DeliberationScenario, ScenarioError)


SCENARIO_ROOT = Path(__file__).resolve().parents[3] / "scenarios" / "deliberation"


def load_default_scenario() -> DeliberationScenario:
    return load_scenario(SCENARIO_ROOT / "code-review.yaml")
