"""Reading a transition's condition without a model: the offline judge's rules (pure).

A condition is split on ` OR ` into alternatives and each alternative on ` AND ` into clauses (AND binds tighter;
the scenario format has no parentheses). A clause that names scenario states ("{username} has reached
RefineFramework") holds when those states are visited. Any other clause is reduced to its key words — what is left
after the placeholders, function words and the generic verbs of a condition ("asks", "proposes", "mentions" …) —
and holds when at least half of them (rounded up) appear in the student's latest message, compared by a crude
stem; a key word the student negates ("I will not refund") does not count. A clause with no key word never holds:
the judge stays conservative, as the seed asks of the model.

That key-word rule is the fallback for a clause its scenario gives no cues: meaning.py reads a clause by its cues
(plain-word paraphrases) when it has them. `clause_key` and `word_clauses` name the clauses cues are given for.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from dataclasses import dataclass

FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "for",
        "and",
        "or",
        "with",
        "about",
        "on",
        "in",
        "their",
        "his",
        "her",
        "your",
        "this",
        "that",
        "it",
        "is",
        "are",
        "be",
        "by",
        "as",
        "at",
        "from",
        "what",
        "which",
        "who",
        "how",
        "when",
        "some",
        "any",
        "more",
        "most",
        "specific",
        "clearly",
        "explicitly",
    ]
)
GENERIC_VERBS = frozenset(
    [
        "ask",
        "propose",
        "say",
        "mention",
        "suggest",
        "offer",
        "make",
        "show",
        "give",
        "state",
        "express",
        "tell",
        "talk",
        "explain",
        "describe",
        "respond",
        "reply",
        "use",
        "do",
        "has",
        "have",
        "reached",
    ]
)
NEGATIONS = frozenset({"not", "no", "never", "without", "don't", "won't", "can't", "dont", "wont", "cant"})
NEGATION_REACH = 2  # words before a key word that a negation covers

_WORD = re.compile(r"[a-z0-9%']+")
_SUFFIXES = ("ments", "ment", "ions", "ion", "ing", "ed", "es", "ly", "s")


def stem(word: str) -> str:
    """A crude stem: `apologizes`, `apologized`, `apologize` -> `apologiz`; `salaries` -> `salary`."""
    w = word.lower().strip("'")
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


_GENERIC_STEMS = frozenset(stem(v) for v in GENERIC_VERBS) | {"say", "said", "tell", "told", "made", "gave"}


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("’", "'"))


@dataclass(frozen=True)
class Clause:
    text: str
    states: tuple[str, ...]  # the scenario states it names: then it is a check of the visited states
    keys: tuple[str, ...]  # stems of its key words, in order, once each

    @property
    def needed(self) -> int:
        return math.ceil(len(self.keys) / 2)


def parse(condition: str, state_names: Collection[str]) -> list[list[Clause]]:
    """The condition as alternatives of clauses."""
    alternatives = []
    for alternative in re.split(r"\s+OR\s+", condition.strip()):
        clauses = []
        for part in re.split(r"\s+AND\s+", alternative.strip()):
            text = part.strip()
            named = tuple(n for n in re.findall(r"[A-Za-z][A-Za-z0-9_]*", text) if n in state_names)
            bare = re.sub(r"\{[^{}]*\}", " ", text)
            keys: list[str] = []
            for word in words(bare):
                s = stem(word)
                if word in FUNCTION_WORDS or s in _GENERIC_STEMS or s in keys or not s:
                    continue
                keys.append(s)
            clauses.append(Clause(text=text, states=named, keys=tuple(keys)))
        alternatives.append(clauses)
    return alternatives


def clause_key(text: str) -> str:
    """A clause as a scenario's cues name it: the student's placeholder dropped, spaces and case folded
    (`{username} offers a refund` -> `offers a refund`)."""
    return " ".join(re.sub(r"\{username\}(?:'s)?", " ", text).split()).lower().strip(" .")


def word_clauses(condition: str, state_names: Collection[str]) -> dict[str, str]:
    """The condition's clauses that are about words (not a check of states reached), by their cue key."""
    found = (c for alt in parse(condition, state_names) for c in alt if not c.states and clause_key(c.text))
    return {clause_key(c.text): c.text for c in found}


@dataclass(frozen=True)
class Reading:
    """How a condition reads against a message: whether it holds, and the words that made it (or came closest)."""

    holds: bool
    matched: tuple[str, ...]  # the message's words that matched key words
    score: float  # share of the best alternative's key words found (1.0 for a state check that holds)
    clause: str  # the clause that came closest, for "nearest" explanations


def read(condition: str, message: str, *, visited: Collection[str], state_names: Collection[str]) -> Reading:
    said = words(message)
    stems = [stem(w) for w in said]
    counted = _unnegated(said, stems)
    best = Reading(False, (), 0.0, "")
    for alternative in parse(condition, state_names):
        holds, matched, shares, weakest = True, [], [], ""
        for clause in alternative:
            if clause.states:
                ok = all(s in visited for s in clause.states)
                share = 1.0 if ok else 0.0
            else:
                found = [k for k in clause.keys if k in counted]
                ok = bool(clause.keys) and len(found) >= clause.needed
                share = len(found) / len(clause.keys) if clause.keys else 0.0
                matched += [counted[k] for k in found]
            shares.append(share)
            if not ok:
                holds = False
                weakest = weakest or clause.text
        score = min(shares) if shares else 0.0
        reading = Reading(holds, tuple(dict.fromkeys(matched)), score, weakest or alternative[0].text)
        if holds:
            return reading
        if reading.score > best.score:
            best = reading
    return best


def _unnegated(said: list[str], stems: list[str]) -> dict[str, str]:
    """Stem -> the word the student wrote, for every word not under a negation."""
    found: dict[str, str] = {}
    for i, (word, s) in enumerate(zip(said, stems, strict=True)):
        before = said[max(0, i - NEGATION_REACH) : i]
        if any(b in NEGATIONS or b.endswith("n't") for b in before):
            continue
        found.setdefault(s, word)
    return found
