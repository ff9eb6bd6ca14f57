"""The built-in offline model for practice conversations: a judge that reads conditions by their key words
(conditions.py) and a character that speaks the scenario's own lines.

The scenario format has no dialogue, so the offline character speaks what the scenario's authors quoted in its
prompts (our shipped scenarios, and the admin's help, ask for one quoted line in each state's `addprompt`, a few
in `negprompt`, one in each terminal state): entering a state it says that state's line — the data asked for, a
concession, a reaction — and when the student's message moved nothing it presses with one of the negprompt's
lines, never the same as its last words. A real model reads the same text as instructions with an example.
"""

from __future__ import annotations

import re

from simulations.engine import rng

from . import conditions, graph
from .document import RoleplayState
from .scenario import TERMINALS, RoleplayScenario, fill

_QUOTE = re.compile(r"\"([^\"]{3,})\"|“([^”]{3,})”")
NO_LINE = "Go on — I'm listening."  # a state whose author quoted nothing for it


def judge(scenario: RoleplayScenario, state: RoleplayState) -> dict[str, object]:
    """The seed's `{is_transition, to_state, explanation}` for the student's latest message."""
    message = state.last_student_message()
    options = graph.available(scenario, state.visited, state.blocked)
    names = set(scenario.state_names())
    nearest: tuple[float, str] = (0.0, "")
    for option in graph.by_priority(options):
        reading = conditions.read(option.condition, message, visited=state.visited, state_names=names)
        condition = _filled(scenario, state, option.condition)
        if reading.holds:
            said = ", ".join(f"“{w}”" for w in reading.matched)
            because = f"the message says {said}" if said else "the states it names have been reached"
            return {"is_transition": True, "to_state": option.target,
                    "explanation": f"{option.target}: {condition} — {because}."}  # fmt: skip
        if option.target not in TERMINALS and reading.score > nearest[0]:
            nearest = (reading.score, f"{option.target} ({_filled(scenario, state, reading.clause)})")
    closest = f" Closest: {nearest[1]}, partly met." if nearest[1] else ""
    return {
        "is_transition": False,
        "to_state": "",
        "explanation": f"No open condition is fully met.{closest}",
    }


def reply(scenario: RoleplayScenario, state: RoleplayState) -> str:
    """The character's answer after the latest judgment."""
    last = state.judgments[-1] if state.judgments else None
    if last and last.is_transition:
        spoken = _line(_addprompt(scenario, last.to_state))
        return _filled(scenario, state, spoken or NO_LINE)
    lines = quotes(scenario.negprompt) or quotes(scenario.character) or [NO_LINE]
    previous = next((m.text for m in reversed(state.messages) if m.role == "character"), "")
    choices = [line for line in lines if _filled(scenario, state, line) != previous] or lines
    return _filled(scenario, state, rng.choice(state.seed, "roleplay-pushback", choices, state.turns))


def quotes(text: str) -> list[str]:
    return [a or b for a, b in _QUOTE.findall(text)]


def _line(text: str) -> str:
    found = quotes(text)
    return found[0] if found else ""


def _addprompt(scenario: RoleplayScenario, name: str) -> str:
    if name in TERMINALS:
        return scenario.tstates[name].addprompt  # type: ignore[index]
    return scenario.spec(name).addprompt


def _filled(scenario: RoleplayScenario, state: RoleplayState, text: str) -> str:
    return fill(text, username=state.username, botname=scenario.botname)
