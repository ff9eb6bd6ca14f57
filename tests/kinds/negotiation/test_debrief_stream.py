"""The debrief as it streams (#69: it streamed as raw `### Issue 1` Markdown until the review rendered it): its
frames are marked as Markdown by the relay, and the page's stream box shows each one rendered, headings and
lists, never a Markdown mark; the last frame is the review's debrief. Other turns stream as plain text."""

from __future__ import annotations

import re
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.test import Client

from simulations.consumers import GameConsumer
from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.headless import play_game
from simulations.services.ledger.turns import create_game
from simulations.services.play import drive
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db

BLOCK = re.compile(r"<(h3|p|li)>(.*?)</\1>", re.S)


def _stream_box(event: dict[str, Any]) -> str:
    """What the game's consumer sends a page for this frame (its stream box)."""
    consumer = GameConsumer()
    consumer.shown_version = 0
    sent: list[str] = []

    async def send(text_data: str) -> None:
        sent.append(text_data)

    consumer.send = send  # type: ignore[method-assign]
    async_to_sync(consumer._send_words)({"slot": "", "version": -1, **event}, 0.0)
    (html,) = sent
    return html


def _debrief(html: str) -> str:
    """The rendered debrief inside a stream box (its own div, in the entry's, in the box's)."""
    return html.split('<div class="text debrief">', 1)[1].removesuffix("</div></div></div>")


def test_the_debrief_streams_rendered_never_as_markdown(monkeypatch: pytest.MonkeyPatch) -> None:
    frames: list[dict[str, Any]] = []
    monkeypatch.setattr(drive, "notify_stream", lambda game_id, **frame: frames.append(frame))
    monkeypatch.setattr(drive, "FRAME_INTERVAL", 0.0)  # every chunk its own frame: a few words at a time
    owner = User.objects.create_user("student", password="pw-123456789")
    game = create_game(scenario_version=mercury_version(), seed=3, owner=owner)
    play_game(game_id=game.pk, policy=make_policy("passive", "BRA"), stream=True)
    written = [f for f in frames if f.get("markdown")]
    assert len(written) > 20 and {f["speaker"] for f in written} == {"The debrief"}
    assert all(f["speaker"] != "The debrief" for f in frames if not f.get("markdown"))
    assert "\n### Issue 1: " in written[-1]["text"]  # what the model wrote is Markdown
    headings = items = 0
    for frame in written:
        html = _stream_box(frame)
        assert "is being written…" in html
        for tag, block in BLOCK.findall(_debrief(html)):
            text = re.sub(r"<[^>]+>", "", block)
            assert not re.match(r"\s*(#|[-*+]\s)", text) and "**" not in text, (tag, text)
        headings, items = max(headings, html.count("<h3>")), max(items, html.count("<li>"))
    assert headings >= 6 and items >= 1
    # A plain turn streams as escaped text in one paragraph.
    plain = _stream_box({"speaker": "Canada", "text": "### <b>Canada</b> supports 1.1"})
    assert '<p class="text">### &lt;b&gt;Canada&lt;/b&gt; supports 1.1</p>' in plain and "<h3>" not in plain
    # Its last frame is the whole debrief: the stream box ends as the review shows it.
    client = Client()
    client.force_login(owner)
    review = client.get(f"/games/{game.pk}/review/").content.decode()
    assert f'<div class="debrief">{_debrief(_stream_box(written[-1]))}</div>' in review
