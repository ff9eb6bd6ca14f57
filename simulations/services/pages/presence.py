"""Who has a game's page open, for the class room's roster: each open page of a driver marks its user present in
the cache (refreshed while it stays open, dropped when it closes); a mark outlives a page that died without
closing by PRESENT_FOR seconds at most."""

from __future__ import annotations

from collections.abc import Iterable

from django.core.cache import cache

PRESENT_FOR = (
    75  # seconds: longer than a page's longest quiet spell between refreshes (consumers.IDLE_RECHECK_MAX)
)


def _key(game_id: int, user_id: int) -> str:
    return f"mercury:present:{game_id}:{user_id}"


def mark_present(game_id: int, user_id: int) -> None:
    cache.set(_key(game_id, user_id), 1, timeout=PRESENT_FOR)


def mark_gone(game_id: int, user_id: int) -> None:
    cache.delete(_key(game_id, user_id))


def present(pairs: Iterable[tuple[int, int]]) -> set[tuple[int, int]]:
    """Of these (game, user) pairs, those with a page open."""
    wanted = {_key(g, u): (g, u) for g, u in pairs}
    return {wanted[key] for key in cache.get_many(list(wanted))}
