"""A practice conversation's scenario: seed 001's JSON schema as it is (name, botname, goal, character, negprompt,
opening, `states` by branch, `tstates`, skill, level), validated field by field and then as a graph, every problem
named by its path in the document (`states.FrameworkBranch.DefineFramework.transitions.Refine.type`).

Three optional additions (issue #66) let a scenario speak plain words; a seed file without them still loads:
- `plain` on a state or an ending: the step or the ending as the student reads it, in the character's world,
  never a state's name (an ending's: what happens, then after a colon how it comes about, "Dana leaves happy: …");
  the page shows the endings' beside the goal, the end screen and the review the steps';
- `cues` on every condition (an initial state's, a transition's, an ending's): for each word clause of the
  condition (`"offers a refund": [...]`), plain-word paraphrases a student might say; the offline judge reads
  the clause by them (meaning.py) instead of its key words;
- `voice`: lines the offline character says when a message moves nothing, by what the student did (`question`,
  `number`, `offer`, `accept`, `thanks`, `rude`, `press`).

The document is stored exactly as written, so a file exported is the file imported. Pure: pydantic only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from simulations.engine.errors import ScenarioError

from . import conditions

SCENARIO_ROOT = Path(__file__).resolve().parents[3] / "scenarios" / "roleplay"
TERMINALS = ("SUCCESS", "FAIL")
START = "START"
PLACEHOLDERS = frozenset({"username", "botname"})
TEXT = 4000  # characters: a field longer than this is a mistake, not a prompt

Name = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]*$", max_length=80)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


PLAIN = 400  # characters: a step or an ending in plain words is a sentence, not a prompt
LINE = 600  # characters of one cue or one line of the character's voice
MANY = 200  # cues for one clause, or voice lines of one kind: more is a mistake, not coverage
Cue = Annotated[str, Field(max_length=LINE)]
Cues = dict[str, Annotated[list[Cue], Field(max_length=MANY)]]  # a condition's word clause -> its paraphrases
Intent = Literal["question", "number", "offer", "accept", "thanks", "rude", "press"]
VoiceLines = Annotated[list[Annotated[str, Field(min_length=1, max_length=LINE)]], Field(max_length=MANY)]


class Transition(_Strict):
    condition: str = Field(min_length=1, max_length=TEXT)
    type: Literal["parallel", "fork"]
    cues: Cues = Field(default_factory=dict)


class StateSpec(_Strict):
    name: str = Name
    condition: str | None = Field(default=None, min_length=1, max_length=TEXT)  # only initial states have one
    addprompt: str = Field(default="", max_length=TEXT)
    transitions: dict[str, Transition] = Field(default_factory=dict)
    cues: Cues = Field(default_factory=dict)  # for `condition` (an initial state's)
    plain: str = Field(default="", max_length=PLAIN)

    @property
    def initial(self) -> bool:
        return self.condition is not None


class Terminal(_Strict):
    name: Literal["SUCCESS", "FAIL"]
    addprompt: str = Field(default="", max_length=TEXT)
    condition: str = Field(min_length=1, max_length=TEXT)
    cues: Cues = Field(default_factory=dict)
    plain: str = Field(default="", max_length=PLAIN)


class RoleplayScenario(_Strict):
    name: str = Name
    botname: str = Field(min_length=1, max_length=80)
    goal: str = Field(min_length=1, max_length=TEXT)
    character: str = Field(min_length=1, max_length=TEXT)
    negprompt: str = Field(default="", max_length=TEXT)
    opening: str = Field(min_length=1, max_length=TEXT)
    states: dict[str, dict[str, StateSpec]]
    tstates: dict[Literal["SUCCESS", "FAIL"], Terminal]
    skill: str = Field(default="", max_length=80)
    level: str | int = ""
    voice: dict[Intent, VoiceLines] = Field(default_factory=dict)

    # --- what the platform and the engine read ---------------------------------------------------------------

    @property
    def slug(self) -> str:
        """`marketEntryCaseInterview` -> `market-entry-case-interview`."""
        return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", self.name).replace("_", "-").lower()

    @property
    def title(self) -> str:
        words = self.slug.split("-")
        return " ".join([words[0].capitalize(), *words[1:]])

    def branch_of(self, state: str) -> str:
        for branch, states in self.states.items():
            if state in states:
                return branch
        raise KeyError(state)

    def spec(self, state: str) -> StateSpec:
        return self.states[self.branch_of(state)][state]

    def state_names(self) -> list[str]:
        """Every branch state, in file order."""
        return [name for states in self.states.values() for name in states]

    def initial_states(self) -> list[str]:
        return [name for states in self.states.values() for name, spec in states.items() if spec.initial]

    def plain_of(self, name: str) -> str:
        """The words the scenario gives a state or an ending (`plain`), "" when it gives none."""
        if name in TERMINALS:
            return self.tstates[name].plain  # type: ignore[index]
        return self.spec(name).plain if name in self.state_names() else ""


def validate_scenario(document: Any) -> RoleplayScenario:
    """The document as a scenario; pydantic's ValidationError naming each bad field's path, then each problem of
    the graph (unknown targets, unreachable states, names that disagree with their keys, stray placeholders)."""
    scenario = RoleplayScenario.model_validate(document)
    problems = graph_problems(scenario)
    if problems:
        raise ValidationError.from_exception_data(
            "RoleplayScenario",
            [
                InitErrorDetails(type=PydanticCustomError("graph", msg), loc=loc, input=None)
                for loc, msg in problems
            ],
        )
    return scenario


Loc = tuple[str | int, ...]


def graph_problems(s: RoleplayScenario) -> list[tuple[Loc, str]]:
    problems: list[tuple[Loc, str]] = []
    seen: dict[str, str] = {}
    targets = {t for states in s.states.values() for spec in states.values() for t in spec.transitions}
    if not s.states:
        problems.append((("states",), "a scenario needs at least one branch of states"))
    for branch, states in s.states.items():
        if not states:
            problems.append((("states", branch), "a branch needs at least one state"))
        for key, spec in states.items():
            at: Loc = ("states", branch, key)
            if spec.name != key:
                problems.append(((*at, "name"), f"must equal the state's key {key!r}"))
            if key in (START, *TERMINALS):
                problems.append((at, f"{key} is reserved (the start and the terminal states)"))
            if key in seen:
                problems.append(
                    (at, f"a state {key!r} is already in {seen[key]}: names are unique across branches")
                )
            seen.setdefault(key, branch)
            if not spec.initial and key not in targets:
                problems.append((at, "no condition and no transition leads here: it can never be reached"))
            for target in spec.transitions:
                if target == key:
                    problems.append(((*at, "transitions", target), "a state cannot lead to itself"))
    names = set(seen)
    for branch, states in s.states.items():
        for key, spec in states.items():
            for target in spec.transitions:
                if target not in names and target != key:
                    where = ("states", branch, key, "transitions", target)
                    problems.append((where, f"no state named {target!r} (targets are branch states)"))
    if s.states and not s.initial_states():
        problems.append((("states",), "no initial state: give at least one state a condition"))
    for terminal in TERMINALS:
        spec_t = s.tstates.get(terminal)  # type: ignore[call-overload]
        if spec_t is None:
            problems.append((("tstates", terminal), "missing: a conversation ends in SUCCESS or FAIL"))
        elif spec_t.name != terminal:
            problems.append((("tstates", terminal, "name"), f"must be {terminal}"))
    problems.extend(_cue_problems(s))
    problems.extend(_placeholder_problems(s.model_dump()))
    return problems


def _cue_problems(s: RoleplayScenario) -> list[tuple[Loc, str]]:
    """Each cue's key must be a word clause of its condition: a cue for a clause the condition lacks would never
    be read, and the author would not know."""
    found: list[tuple[Loc, str]] = []
    names = set(s.state_names())

    def check(at: Loc, condition: str | None, cues: Cues) -> None:
        clauses = conditions.word_clauses(condition or "", names)
        for key, lines in cues.items():
            if not condition:
                found.append(((*at, "cues"), "cues belong to a condition, and this state has none"))
            elif conditions.clause_key(key) not in clauses:
                found.append(((*at, "cues", key), f"not a clause of the condition (its clauses: "
                              f"{'; '.join(repr(c) for c in clauses.values()) or 'none with words'})"))  # fmt: skip
            if not any(line.strip() for line in lines):
                found.append(((*at, "cues", key), "give at least one paraphrase"))

    for branch, states in s.states.items():
        for key, spec in states.items():
            check(("states", branch, key), spec.condition, spec.cues)
            for target, transition in spec.transitions.items():
                check(("states", branch, key, "transitions", target), transition.condition, transition.cues)
    for name, terminal in s.tstates.items():
        check(("tstates", name), terminal.condition, terminal.cues)
    return found


def _placeholder_problems(node: Any, at: Loc = ()) -> list[tuple[Loc, str]]:
    """`{username}` and `{botname}` are the only placeholders: any other brace is a typo the student would see."""
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _placeholder_problems(v, (*at, k))]
    if isinstance(node, list):  # cue paraphrases and the character's voice lines
        return [p for i, v in enumerate(node) for p in _placeholder_problems(v, (*at, i))]
    if isinstance(node, str):
        unknown = sorted(set(re.findall(r"\{([^{}]*)\}", node)) - PLACEHOLDERS)
        if unknown:
            return [(at, f"unknown placeholder {{{unknown[0]}}}: use {{username}} or {{botname}}")]
    return []


def fill(text: str, *, username: str, botname: str) -> str:
    """A scenario text with its placeholders filled (plain replacement: no format-string surprises)."""
    return text.replace("{username}", username).replace("{botname}", botname)


def load_file(path: str | Path) -> tuple[RoleplayScenario, dict[str, Any]]:
    """A scenario file: the validated scenario and the document exactly as the file has it."""
    file = Path(path)
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScenarioError(f"{file}: cannot read ({exc.strerror})") from exc
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{file}: not valid JSON ({exc})") from exc
    try:
        return validate_scenario(document), document
    except ValidationError as exc:
        raise ScenarioError(f"{file}: {describe(exc)}") from exc


def describe(exc: ValidationError) -> str:
    """Every problem as `path: message`, the path as the document spells it."""
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'scenario'}: {e['msg']}" for e in exc.errors())


def looks_like_roleplay(document: Any) -> bool:
    """A bare seed-001 document (not wrapped in the platform's `{kind, scenario}` envelope)."""
    return isinstance(document, dict) and "tstates" in document and "states" in document
