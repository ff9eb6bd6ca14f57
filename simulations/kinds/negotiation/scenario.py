"""Scenario schema and loader: pydantic models of a scenario folder (pure: YAML + pydantic only)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from simulations.engine.errors import ScenarioError as BaseScenarioError
from simulations.kinds.negotiation.cues import canonical, parse_cue

RoleKind = Literal["country", "ngo", "chair"]


class ScenarioError(BaseScenarioError):
    """A scenario file is missing or invalid; the message names the file and the field."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Option(Strict):
    id: str
    label: str
    description: str
    keywords: list[str] = Field(default_factory=list)
    # Words that name this option only while its issue is under discussion ("a list" in the debate on products).
    allusions: list[str] = Field(default_factory=list)
    # Plain-word vocabularies (cues.py): how a student may name this option without its keywords.
    cues: list[str] = Field(default_factory=list)

    @field_validator("cues")
    @classmethod
    def _cues_parse(cls, cues: list[str]) -> list[str]:
        return _valid_cues(cues)


def _valid_cues(cues: list[str]) -> list[str]:
    """Each cue parses, and none is written twice (the error names the cue; pydantic names the field)."""
    seen: dict[frozenset[frozenset[str]], str] = {}
    for cue in cues:
        parse_cue(cue)
        form = canonical(cue)
        if form in seen:
            raise ValueError(f"cue {cue!r} repeats cue {seen[form]!r}")
        seen[form] = cue
    return cues


class Issue(Strict):
    id: str
    title: str
    description: str
    options: list[Option] = Field(min_length=2)

    def option(self, option_id: str) -> Option:
        for opt in self.options:
            if opt.id == option_id:
                return opt
        raise KeyError(option_id)


class Offer(Strict):
    id: str
    label: str
    keywords: list[str] = Field(min_length=1)
    cues: list[str] = Field(default_factory=list)

    @field_validator("cues")
    @classmethod
    def _cues_parse(cls, cues: list[str]) -> list[str]:
        return _valid_cues(cues)


class Condition(Strict):
    """`accept` becomes acceptable once every offer in `if_offered` was made, or once `if_adopted` was adopted."""

    accept: str
    if_offered: list[str] = Field(default_factory=list)
    if_adopted: str | None = None

    @model_validator(mode="after")
    def _one_trigger(self) -> Condition:
        if bool(self.if_offered) == bool(self.if_adopted):
            raise ValueError("a condition needs exactly one of if_offered or if_adopted")
        return self


class StanceSpec(Strict):
    preferred: str
    acceptable: list[str] = Field(min_length=1)
    firmness: float = Field(ge=0.0, le=1.0)
    red_lines: list[str] = Field(default_factory=list)
    conditions: list[Condition] = Field(default_factory=list)

    @model_validator(mode="after")
    def _preferred_is_acceptable(self) -> StanceSpec:
        if self.preferred not in self.acceptable:
            raise ValueError(f"preferred option {self.preferred} is not in acceptable")
        if set(self.red_lines) & set(self.acceptable):
            raise ValueError("an option cannot be both acceptable and a red line")
        return self


class Persona(Strict):
    name: str
    title: str


class VariantStance(Strict):
    firmness_delta: float = Field(default=0.0, ge=-0.5, le=0.5)


class OpeningVariant(Strict):
    id: str
    persona: Persona
    summary: str
    stance: VariantStance = Field(default_factory=VariantStance)
    text: str

    @field_validator("text")
    @classmethod
    def _length(cls, text: str) -> str:
        words = len(text.split())
        if not 150 <= words <= 300:
            raise ValueError(f"an opening statement needs 150-300 words, this one has {words}")
        # YAML block text wraps lines for the editor; a single newline is not a break the speaker makes.
        return re.sub(r"(?<!\n)\n(?!\n)", " ", text.strip())


class ConfidentialBrief(Strict):
    interests: str
    priorities: list[str] = Field(min_length=1)
    red_lines: list[str] = Field(min_length=1)
    can_trade: list[str] = Field(min_length=1)


class IssueArguments(Strict):
    support: dict[str, list[str]]
    oppose: dict[str, list[str]]


class TalkLines(Strict):
    openers: list[str] = Field(min_length=1)
    asks: list[str] = Field(min_length=1)
    closers: list[str] = Field(min_length=1)
    persuaded: list[str] = Field(min_length=1)


class Role(Strict):
    id: str
    name: str
    # Other names the seat goes by in plain speech ("the Union", its capital "Ottawa"): read as its name.
    also_called: list[str] = Field(default_factory=list)
    kind: Literal["country", "ngo"]
    votes: bool
    influence: float = Field(ge=0.0, le=1.0)
    can_offer: list[str] = Field(default_factory=list)
    talks_requested_by: list[str] = Field(min_length=1)
    public_brief: str
    confidential_brief: ConfidentialBrief
    stances: dict[str, StanceSpec]
    arguments: dict[str, IssueArguments]
    talk: TalkLines
    openings: list[OpeningVariant] = Field(min_length=3)

    @model_validator(mode="after")
    def _votes_iff_country(self) -> Role:
        if self.votes != (self.kind == "country"):
            raise ValueError("countries vote and NGOs do not")
        return self

    def opening(self, variant_id: str) -> OpeningVariant:
        for variant in self.openings:
            if variant.id == variant_id:
                return variant
        raise KeyError(variant_id)


class ChairLines(Strict):
    round1_intro: list[str]
    round1_call: list[str]
    round1_close: list[str]
    round2_intro: list[str]
    talk_open: list[str]
    talk_interrupt: list[str]
    talk_close: list[str]
    round2_close: list[str]
    round3_intro: list[str]
    issue_intro: list[str]
    debate_round_open: list[str]
    debate_call: list[str]
    debate_pass: list[str]
    proposal: list[str]
    vote_open: list[str]
    vote_record: list[str]
    result_adopted: list[str]
    result_rejected: list[str]
    round3_close: list[str]


# The placeholders each chair line may use; a line using any other one is rejected on load.
CHAIR_PLACEHOLDERS: dict[str, set[str]] = {
    "round1_intro": {"title"},
    "round1_call": {"speaker"},
    "round1_close": set(),
    "round2_intro": set(),
    "talk_open": {"first", "second"},
    "talk_interrupt": {"a", "b"},
    "talk_close": {"a", "b"},
    "round2_close": set(),
    "round3_intro": set(),
    "issue_intro": {"number", "title", "description", "options"},
    "debate_round_open": {"round", "title"},
    "debate_call": {"speaker"},
    "debate_pass": {"speaker"},
    "proposal": {"option_id", "option_label", "title", "supporters"},
    "vote_open": {"option_id", "option_label"},
    "vote_record": {"speaker", "ballot"},
    "result_adopted": {"option_id", "option_label", "title"},
    "result_rejected": {"option_id", "option_label", "title", "against"},
    "round3_close": {"adopted", "rejected"},
}


class Chair(Strict):
    id: str
    name: str
    kind: Literal["chair"]
    persona: Persona
    public_brief: str
    lines: ChairLines

    @model_validator(mode="after")
    def _placeholders(self) -> Chair:
        import string

        for key, allowed in CHAIR_PLACEHOLDERS.items():
            variants: list[str] = getattr(self.lines, key)
            if not variants:
                raise ValueError(f"lines.{key} needs at least one variant")
            for text in variants:
                used = {name for _, name, _, _ in string.Formatter().parse(text) if name}
                if used - allowed:
                    raise ValueError(f"lines.{key} uses unknown placeholders {sorted(used - allowed)}")
        return self


class Scenario(Strict):
    slug: str
    title: str
    summary: str
    chair: Chair
    talk_messages_each: int = Field(ge=1, le=20)
    issues: list[Issue] = Field(min_length=1)
    offers: list[Offer]
    roles: list[Role]
    # Memo of per-text computations (the judge's readings); content is immutable, so entries never go stale.
    _memo: dict[object, object] = PrivateAttr(default_factory=dict)

    def memo(self) -> dict[object, object]:
        # Straight from pydantic's store of private attributes: `self._memo` goes through the model's slow
        # `__getattr__`, and prompts read the memo thousands of times a game.
        private = self.__pydantic_private__
        assert private is not None
        memo: dict[object, object] = private["_memo"]
        if len(memo) > 20_000:
            memo.clear()
        return memo

    @model_validator(mode="after")
    def _cross_references(self) -> Scenario:
        issue_ids = [i.id for i in self.issues]
        offer_ids = {o.id for o in self.offers}
        role_ids = {r.id for r in self.roles}
        options = {o.id: i.id for i in self.issues for o in i.options}
        for role in self.roles:
            where = f"roles/{role.id}"
            if set(role.stances) != set(issue_ids):
                raise ValueError(f"{where}: stances must cover issues {issue_ids}")
            if set(role.arguments) != set(issue_ids):
                raise ValueError(f"{where}: arguments must cover issues {issue_ids}")
            for offer in role.can_offer:
                if offer not in offer_ids:
                    raise ValueError(f"{where}: can_offer names unknown offer {offer}")
            for other in role.talks_requested_by:
                if other not in role_ids or other == role.id:
                    raise ValueError(f"{where}: talks_requested_by names invalid role {other}")
            for issue_id, stance in role.stances.items():
                named = [stance.preferred, *stance.acceptable, *stance.red_lines]
                named += [c.accept for c in stance.conditions]
                for option_id in named:
                    if options.get(option_id) != issue_id:
                        raise ValueError(
                            f"{where}: stances.{issue_id} names option {option_id} of another issue"
                        )
                for cond in stance.conditions:
                    for offer in cond.if_offered:
                        if offer not in offer_ids:
                            raise ValueError(
                                f"{where}: stances.{issue_id} condition names unknown offer {offer}"
                            )
                    if cond.if_adopted and cond.if_adopted not in options:
                        raise ValueError(f"{where}: stances.{issue_id} condition names unknown option")
            for issue in self.issues:
                args = role.arguments[issue.id]
                for opt in issue.options:
                    if not args.support.get(opt.id) or not args.oppose.get(opt.id):
                        raise ValueError(
                            f"{where}: arguments.{issue.id} needs support and oppose lines for {opt.id}"
                        )
        _distinct_cues(self)
        _distinct_names(self)
        if not any(r.votes for r in self.roles):
            raise ValueError("a scenario needs at least one voting role")
        return self

    # --- look-ups used everywhere -------------------------------------------------------------
    def role(self, role_id: str) -> Role:
        for role in self.roles:
            if role.id == role_id:
                return role
        raise KeyError(role_id)

    def issue(self, issue_id: str) -> Issue:
        for issue in self.issues:
            if issue.id == issue_id:
                return issue
        raise KeyError(issue_id)

    def offer(self, offer_id: str) -> Offer:
        for offer in self.offers:
            if offer.id == offer_id:
                return offer
        raise KeyError(offer_id)

    def display_name(self, role_id: str) -> str:
        if role_id == self.chair.id:
            return self.chair.name
        return self.role(role_id).name

    @property
    def role_ids(self) -> list[str]:
        return [r.id for r in self.roles]

    @property
    def countries(self) -> list[str]:
        return [r.id for r in self.roles if r.kind == "country"]

    @property
    def ngos(self) -> list[str]:
        return [r.id for r in self.roles if r.kind == "ngo"]

    @property
    def voters(self) -> list[str]:
        return [r.id for r in self.roles if r.votes]

    def content_hash(self) -> str:
        """A stable digest of the content: same content, same version on load."""
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()


def _distinct_names(scenario: Scenario) -> None:
    """A seat's other names (`also_called`) are its own: no two seats answer to one name, which the judge would
    read as either of them."""
    owner: dict[str, str] = {}
    for role in scenario.roles:
        for name in {role.name, *role.also_called}:
            key = " ".join(name.lower().removeprefix("the ").split())
            if owner.setdefault(key, role.id) != role.id:
                raise ValueError(f"roles/{role.id}: the name {name!r} is also a name of {owner[key]}")


def _distinct_cues(scenario: Scenario) -> None:
    """A cue must not also be a cue or keyword of another option of the same issue (or of another offer): the
    reader could not tell which one a student meant."""

    def clash(where: str, own: list[str], others: dict[str, list[str]]) -> None:
        for cue in own:
            form = canonical(cue)
            for other, words in others.items():
                if any(canonical(w) == form for w in words):
                    raise ValueError(f"{where}.cues: cue {cue!r} is also a cue or keyword of {other}")

    for issue in scenario.issues:
        for opt in issue.options:
            rivals = {f"option {o.id}": [*o.keywords, *o.cues] for o in issue.options if o.id != opt.id}
            clash(f"issues.{issue.id}.options.{opt.id}", opt.cues, rivals)
    for offer in scenario.offers:
        rivals = {f"offer {o.id}": [*o.keywords, *o.cues] for o in scenario.offers if o.id != offer.id}
        clash(f"offers.{offer.id}", offer.cues, rivals)


def _read_yaml(path: Path) -> dict[str, object]:
    if not path.is_file():
        raise ScenarioError(f"{path}: file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{path}: not valid YAML ({exc.__class__.__name__})") from exc
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: expected a mapping at the top level")
    return data


def _explain(path: Path, exc: ValidationError) -> ScenarioError:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "(top level)"
    return ScenarioError(f"{path}: field {field}: {first['msg']}")


def load_scenario_dir(folder: str | Path) -> Scenario:
    """Read and validate a scenario folder; errors name the file and the field at fault."""
    root = Path(folder)
    main = _read_yaml(root / "scenario.yaml")
    chair_path = root / "chair.yaml"
    try:
        chair = Chair.model_validate(_read_yaml(chair_path))
    except ValidationError as exc:
        raise _explain(chair_path, exc) from exc
    role_paths = sorted((root / "roles").glob("*.yaml"))
    if not role_paths:
        raise ScenarioError(f"{root / 'roles'}: no role files")
    roles: list[Role] = []
    for path in role_paths:
        try:
            roles.append(Role.model_validate(_read_yaml(path)))
        except ValidationError as exc:
            raise _explain(path, exc) from exc
        if roles[-1].id != path.stem:
            raise ScenarioError(f"{path}: field id: must equal the file name ({path.stem})")
    # Seat order, whatever the scenario: voting countries first, then NGOs, each alphabetically by id.
    roles.sort(key=lambda r: (0 if r.kind == "country" else 1, r.id))
    try:
        return Scenario.model_validate({**main, "chair": chair, "roles": roles})
    except ValidationError as exc:
        raise _explain(root / "scenario.yaml", exc) from exc
