"""A page region's HTML, rendered again only when something it read has changed.

A game page's update renders every region of its panels to see which changed, and most have not: the outcomes, the
issue's dialog, the earlier talks change a few times a game, while a turn is committed every few hundred
milliseconds. Each render is kept per game and region with what the template read: every name it looked up in the
context and the value found there. The next render of that region for that game reuses the HTML when each of those
names still has an equal value, and renders (and keeps) anew otherwise. A template is a function of the values it
reads, so equal values give equal HTML; the template need not declare what it reads.

What this needs from a caller: a context of plain values (dicts, lists, strings, numbers), compared with `==`. A
value that compares by identity rather than content, a model instance above all (`==` compares primary keys), makes
the render unkept: a template reading `game.status` must not be reused when only the status changed. Only the
values the context itself holds are looked at: a model inside a dict or list would pass unseen, so contexts keep
models at their top level (the negotiation's `game`). Regions are Jinja2 fragments (services/pages/fragments.py), rendered
without a request: nothing but the context reaches them (no user, no CSRF token).
"""

from __future__ import annotations

import threading
from typing import Any

from django.db.models import Model

from simulations.services.pages.fragments import render_reading

MAX_KEPT = 4_000  # a few kilobytes each: the regions of a few hundred games being played
_MISSING = object()  # a name the context lacks (the template found nothing)

_kept: dict[tuple[Any, str], tuple[tuple[tuple[str, Any], ...], str]] = {}
_kept_lock = threading.Lock()


def render_region(template: str, context: dict[str, Any], *, owner: Any) -> str:
    """`template` (a fragment: services/pages/fragments.py) rendered with `context` (no request), reusing the last render
    kept for `owner` (a game's key) and this template when every name it read still has an equal value."""
    key = (owner, template)
    found = _kept.get(key)
    if found is not None:
        read, html = found
        if all(context.get(name, _MISSING) == value for name, value in read):
            return html
    html, names = render_reading(template, context)
    read = tuple((name, context.get(name, _MISSING)) for name in sorted(names))
    if not any(isinstance(value, Model) for _, value in read):
        with _kept_lock:  # pages render in several threads
            _kept.pop(key, None)
            while len(_kept) >= MAX_KEPT:
                _kept.pop(next(iter(_kept)))  # the longest unrendered
            _kept[key] = (read, html)
    return html


def forget_all() -> None:
    """Drop every kept render (tests that change a template's inputs behind its back)."""
    with _kept_lock:
        _kept.clear()
