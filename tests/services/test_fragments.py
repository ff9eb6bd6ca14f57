"""The live fragments' Jinja2 environment (simulations/services/pages/fragments.py)."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import jinja2
from django.conf import settings

from simulations.kinds.negotiation.presenters import EntryView
from simulations.services.pages.fragments import environment, fragment


def test_a_name_a_fragment_lacks_prints_nothing_even_where_django_would_print_it_for_debugging() -> None:
    """Django's Jinja2 back-end passes DebugUndefined with DEBUG on: a move form drawn over the websocket (no request,
    so no CSRF token) then posted the text `{{ csrf_token }}` as its token, and was refused."""
    # The engine's folders: the shared fragments' (the stream box) and the negotiation's.
    folders = cast("list[Path]", settings.TEMPLATES[1]["DIRS"])
    env = environment(
        loader=jinja2.FileSystemLoader(folders), autoescape=True, undefined=jinja2.DebugUndefined
    )
    html = env.get_template("negotiation/_move.html").render(game={"pk": 7}, version=3, idem="k")
    assert 'name="csrfmiddlewaretoken" value=""' in html
    assert "{{" not in html and "/games/7/move/" in html


def test_what_a_fragment_prints_is_escaped() -> None:
    entry = EntryView(
        seq=1, speaker="USA", speaker_name="USA <b>", kind="speech", text="<script>x</script>\nnext line",
        private=False, round=1, issue="", mine=False,
    )  # fmt: skip
    html = fragment("negotiation/_entries.html", {"entries": [entry]})
    assert "<script>" not in html and "&lt;script&gt;x&lt;/script&gt;<br>next line" in html
    assert "USA &lt;b&gt;" in html


def test_an_address_a_fragment_prints_is_remembered_per_script_prefix() -> None:
    """`url` remembers its answers; a page served under another prefix (a school's `/mercury/`, SCRIPT_NAME) must
    not get the address remembered for the root, nor the other way round."""
    from django.urls import get_script_prefix, reverse, set_script_prefix

    from simulations.services.pages.fragments import url

    before = get_script_prefix()
    try:
        assert url("move", 7) == reverse("move", args=(7,)) == "/games/7/move/"
        set_script_prefix("/mercury/")
        assert url("move", 7) == reverse("move", args=(7,)) == "/mercury/games/7/move/"
        html = fragment("negotiation/_move.html", {"game": {"pk": 8}, "version": 3, "idem": "k"})
        assert 'hx-post="/mercury/games/8/move/"' in html
    finally:
        set_script_prefix(before)
    assert url("move", 7) == "/games/7/move/"
