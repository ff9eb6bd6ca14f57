"""Rate limits on moves, new games, sign-ups, log-in attempts and class-session join codes tried (fixed windows in Django's cache).

A class often reaches the server from one address (a school's network): what is limited per address must let a
class through. Sign-ups per address are sized for a class; log-ins count per address only when they fail (a
class logging in costs nothing, many names guessed from one address are stopped), and every attempt per name.

The counters live in the cache: with MERCURY_CACHE_URL (Redis) every process counts together; without it, each
process counts alone."""

from __future__ import annotations

import contextlib
import hashlib
import time

from django.conf import settings
from django.core.cache import cache

clock = time.time  # the windows' clock (a test pins it so that a run never straddles a window's edge)


class RateLimited(Exception):
    MOVES = "You are moving faster than the game allows: wait a few seconds and try again."
    GAMES = "You have started many games recently: finish or resume one, or try again later."
    SIGNUPS = "Too many accounts were created from your network recently: try again later."
    LOGINS = "Too many log-in attempts: wait a few minutes and try again."
    JOINS = (
        "Too many attempts to join a class: check the code with your teacher and try again in a few minutes."
    )


def check_rate(*, user_id: int, action: str) -> None:
    """Precondition: an authenticated user. Counts one `action` and raises RateLimited beyond the limit."""
    check_limit(action=action, subject=str(user_id))


def _limit(action: str) -> tuple[int, int, str]:
    """(how many, in seconds, the sentence past it)"""
    return {
        "move": (settings.MERCURY_RATE_MOVES_PER_MINUTE, 60, RateLimited.MOVES),
        "new_game": (settings.MERCURY_RATE_GAMES_PER_HOUR, 3600, RateLimited.GAMES),
        "signup": (settings.MERCURY_RATE_SIGNUPS_PER_HOUR, 3600, RateLimited.SIGNUPS),
        "login": (settings.MERCURY_RATE_LOGINS_PER_15_MINUTES, 900, RateLimited.LOGINS),
        "login_failure": (settings.MERCURY_RATE_LOGIN_FAILURES_PER_ADDRESS, 900, RateLimited.LOGINS),
        "join": (settings.MERCURY_RATE_JOINS_PER_15_MINUTES, 900, RateLimited.JOINS),
    }[action]


def _key(action: str, subject: str, window: int) -> str:
    # Hashed: a user name or address never appears in a cache key (or a Redis MONITOR) as typed.
    who = hashlib.sha256(subject.encode()).hexdigest()[:24]
    return f"rate:{action}:{who}:{int(clock() // window)}"


def check_limit(*, action: str, subject: str) -> None:
    """Counts one `action` by `subject` (a user id, a client address, a user name) and raises RateLimited once
    the action's limit for its window is passed."""
    limit, window, message = _limit(action)
    if limit <= 0:
        return
    key = _key(action, subject, window)
    cache.add(key, 0, timeout=window)
    if cache.incr(key) > limit:
        raise RateLimited(message)


def give_back(*, action: str, subject: str) -> None:
    """Uncounts one `action` that `check_limit` counted and that turned out not to be what the limit is for (a
    log-in that succeeded counts against its address only while its password is checked: counting it first and
    giving it back after keeps a burst of parallel guesses within the limit)."""
    limit, window, _ = _limit(action)
    if limit > 0:
        with contextlib.suppress(ValueError):  # the window turned, or the cache lost the key: nothing to give
            cache.decr(_key(action, subject, window))
