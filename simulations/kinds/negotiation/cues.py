"""Cues: plain-word vocabularies by which a scenario's options and offers are recognised (pure).

A keyword is one fixed phrase ("legally binding"); a cue says what a student may mean in words of its own. A cue is
one or more word groups joined by " + ", each group a choice of words or short phrases joined by "|":

    treaty|convention|agreement + teeth|enforce|compulsory

reads "a treaty with real teeth", "an agreement we can enforce" and "make the convention compulsory". Words are
matched by stem, as keywords are ("enforce" also matches "enforced", "enforcement"), and a phrase may carry small
words between its words ("new money" matches "new money", "new the money" never matters). Every group must occur,
in any order, inside one clause-sized stretch: at most `SPAN_WORDS` words from the first word found to the last,
not across ",", ".", ";", ":", "?" or "!". A cue of one group is a set of synonyms ("scrubber|filter").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

SPAN_WORDS = 10
_WORD = re.compile(r"[a-z0-9][a-z0-9.'-]*")
_BREAK = re.compile(r"[.,;:?!](?:\s|$)")


def stem_of(word: str) -> str:
    """A word's stem as keywords and cues match it: "controlling" and "controls" both give "controll"/"control"."""
    if re.fullmatch(r"[\d.]+", word):
        return word
    for suffix in ("ing", "ies", "ed", "es", "s", "e", "y"):
        if len(word) > 4 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def parse_cue(text: str) -> tuple[tuple[str, ...], ...]:
    """The cue's groups, each a tuple of its alternatives (lower-case phrases). Raises ValueError, saying what is
    wrong, for an empty cue, an empty group or alternative, or a word-less one."""
    if not text or not text.strip():
        raise ValueError("a cue may not be empty")
    groups: list[tuple[str, ...]] = []
    for raw_group in text.lower().split("+"):
        alternatives: list[str] = []
        for raw in raw_group.split("|"):
            words = _WORD.findall(raw)
            if not words:
                raise ValueError(f"cue {text!r} has an empty word choice (check its '+' and '|')")
            alternatives.append(" ".join(words))
        if len(set(alternatives)) != len(alternatives):
            raise ValueError(f"cue {text!r} repeats a word within one group")
        groups.append(tuple(alternatives))
    return tuple(groups)


def canonical(text: str) -> frozenset[frozenset[str]]:
    """What a cue (or a keyword, a cue of one group and one phrase) matches, independent of how it is written:
    the set of its groups, each the set of its stemmed alternatives. Two cues with the same canonical form match
    the same words."""
    return frozenset(
        frozenset(" ".join(stem_of(w) for w in phrase.split()) for phrase in group)
        for group in parse_cue(text)
    )


@dataclass(frozen=True)
class CueSpan:
    start: int
    end: int
    last: int  # where the last group found starts
    parts: tuple[tuple[int, int], ...]  # each group's words: what names the option (the words between do not)


@dataclass(frozen=True)
class CueMatcher:
    """A compiled cue: `finditer(text)` gives each stretch where all its groups occur (`CueSpan`)."""

    text: str
    groups: tuple[re.Pattern[str], ...]
    # Stems every group's matches start with: a text containing none of a group's stems cannot match.
    literals: tuple[tuple[str, ...], ...]

    def could_match(self, text: str) -> bool:
        return all(any(lit in text for lit in group) for group in self.literals)

    def finditer(self, text: str) -> Iterator[CueSpan]:
        if not self.could_match(text):
            return
        found = [[(m.start(), m.end()) for m in regex.finditer(text)] for regex in self.groups]
        if not all(found):
            return
        last_end = -1
        for start, end in found[0]:
            lo, hi, last = start, end, start
            parts = [(start, end)]
            for others in found[1:]:
                # The nearest occurrence of this group to the first group's words.
                near = min(others, key=lambda span: abs(span[0] - start))
                lo, hi, last = min(lo, near[0]), max(hi, near[1]), max(last, near[0])
                parts.append(near)
            stretch = text[lo:hi]
            if len(_WORD.findall(stretch)) > SPAN_WORDS or _BREAK.search(stretch):
                continue
            if lo >= last_end:
                last_end = hi
                yield CueSpan(lo, hi, last, tuple(sorted(parts)))

    def search(self, text: str) -> CueSpan | None:
        return next(self.finditer(text), None)


def compile_cue(text: str, phrase: Callable[[str], re.Pattern[str]]) -> CueMatcher:
    """`phrase` turns one word or phrase into the reader's pattern for it (stems, small words between)."""
    groups = parse_cue(text)
    regexes = tuple(re.compile("|".join(f"(?:{phrase(alt).pattern})" for alt in group)) for group in groups)
    literals = tuple(tuple(stem_of(alt.split()[0]) for alt in group) for group in groups)
    return CueMatcher(text, regexes, literals)
