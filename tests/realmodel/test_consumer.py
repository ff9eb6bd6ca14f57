"""The game page's websocket with a real HTTP model: what the student sees when a call fails or is retried."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from channels.db import database_sync_to_async

from simulations.models import TranscriptEntry
from tests.web.test_consumer import _collect, _connect, _setup_game

from .fake_openai import FakeOpenAI, Fault

pytestmark = [pytest.mark.django_db(transaction=True)]
COMMITTED = 'hx-swap-oob="beforeend:#transcript"'
_TEXT = re.compile(r'<p class="text">(.*?)</p>', re.S)


async def test_a_refused_key_is_shown_with_what_to_do_and_the_turn_plays_after(fake: FakeOpenAI) -> None:
    owner, game = await database_sync_to_async(_setup_game)("owner")
    count = database_sync_to_async(TranscriptEntry.objects.filter(game=game).count)
    before = await count()
    fake.inject(Fault("401"))
    comm = await _connect(game, owner)
    assert (await comm.connect())[0]
    frames = await _collect(comm, 'role="alert"')
    alert = html.unescape(frames[-1])
    assert "The model server refused the key. Ask your teacher to set MERCURY_MODEL_API_KEY." in alert
    assert "Nothing was lost: try the turn again." in alert and "Try the turn again" in alert
    assert "Incorrect API key" not in alert  # the provider's words are for the teacher, not the page
    assert (
        '<h2 class="failure-title">The model server refused the key</h2>' in alert
        and 'data-cause="auth"' in alert
    )
    # The "has the floor" line is replaced by one that says the turn failed (the spinner stops).
    assert re.search(
        r'<p id="waiting" class="waiting stopped" hx-swap-oob="outerHTML">[^<]+\'s turn failed', alert
    )
    assert await count() == before and len(fake.requests()) == 1  # not retried, nothing stored
    await comm.disconnect()
    comm = await _connect(game, owner)  # "Try the turn again" reloads the page: the turn is played
    assert (await comm.connect())[0]
    await _collect(comm, COMMITTED)
    assert await count() == before + 1
    await comm.disconnect()


async def test_a_retried_stream_drops_the_words_of_the_attempt_that_stalled(
    fake: FakeOpenAI, settings: Any
) -> None:
    owner, game = await database_sync_to_async(_setup_game)("owner")
    # A whole first sentence, so the output screen (which relays sentence by sentence) shows it before the stall.
    stalled = "Words that will be dropped. Never finished because the server goes silent here"
    fake.inject(Fault("stall", after_words=8, body=stalled))
    comm = await _connect(game, owner)
    assert (await comm.connect())[0]
    frames = await _collect(comm, COMMITTED)
    last = await database_sync_to_async(
        lambda: TranscriptEntry.objects.filter(game=game, kind="message").order_by("-seq").first()
    )()
    assert last is not None and "Never finished" not in last.text and "be dropped" not in last.text
    shown = [html.unescape(m) for f in frames if "is speaking" in f for m in _TEXT.findall(f)]
    assert any(s.startswith("Words that will") for s in shown), "the stalled attempt's words were streamed"
    assert all(stalled.startswith(s) or last.text.startswith(s) for s in shown), shown  # never both mixed
    assert [s.fault for s in fake.requests("turn")] == ["stall", "ok"]
    await comm.disconnect()
