"""Bots in the student's seat, for headless play, rehearsals and load: they read the scenario's conditions and say,
in the first person, what the next useful condition asks for.

- `seeker` heads for SUCCESS: it takes the open transitions that lead towards the states SUCCESS names (never a
  fork sibling that leads away), then says what SUCCESS asks once those are reached.
- `quitter` heads for FAIL: it says what the FAIL condition describes.
Each line is checked with the offline judge before it is said, so a bot never trips another condition by accident.

- `script:FILE` (`Script`) says a student's own messages from a YAML or JSON file (`messages: [...]`), one per
  turn, the n-th for the student's n-th message (so a resumed game goes on where it stopped); when they run out it
  raises `ScriptEnded` and the game stays where it is, at the student's turn.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import conditions, graph, offline
from .document import MAX_EXCHANGES, MAX_MESSAGE, Message, RoleplayState
from .scenario import RoleplayScenario

Bot = Callable[[RoleplayScenario, RoleplayState], str]
SMALL_TALK = "Sorry, could you say that again?"


def seeker(scenario: RoleplayScenario, state: RoleplayState) -> str:
    names = set(scenario.state_names())
    needed = {s for alt in conditions.parse(scenario.tstates["SUCCESS"].condition, names)  # type: ignore[index]
              for clause in alt for s in clause.states}  # fmt: skip
    wanted = _leading_to(scenario, needed - set(state.visited))
    options = graph.by_priority(graph.available(scenario, state.visited, state.blocked))
    targets = [o.target for o in options if o.target in wanted] if wanted else ["SUCCESS"]
    return _first_that_works(scenario, state, targets) or SMALL_TALK


def quitter(scenario: RoleplayScenario, state: RoleplayState) -> str:
    return _first_that_works(scenario, state, ["FAIL"]) or SMALL_TALK


BOTS: dict[str, Bot] = {"seeker": seeker, "quitter": quitter}
SCRIPT = "script:"


class ScriptEnded(EOFError):
    """The script's messages are all said: the conversation stops at the student's turn (`manage.py play` reports
    it on its last JSON line)."""


class ScriptFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    messages: list[str] = Field(min_length=1, max_length=MAX_EXCHANGES)


class Script:
    """A student's scripted messages, said in order."""

    def __init__(self, messages: list[str], path: str = "") -> None:
        self.messages, self.path = messages, path

    @classmethod
    def from_file(cls, path: str | Path) -> Script:
        """The file's `messages` (YAML, or JSON, which YAML reads too); ValueError naming the file if it is not
        one, or a message is empty or longer than a student may send."""
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
            messages = ScriptFile.model_validate(data).messages
        except (OSError, yaml.YAMLError, ValidationError, ValueError) as exc:  # ValueError: a NUL in the path
            raise ValueError(f"cannot read script {path}: {exc}") from exc
        for n, text in enumerate(messages, start=1):
            if not text.strip() or len(text) > MAX_MESSAGE:
                raise ValueError(f"script {path}: message {n} must have 1 to {MAX_MESSAGE} characters")
        return cls([m.strip() for m in messages], str(path))

    def __call__(self, scenario: RoleplayScenario, state: RoleplayState) -> str:
        if state.turns >= len(self.messages):
            raise ScriptEnded(
                f"the script's {len(self.messages)} messages are all sent: the conversation stops at the "
                "student's turn"
            )
        return self.messages[state.turns]


def student_bot(spec: str | None) -> Bot:
    """The student `--human` names: seeker (the default), quitter, or `script:FILE`; ValueError for anything
    else (before any game exists)."""
    if spec and spec.startswith(SCRIPT):
        return Script.from_file(spec.removeprefix(SCRIPT))
    if spec in (None, "", "offline"):
        return seeker
    if spec not in BOTS:
        raise ValueError(f"--human takes one of: {', '.join(BOTS)} or {SCRIPT}FILE (the student).")
    return BOTS[spec]


def _leading_to(scenario: RoleplayScenario, goals: set[str]) -> set[str]:
    """The goals and every state from which a transition path reaches one of them."""
    into: dict[str, set[str]] = {}
    for name in scenario.state_names():
        for target in scenario.spec(name).transitions:
            into.setdefault(target, set()).add(name)
    found, todo = set(goals), list(goals)
    while todo:
        for source in into.get(todo.pop(), ()):
            if source not in found:
                found.add(source)
                todo.append(source)
    return found


def _first_that_works(scenario: RoleplayScenario, state: RoleplayState, targets: list[str]) -> str:
    options = graph.available(scenario, state.visited, state.blocked)
    names = set(scenario.state_names())
    for target in targets:
        option = graph.option_for(options, target)
        if option is None:
            continue
        cues = {conditions.clause_key(k): v for k, v in offline.cues_of(scenario, option).items()}
        for alternative in conditions.parse(option.condition, names):
            line = first_person(alternative, botname=scenario.botname)
            # The condition's own words, then with the first paraphrase of each clause the scenario gives cues
            # for (the offline judge reads those clauses by their cues only).
            said = [
                _spoken(c[0]) for c in (cues.get(conditions.clause_key(x.text)) for x in alternative) if c
            ]
            for candidate in (line, f"{line[:-1]}: {', '.join(said)}." if line and said else ""):
                if candidate and _judged_target(scenario, state, candidate) == target:
                    return candidate
    return ""


def _spoken(cue: str) -> str:
    """A cue as a bot says it: each "&" part by its first "|" alternative."""
    return " and ".join(part.split("|")[0].strip() for part in cue.split("&"))


def _judged_target(scenario: RoleplayScenario, state: RoleplayState, line: str) -> str:
    trial = state.model_copy(deep=True)
    trial.messages.append(Message(role="student", text=line))
    verdict = offline.judge(scenario, trial)
    return str(verdict["to_state"]) if verdict["is_transition"] else ""


def first_person(alternative: list[conditions.Clause], *, botname: str) -> str:
    """`{username} asks for market data AND proposes a framework` -> `I ask for market data and propose a
    framework.` (clauses that only name states are left out: they are checks, not words)."""
    parts = []
    for clause in alternative:
        if clause.states:
            continue
        text = clause.text.replace("{botname}", botname)
        text = re.sub(r"^\{username\}\s*", "", text).strip()
        text = re.sub(r"\{username\}('s)?", lambda m: "my" if m.group(1) else "me", text)
        if not text:
            continue
        first, _, rest = text.partition(" ")
        parts.append(f"{_conjugate(first)} {rest}".strip())
    if not parts:
        return ""
    return f"I {' and '.join(parts)}."


def _conjugate(verb: str) -> str:
    """Third person to first: asks -> ask, proposes -> propose, has -> have, is -> am."""
    irregular = {"has": "have", "is": "am", "does": "do", "goes": "go"}
    if verb in irregular:
        return irregular[verb]
    if verb.endswith(("sses", "shes", "ches", "xes")):
        return verb[:-2]
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if verb.endswith("s") and not verb.endswith("ss"):
        return verb[:-1]
    return verb
