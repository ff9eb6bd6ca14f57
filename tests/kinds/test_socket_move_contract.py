"""The same bad move sent over a game's websocket gets the same sentence in every kind as its post does
(`test_move_contract.py`): both go through the one move pipeline (`services.policy.moves.take_move`). Parametrized over
every registered kind; the notice says which move it answers and that it was not taken."""

from __future__ import annotations

import asyncio
import html
import json
import re
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.core.cache import cache

from mercury.asgi import application
from simulations.kinds import all_kinds
from simulations.models import Game, Submission
from simulations.services.policy.move_form import MissingVersion, NulInForm
from simulations.services.policy.student_errors import ALREADY_PLAYED
from tests.kinds.test_move_contract import _game_and_client

pytestmark = pytest.mark.django_db(transaction=True)
KINDS = sorted(kind.name for kind in all_kinds())
NOTICE = re.compile(r'<div id="notice"[^>]*data-answers="([^"]*)" data-taken="([01])"[^>]*>(.*?)</div>', re.S)


def _game_and_session(kind: str) -> tuple[Game, str]:
    """As the post's contract test makes them (`test_move_contract._game_and_client`): its client's session cookie."""
    cache.clear()
    game, client = _game_and_client(kind)
    return game, client.cookies["sessionid"].value


async def _answer(comm: WebsocketCommunicator) -> tuple[str, str, str]:
    """The notice that answers a move: (the key it answers, "1" if taken else "0", its sentence)."""
    async with asyncio.timeout(10):
        while True:
            match = NOTICE.search(await comm.receive_from(timeout=10))
            if match:
                return match.group(1), match.group(2), html.unescape(re.sub(r"<[^>]+>", "", match.group(3)))


@pytest.mark.parametrize("kind", KINDS)
async def test_a_bad_move_over_the_socket_gets_the_posts_sentence(kind: str, settings: Any) -> None:
    settings.MERCURY_OFFLINE_TOKEN_DELAY = 0
    game, session = await database_sync_to_async(_game_and_session)(kind)
    headers = [(b"origin", b"http://localhost"), (b"cookie", f"sessionid={session}".encode())]
    comm = WebsocketCommunicator(application, f"/ws/games/{game.pk}/", headers=headers)
    connected, _ = await comm.connect()
    assert connected
    sent = {"event": "ANY", "text": "Hello."}
    for key, fields, sentence in (
        ("a", {}, MissingVersion.MESSAGE),
        ("b", {"version": str(game.version), "text": "Hello.\x00"}, NulInForm.MESSAGE),
        ("c", {"version": str(game.version - 1)}, ALREADY_PLAYED),
    ):
        await comm.send_to(text_data=json.dumps({"move": sent | fields | {"idem": key}}))
        assert await _answer(comm) == (key, "0", sentence)
    taken = Submission.objects.filter(game_id=game.pk, key__in=("a", "b", "c")).exists
    assert not await database_sync_to_async(taken)()  # a taken move leaves its form's key on record
    await comm.disconnect()
