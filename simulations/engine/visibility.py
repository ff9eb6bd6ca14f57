"""Who may see which transcript entry (seed 002 §6): public entries to all, private ones to their audience only."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar


class HasVisibility(Protocol):
    @property
    def visibility(self) -> str: ...

    @property
    def audience(self) -> Sequence[str]: ...


def visible_to(entry: HasVisibility, role: str) -> bool:
    if entry.visibility == "public":
        return True
    return role in entry.audience


T = TypeVar("T", bound=HasVisibility)


def filter_visible(entries: Iterable[T], role: str) -> list[T]:
    return [e for e in entries if visible_to(e, role)]
