"""Per-user rate limits on moves and new games (fixed windows in Django's cache)."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache


class RateLimited(Exception):
    MOVES = "You are moving faster than the game allows: wait a few seconds and try again."
    GAMES = "You have started many games recently: finish or resume one, or try again later."


def check_rate(*, user_id: int, action: str) -> None:
    """Precondition: an authenticated user. Counts one `action` and raises RateLimited beyond the limit."""
    limit, window, message = {
        "move": (settings.MERCURY_RATE_MOVES_PER_MINUTE, 60, RateLimited.MOVES),
        "new_game": (settings.MERCURY_RATE_GAMES_PER_HOUR, 3600, RateLimited.GAMES),
    }[action]
    if limit <= 0:
        return
    key = f"rate:{action}:{user_id}:{int(time.time() // window)}"
    cache.add(key, 0, timeout=window)
    if cache.incr(key) > limit:
        raise RateLimited(message)
