"""The page fragments rendered after every committed turn, in Jinja2 (the `jinja2` engine of settings.TEMPLATES).

A game page's update renders its panels' regions and the new transcript entries at every turn its page sees, and a
move's answer renders the panels again. In Django's template language those fragments were most of a render's
CPU; Jinja2 compiles a template to Python and renders the same HTML in a fraction of the time. The pages themselves stay Django templates: a fragment they
show (the transcript, a review's entries) comes to them rendered (`fragment`).

The environment adds what the fragments use beyond Jinja2's own: `url(name, *args)` (Django's `reverse`, each
answer remembered: a turn's update asks for the same few addresses every time), the `linebreaksbr` filter (Django's, escaping first) and the `markdown` filter (a
debrief as it streams: `model_markdown.to_html`, escaping first). Like Django's templates, it
escapes every value; Django's safe strings (a region rendered earlier) pass as they are.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jinja2
from django.conf import settings
from django.template import engines
from django.template.defaultfilters import linebreaksbr
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.safestring import SafeString

from simulations.services.pages import model_markdown


def environment(**options: Any) -> jinja2.Environment:
    # A name a fragment lacks prints nothing, with DEBUG on too (Django's back-end would print it as `{{ name }}`
    # there): a form drawn over the websocket, which has no request, must post an empty CSRF field, not that text.
    options["undefined"] = jinja2.Undefined
    env = jinja2.Environment(**options)
    env.globals["url"] = url
    env.filters["linebreaksbr"] = lambda value: linebreaksbr(value, autoescape=True)
    env.filters["markdown"] = model_markdown.to_html
    return env


def url(name: str, *args: Any) -> str:
    """Django's `reverse(name, args=args)`, remembered by everything its answer depends on: the arguments, the
    URLconf (the thread's, else the settings': a test may change it) and the script prefix (a request's
    SCRIPT_NAME)."""
    return _reversed(get_urlconf() or settings.ROOT_URLCONF, get_script_prefix(), name, args)


@lru_cache(maxsize=4096)  # a few addresses a game: those of the games playing at once
def _reversed(urlconf: str, prefix: str, name: str, args: tuple[Any, ...]) -> str:
    return reverse(name, urlconf=urlconf, args=args)


def template(name: str) -> jinja2.Template:
    return engines["jinja2"].get_template(name).template  # type: ignore[attr-defined,no-any-return]


def fragment(name: str, context: dict[str, Any], request: Any = None) -> SafeString:
    """`name` rendered with `context`; with `request`, also `request`, `csrf_token` and `csrf_input` (Django's
    Jinja2 back-end, the token made only if the fragment prints it)."""
    return SafeString(engines["jinja2"].get_template(name).render(context, request))


class _Noting(dict[str, Any]):
    """A context that records each name asked of it (Jinja2 asks `name in context` before reading a name)."""

    __slots__ = ("asked",)

    def __init__(self, values: dict[str, Any]) -> None:
        super().__init__(values)
        self.asked: set[str] = set()

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str):
            self.asked.add(name)
        return super().__contains__(name)


def render_reading(name: str, context: dict[str, Any]) -> tuple[str, set[str]]:
    """`name` rendered with `context` (no request), and every name of `context` it looked up, there or in a
    template it includes (a name it lacks too). Jinja2 looks up every name a template mentions as it starts, branch taken or not: what is
    recorded is all the template could read."""
    found = template(name)
    noting = _Noting({**found.globals, **context})  # a shared context gets no globals of its own
    html = found.environment.concat(  # type: ignore[attr-defined]
        found.root_render_func(found.new_context(noting, shared=True))
    )
    return str(html), {name for name in noting.asked if name in context or name not in found.globals}
