"""Seeded randomness: one independent stream per decision, derived from (seed, purpose, index).

Deriving a fresh stream per decision (instead of one shared generator) means a decision's outcome never depends on
how many random numbers earlier decisions happened to draw, so resuming from any checkpoint replays identically.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def stream(seed: int, purpose: str, *index: object) -> random.Random:
    key = ":".join([str(seed), purpose, *map(str, index)])
    digest = hashlib.sha256(key.encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def choice(seed: int, purpose: str, items: Sequence[T], *index: object) -> T:
    return stream(seed, purpose, *index).choice(list(items))


def shuffled(seed: int, purpose: str, items: Sequence[T], *index: object) -> list[T]:
    out = list(items)
    stream(seed, purpose, *index).shuffle(out)
    return out
