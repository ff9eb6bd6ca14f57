"""One transition of a kind's machine, as its `apply` reports it to the kind's ledger code: the event, who made it,
where the game was and went, the payload as read, and the state after it. A kind's own outcome adds what the
transition wrote (messages, lines, changes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

E = TypeVar("E")
S = TypeVar("S")


@dataclass
class Transition(Generic[E, S]):
    seq: int
    event: E
    actor: str
    source: str
    target: str
    payload: dict[str, Any]
    state: S
