"""Token counting for the offline provider: a word-piece estimate close to BPE tokenizers' counts.

Real models report usage through litellm; the offline provider has no tokenizer, so it splits text the way BPE
tokenizers roughly do (words, with long words split every 6 characters, and punctuation marks on their own).
"""

from __future__ import annotations

import functools
import re

METHOD = "estimate:wordpiece"
# A piece: up to six letters (a longer word is several pieces, one from every sixth letter on), a run of digits, or
# one other mark. Counting the matches is the count: the regular expression does the splitting, with no Python
# loop over the pieces (the offline model counts every new line of every prompt).
_PIECE = re.compile(r"[A-Za-z]{1,6}|\d+|[^\sA-Za-z\d]")


# Where a text may be cut without changing its count: at a line break (white space, never inside a piece) and at a
# comma (a mark, always a piece of its own, so it also ends the piece before it). Each cut's count is memoised.
_CUTS = re.compile(r"[\n,]")


def estimate_tokens(text: str) -> int:
    """Counted a comma-or-line at a time, each memoised, plus one piece per comma: a prompt is mostly parts of
    earlier prompts (a seat's instructions, the facts and memory of earlier turns), and its facts block is one line
    of several kilobytes, new at every turn but made of clauses mostly the same as the last turn's, so memoising
    by line alone would count it afresh every time (bench/tokens.py compares the ways)."""
    return sum(map(_cut_tokens, _CUTS.split(text))) + text.count(",")


@functools.lru_cache(maxsize=65_536)
def _cut_tokens(cut: str) -> int:
    return len(_PIECE.findall(cut))
