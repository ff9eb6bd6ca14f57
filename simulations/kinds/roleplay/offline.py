"""The built-in offline model for practice conversations: a judge that reads conditions by meaning (the scenario's
cues, meaning.py; the seed's key words where a clause has none) and a character that answers what the student
actually wrote, in the scenario's own lines.

The judge takes every step the message makes, one after another, in the seed's tie order (FAIL, SUCCESS, deeper,
new): once a step is taken, the transitions it opens are read against the rest of the message. A further step must
be met by cues on words no earlier step used, so that one phrase never counts twice, and is never FAIL: a student
hears the character's reaction to a step before anything they add can end the conversation against them.

The character speaks what the scenario's authors wrote for it: entering a state it says that state's quoted line
(`addprompt`); when the message moved nothing it answers what the student did (asked, named a figure, offered,
accepted, thanked, was rude, or anything else) from the scenario's `voice`, then the `negprompt`'s quoted lines.
It never says a line it has already said in the conversation.
"""

from __future__ import annotations

import re

from simulations.engine import rng

from . import graph, meaning
from .document import RoleplayState
from .machine import MAX_STEPS
from .scenario import TERMINALS, Intent, RoleplayScenario, fill

_QUOTE = re.compile(r"\"([^\"]{3,})\"|“([^”]{3,})”")
NO_LINE = "Go on — I'm listening."  # a state whose author quoted nothing for it
NOTHING_MOVED = "Nothing in this message moved the conversation on."
ONLY_STEPS = "Everything it needs had been reached."


def cues_of(scenario: RoleplayScenario, option: graph.Option) -> dict[str, list[str]]:
    """The cues the scenario gives the condition of `option`."""
    if option.source == "GLOBAL":
        return scenario.tstates[option.target].cues  # type: ignore[index]
    if option.source == "INITIAL":
        return scenario.spec(option.target).cues
    return scenario.spec(option.source).transitions[option.target].cues


def judge(scenario: RoleplayScenario, state: RoleplayState) -> dict[str, object]:
    """The seed's `{is_transition, to_state, explanation}` for the student's latest message, with the further
    steps it took in `also`."""
    message = state.last_student_message()
    said = meaning.read(message)
    names = set(scenario.state_names())
    visited, blocked = list(state.visited), list(state.blocked)
    taken: set[int] = set()
    steps: list[dict[str, str]] = []
    while len(steps) < MAX_STEPS and not graph.terminal(visited):
        for option in graph.by_priority(graph.available(scenario, visited, blocked)):
            if steps and option.target == "FAIL":
                continue
            met = meaning.read_condition(
                option.condition, cues_of(scenario, option), message, said,
                visited=visited, state_names=names, taken=taken, further=bool(steps),
            )  # fmt: skip
            if met.holds:
                break
        else:
            break
        steps.append({"to_state": option.target, "explanation": _because(met)})
        taken |= set(met.used)
        visited, blocked = graph.enter(scenario, visited, blocked, option)
    if not steps:
        return {"is_transition": False, "to_state": "", "explanation": NOTHING_MOVED}
    first, *rest = steps
    return {"is_transition": True, **first, "also": rest}


def _because(met: meaning.Met) -> str:
    if met.quoted:
        return f"You said “{met.quoted}”."
    return ONLY_STEPS if not met.by_words else "The message says what it asks for."


def reply(scenario: RoleplayScenario, state: RoleplayState) -> str:
    """The character's answer after the latest judgment: the lines of the states the message entered, or an answer
    to what the student did; never a line already said."""
    said = {m.text for m in state.messages if m.role == "character"}
    entered = [j.to_state for j in state.judgments if j.turn == state.turns and j.is_transition]
    if entered:
        if graph.terminal(entered):  # the last words: the ending's own line
            entered = [graph.terminal(entered)]
        # A step the same message went beyond (a remake, then moved up the queue) is answered by the deeper one.
        latest = [n for i, n in enumerate(entered) if not _led_on(scenario, n, entered[i + 1 :])]
        lines = [_filled(scenario, state, _line(_addprompt(scenario, name))) for name in latest]
        spoken = " ".join(line for line in lines[-2:] if line and line not in said)
        if spoken:
            return spoken
    for line in answers(scenario, state, intent(state.last_student_message())):
        filled = _filled(scenario, state, line)
        if filled not in said:
            return filled
    return _fresh(scenario, state, said)


def _led_on(scenario: RoleplayScenario, name: str, later: list[str]) -> bool:
    return name not in TERMINALS and any(n in scenario.spec(name).transitions for n in later)


def answers(scenario: RoleplayScenario, state: RoleplayState, what: Intent) -> list[str]:
    """The lines that may answer a message that moved nothing, best first: the scenario's voice for what the
    student did (its order shuffled by the seed, so two conversations differ), then its pressing lines, then the
    negprompt's quoted lines."""
    ordered: list[str] = []
    for key in dict.fromkeys([what, "press"]):
        pool = list(scenario.voice.get(key, []))  # type: ignore[call-overload]
        ordered += rng.shuffled(state.seed, f"roleplay-voice-{key}", pool) if pool else []
    return [*ordered, *quotes(scenario.negprompt), *quotes(scenario.character)]


_ACCEPT = re.compile(
    r"\b(i accept|i'll accept|i will accept|accept (?:the|your|it|that)|deal\b|agreed|sounds good|that works|"
    r"let's do it|i'm in|count me in|happy to (?:take|sign|go ahead)|i'll take it|you have a deal)"
)
_RUDE = re.compile(
    r"\b(stupid|idiot|ridiculous|pathetic|useless|shut up|whatever|calm down|overreact\w*|get over it|"
    r"waste of (?:my )?time|incompetent|clueless|nonsense)\b"
)
_OFFER = re.compile(
    r"\b(i can(?!')|i could(?!n't)|i'll|i will(?! not)|we can(?!')|we could(?!n't)|we'll|we will(?! not)|what if|"
    r"how about|let me|i propose|we propose|"
    r"i'd like to offer|i suggest|we'd)\b"
)
_REFUSING = re.compile(r"no way|\bnot\b|\bnever\b|n't\b|\bcannot\b")
_QUESTION_START = re.compile(
    r"^(what|why|how|who|when|where|which|can|could|would|will|do|does|did|is|are|should|may)\b"
)


def intent(message: str) -> Intent:
    """What the student did in a message, for choosing an answer: rude, accept, question, number, offer, thanks,
    or press (anything else)."""
    text = meaning.normalise(message).strip()
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
    if _RUDE.search(text):
        return "rude"
    if _ACCEPT.search(text) and not re.search(r"(?:\bnot|n't|\bnever|\bcannot)\b[^.!?]{0,20}\baccept", text):
        return "accept"
    if "?" in text or any(_QUESTION_START.match(s) for s in sentences):
        return "question"
    if re.search(r"\d", text):
        return "number"
    if _OFFER.search(text) and not _REFUSING.search(text):  # "there's no way I can …" offers nothing
        return "offer"
    if re.search(r"\b(thank|thanks|appreciate)", text):
        return "thanks"
    return "press"


def _fresh(scenario: RoleplayScenario, state: RoleplayState, said: set[str]) -> str:
    """A line not said yet when every authored one was: the student's own last words taken up (different each
    time the student writes something new), then the character's attention to the clock."""
    words = meaning.read(state.last_student_message()).words[-6:]
    candidates = [f"“{' '.join(words)}” — go on, I'm listening." if words else NO_LINE]
    candidates += [f"*{scenario.botname} waits.* Go on. ({n})" for n in range(state.turns, state.turns + 50)]
    return next((c for c in candidates if c not in said), candidates[-1])


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
