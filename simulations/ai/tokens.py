"""Token counting for the offline provider: a word-piece estimate close to BPE tokenizers' counts.

Real models report usage through litellm; the offline provider has no tokenizer, so it splits text the way BPE
tokenizers roughly do (words, with long words split every 6 characters, and punctuation marks on their own).
"""

from __future__ import annotations

import functools
import re

METHOD = "estimate:wordpiece"
_PIECE = re.compile(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]")


@functools.lru_cache(maxsize=1024)
def estimate_tokens(text: str) -> int:
    """Memoised: a seat's instructions, and much of its prompt, come again at every turn it plays."""
    count = 0
    for piece in _PIECE.findall(text):
        count += 1 + (len(piece) - 1) // 6 if piece.isalpha() else 1
    return count
