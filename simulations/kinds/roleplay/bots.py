"""Bots in the student's seat, for headless play, rehearsals and load: they read the scenario's conditions and say,
in the first person, what the next useful condition asks for.

- `seeker` heads for SUCCESS: it takes the open transitions that lead towards the states SUCCESS names (never a
  fork sibling that leads away), then says what SUCCESS asks once those are reached.
- `quitter` heads for FAIL: it says what the FAIL condition describes.
Each line is checked with the offline judge before it is said, so a bot never trips another condition by accident.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import conditions, graph, offline
from .document import Message, RoleplayState
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
        for alternative in conditions.parse(option.condition, names):
            line = first_person(alternative, botname=scenario.botname)
            if line and _judged_target(scenario, state, line) == target:
                return line
    return ""


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
