"""What a student reads in place of the scenario's ids and the character's markup (pure).

- A state or branch is named by words, never by its id: seed 001's format has no label field, so the words come
  from the id itself (`AcknowledgeFeelings` -> "Acknowledge feelings", `EmpathyBranch` -> "Empathy"); the start
  and the two endings have fixed words.
- A judge's explanation may quote a condition ("SUCCESS: Sam has reached TakeOwnership AND PrioritizeOrder …"):
  its ids become their words in quotes and its AND/OR plain conjunctions. The end screen does not show it at all:
  it says how the conversation ended in the character's world, what went well and what was missing, each step in
  the scenario's plain words (`debrief`, `step_words`).
- A character's stage directions and emphasis (`*sets the cup down*`, `**now**`) become emphasis: escaped first,
  then marked (`stage_html`); while a reply streams, its asterisks are dropped (`unstarred`), as a half-written
  direction cannot be matched yet.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

from . import conditions
from .document import RoleplayState
from .machine import LEFT, RAN_OUT
from .scenario import START, RoleplayScenario, fill

FIXED = {START: "Start", "SUCCESS": "Goal reached", "FAIL": "Goal not reached"}

_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# `*words*`, `**words**` or `***words***`, on one line, starting and ending with a visible character.
_STARRED = re.compile(r"(\*{1,3})(?=[^\s*])([^*\n]*?[^\s*])\1")


def words_of(name: str) -> str:
    """An id in words, the first capitalised and acronyms kept: `SendToBackOfQueue` -> "Send to back of queue",
    `AskAboutEUTariffs` -> "Ask about EU tariffs", `ask_about_band` -> "Ask about band"."""
    found = _WORDS.findall(name)
    if not found:
        return name
    kept = [w if len(w) > 1 and w.isupper() else w.lower() for w in found]
    return " ".join([kept[0][:1].upper() + kept[0][1:], *kept[1:]])


def branch_words(name: str) -> str:
    """A branch's words, without the trailing "Branch" every shipped scenario gives its keys."""
    words = words_of(name)
    trimmed = re.sub(r"\s+branch$", "", words, flags=re.IGNORECASE)
    return trimmed or words


def labels(scenario: RoleplayScenario) -> dict[str, str]:
    """Every id a student could meet (states, branches, the start and the endings) -> its words."""
    found = dict(FIXED)
    for branch, states in scenario.states.items():
        found[branch] = branch_words(branch)
        for name in states:
            found[name] = words_of(name)
    return found


def in_sentence(label: str) -> str:
    """A label inside a sentence: "Take ownership" -> "take ownership" ("EU tariffs" stays as it is)."""
    first = label.split(" ", 1)[0]
    return label if len(first) > 1 and first.isupper() else label[:1].lower() + label[1:]


def listing(items: Sequence[str]) -> str:
    """The items as a sentence lists them: "a", "a and b", "a, b and c"."""
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def plain(text: str, scenario: RoleplayScenario) -> str:
    """Free text (a judge's explanation) with every id in words and a condition's AND/OR as plain conjunctions.
    The offline judge starts with the id of the state it chose ("TakeOwnership: …"): that is dropped, as the line
    the explanation follows already names the step."""
    names = labels(scenario)
    ids = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    one = rf"\b(?:{ids})\b"

    def in_words(found: re.Match[str]) -> str:  # "A AND B AND C" -> "“a”, “b” and “c”"; "A" -> "“a”"
        return listing([f"“{names[n]}”" for n in re.split(r"\s+AND\s+", found.group(0))])

    text = re.sub(rf"^\s*{one}:\s*", "", text)
    text = re.sub(rf"{one}(?:\s+AND\s+{one})*", in_words, text)
    text = re.sub(r"\s+AND\s+", " and ", re.sub(r"\s+OR\s+", " or ", text))
    return text[:1].upper() + text[1:]


def step_words(scenario: RoleplayScenario, name: str) -> str:
    """A step as the student reads it in sentences and lists: the scenario's `plain` words for it, else its id in
    words; an ending by its fixed words."""
    if name in FIXED:
        return FIXED[name]
    return scenario.plain_of(name) or words_of(name)


def reached(scenario: RoleplayScenario, state: RoleplayState) -> list[str]:
    """The branch states reached, in the order reached."""
    names = set(scenario.state_names())
    return [v for v in state.visited if v in names]


@dataclass(frozen=True)
class Debrief:
    """What the end screen and the review say, in plain words: how it ended (in the character's world and why),
    the steps that went well, the ones the goal still needed, and the ones that set the student back."""

    world: (
        str  # what happened, in the ending's own words ("Dana leaves happy"), "" if the scenario gives none
    )
    why: str  # who or what ended it
    went_well: list[str]
    missing: list[str]
    set_back: list[str]


def debrief(scenario: RoleplayScenario, state: RoleplayState) -> Debrief:
    """The end of the conversation in plain words (never a condition's text, never a state's id)."""
    steps = reached(scenario, state)
    harmful = set(_named(scenario, "FAIL"))
    wanted = _closest_success(scenario, state)
    missing = [step_words(scenario, s) for s in wanted if s not in state.visited]
    if state.outcome == "FAIL" and not missing and wanted:
        missing = [f"Close it: {scenario.plain_of('SUCCESS') or 'the goal'}"]
    return Debrief(
        world=outcome_words(scenario, state),
        why=outcome_sentence(scenario, state),
        went_well=[step_words(scenario, s) for s in steps if s not in harmful],
        missing=missing,
        set_back=[step_words(scenario, s) for s in steps if s in harmful],
    )


def outcome_words(scenario: RoleplayScenario, state: RoleplayState) -> str:
    """What happened in the character's world: an ending's `plain` up to its first colon ("Dana walks out without
    her coffee: if you …" -> "Dana walks out without her coffee"); the rest says how it comes about, which the goal
    box shows and the end screen's lists say better. "" while it goes on or when the scenario gives no words."""
    if not state.outcome:
        return ""
    said = fill(scenario.plain_of(state.outcome), username=state.username, botname=scenario.botname)
    return said.split(":", 1)[0].strip().rstrip(".")


def outcome_sentence(scenario: RoleplayScenario, state: RoleplayState) -> str:
    """How the conversation ended, in a sentence: the goal reached, or who ended it before. "" while it goes on."""
    if state.outcome == "SUCCESS":
        n = state.turns
        return f"You reached the goal in {n} message{'s' if n != 1 else ''}."
    if state.outcome != "FAIL":
        return ""
    last = next((j for j in reversed(state.judgments) if j.is_transition and j.type == "terminal"), None)
    explanation = last.explanation if last else ""
    if explanation == LEFT:
        return "You ended the conversation before reaching the goal."
    if explanation.endswith(RAN_OUT):
        return RAN_OUT
    return f"{scenario.botname} ended the conversation before the goal was reached."


def _named(scenario: RoleplayScenario, terminal: str) -> list[str]:
    """The states an ending's condition names, in its order."""
    condition = scenario.tstates[terminal].condition  # type: ignore[index]
    alternatives = conditions.parse(condition, set(scenario.state_names()))
    return list(
        dict.fromkeys(s for alternative in alternatives for clause in alternative for s in clause.states)
    )


def _closest_success(scenario: RoleplayScenario, state: RoleplayState) -> list[str]:
    """The states named by the alternative of SUCCESS's condition the student came closest to (most of its states
    reached; the first on a tie)."""
    condition = scenario.tstates["SUCCESS"].condition  # type: ignore[index]
    best: list[str] = []
    best_share = -1.0
    for alternative in conditions.parse(condition, set(scenario.state_names())):
        named = list(dict.fromkeys(s for clause in alternative for s in clause.states))
        share = sum(s in state.visited for s in named) / len(named) if named else 0.0
        if share > best_share:
            best, best_share = named, share
    return best


def stage_html(text: str) -> str:
    """A message as HTML: escaped, then each `*…*` (or `**…**`) as emphasis. Only ever <em> is added."""
    return _STARRED.sub(r"<em>\2</em>", html.escape(text))


def unstarred(text: str) -> str:
    """A reply still streaming, its asterisks dropped (a direction's closing one may not have arrived yet)."""
    return text.replace("*", "")


def stage_marked(text: str, mark: str) -> str:
    """The text with each `*…*` span's asterisks replaced by `mark` (for a writer that escapes `*` itself and puts
    the emphasis back afterwards); any `mark` already in the text is dropped first."""
    return _STARRED.sub(lambda m: f"{mark}{m.group(2)}{mark}", text.replace(mark, ""))
