"""Reading a student's message by meaning without a model (pure): a scenario's cues, plain-word paraphrases of a
condition's clause, are looked for in the message.

- A cue is a short phrase ("put you first in line"); "&" joins phrases that must all be said, anywhere in the
  message ("108 million & payback"). A phrase is found when its words, compared by a crude stem, appear in order
  within one sentence, with at most GAP other words between two of them: "I'll make you a fresh one" meets
  "make a fresh one".
- Negation aware: a word after "not", "no", "never", "without" or an "n't" in the same stretch of the sentence
  (up to a comma, a dash or a "but") is negated, and a phrase found on a negated word does not count ("I won't
  refund it"), unless the cue says the negation itself ("not negotiable"). "No problem" negates nothing.
- Numbers are read as written or spoken: "$84,000", "84k" and "84000" are one word; "25 percent" is "25%"; a
  cue's "#" is any number ("closer to #").
- A phrase found uses its words: a caller reading several steps from one message passes the words already used,
  so that one phrase never meets two steps.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from . import conditions
from .conditions import stem

GAP = 3  # other words a phrase may skip between two of its words
NEGATION_REACH = 4  # words after a negation it still covers (within its stretch of the sentence)
NEGATIONS = frozenset({"not", "no", "never", "without", "cannot", "nothing", "nobody"})
NOT_NEGATING = frozenset({"problem", "problems", "worries", "doubt", "only", "matter"})  # "no problem", …

NUMBER = "#"  # in a cue: any number
_NUMERIC = re.compile(r"\d+(?:\.\d+)?%?")
_TOKEN = re.compile(r"[a-z0-9%'#]+|[.!?;:,—–]| - ")
_SENTENCE_END = frozenset(".!?")
_BRITISH = re.compile(r"(?<=[a-z]{3})is(e|es|ed|ing|ation|ations)$")


@dataclass(frozen=True)
class Said:
    """A message read once: its words, each word's stem, sentence, and whether a negation covers it."""

    words: tuple[str, ...]
    stems: tuple[str, ...]
    sentence: tuple[int, ...]
    negated: tuple[bool, ...]


def normalise(text: str) -> str:
    """Lower case, curly quotes straight, numbers in one form (`$84,000` and `84k` -> `84000`, `25 percent` ->
    `25%`, `$108m` -> `108 million`)."""
    t = text.lower().replace("’", "'").replace("‘", "'")
    for _ in range(3):  # 1,250,000 has two separators
        t = re.sub(r"(\d),(\d{3})(?!\d)", r"\1\2", t)
    t = t.replace("$", "").replace("€", "").replace("£", "")
    t = re.sub(r"\b(\d+(?:\.\d+)?)\s*k\b", lambda m: str(round(float(m.group(1)) * 1000)), t)
    t = re.sub(r"\b(\d+(?:\.\d+)?)\s*m\b", r"\1 million", t)
    return re.sub(r"\b(\d+(?:\.\d+)?)\s*(?:percent|per cent)\b", r"\1%", t)


def word_stem(word: str) -> str:
    """`stem`, with British -ise spellings read as -ize (apologise = apologize, prioritise = prioritize)."""
    return stem(_BRITISH.sub(r"iz\1", word))


def is_negation(word: str) -> bool:
    return word in NEGATIONS or word.endswith("n't")


def read(text: str) -> Said:
    words: list[str] = []
    sentence: list[int] = []
    negated: list[bool] = []
    n_sentence, reach = 0, 0
    for token in _TOKEN.findall(normalise(text)):
        if not token[0].isalnum() and token[0] not in "'#":
            reach = 0  # a comma, a dash or a full stop ends a negation's stretch
            if token in _SENTENCE_END:
                n_sentence += 1
            continue
        word = token.strip("'") or token
        if word == "but":
            reach = 0
        covered = reach > 0
        reach = max(0, reach - 1)
        if is_negation(word):
            reach = NEGATION_REACH
        elif word in NOT_NEGATING and words and is_negation(words[-1]):
            reach, covered = 0, False
        words.append(word)
        sentence.append(n_sentence)
        negated.append(covered)
    return Said(tuple(words), tuple(word_stem(w) for w in words), tuple(sentence), tuple(negated))


def find(cue: str, said: Said, taken: Collection[int] = ()) -> tuple[int, ...] | None:
    """The positions of the words that meet `cue` (every "&" part found, by one of its "|" alternatives), or
    None."""
    used: list[int] = []
    for part in cue.split("&"):
        found = next(
            (
                at
                for phrase in part.split("|")
                if (at := _phrase(phrase, said, set(taken) | set(used))) is not None
            ),
            None,
        )
        if found is None:
            return None
        used += found
    return tuple(used) if used else None


def first_met(cues: Sequence[str], said: Said, taken: Collection[int] = ()) -> tuple[int, ...] | None:
    """The positions of the first cue met, or None."""
    for cue in cues:
        found = find(cue, said, taken)
        if found is not None:
            return found
    return None


def _phrase(part: str, said: Said, taken: set[int]) -> list[int] | None:
    wanted = read(part)
    if not wanted.words:
        return None
    says_negation = any(is_negation(w) for w in wanted.words)
    for start, s in enumerate(said.stems):
        if not _same(wanted.stems[0], s) or start in taken:
            continue
        at = [start]
        for target in wanted.stems[1:]:
            last = at[-1]
            nxt = next(
                (
                    i
                    for i in range(last + 1, min(len(said.stems), last + GAP + 2))
                    if _same(target, said.stems[i])
                    and i not in taken
                    and said.sentence[i] == said.sentence[start]
                ),
                None,
            )
            if nxt is None:
                break
            at.append(nxt)
        if len(at) < len(wanted.stems):
            continue
        if not says_negation and any(said.negated[i] for i in at):
            continue
        return at
    return None


def _same(wanted: str, said: str) -> bool:
    """A cue's word and a message's, by stem; a cue's "#" is any number ("i want #" meets "I want $90k")."""
    return wanted == said or (wanted == NUMBER and _NUMERIC.fullmatch(said) is not None)


def quote(said: Said, positions: Sequence[int]) -> str:
    """The student's words at `positions`, with "…" where words were skipped."""
    parts: list[str] = []
    last = -2
    for i in sorted(positions):
        if parts and i != last + 1:
            parts.append("…")
        parts.append(said.words[i])
        last = i
    return " ".join(parts)


@dataclass(frozen=True)
class Met:
    """How a condition reads against a message: whether it holds, the words it used and the student's words."""

    holds: bool
    used: tuple[int, ...] = ()
    quoted: str = ""
    by_words: bool = False  # some clause held by the seed's key-word rule (a clause without cues)


def read_condition(
    condition: str,
    cues: Mapping[str, Sequence[str]],
    message: str,
    said: Said,
    *,
    visited: Collection[str],
    state_names: Collection[str],
    taken: Collection[int] = (),
    further: bool = False,
) -> Met:
    """The condition against the message: its AND/OR structure as conditions.py parses it; a clause naming states
    checks they were reached; a word clause with cues holds when one of them is found on words not `taken`; a
    word clause without cues falls back to the key-word rule, but never for a `further` step of the same message
    (its words cannot be told apart from the ones an earlier step used)."""
    keyed = {conditions.clause_key(k): v for k, v in cues.items()}
    for alternative in conditions.parse(condition, state_names):
        holds, by_words = True, False
        used: list[int] = []
        keyed_words: list[str] = []
        for clause in alternative:
            if clause.states:
                holds = all(s in visited for s in clause.states)
            elif (paraphrases := keyed.get(conditions.clause_key(clause.text))) is not None:
                found = first_met(paraphrases, said, set(taken) | set(used))
                holds = found is not None
                used += found or ()
            elif further:
                holds = False
            else:
                reading = conditions.read(clause.text, message, visited=visited, state_names=state_names)
                holds, by_words = reading.holds, by_words or reading.holds
                keyed_words += reading.matched if holds else ()
            if not holds:
                break
        if holds:
            quoted = " … ".join(filter(None, [quote(said, used), *keyed_words]))
            return Met(True, tuple(used), quoted, by_words)
    return Met(False)
