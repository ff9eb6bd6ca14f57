"""A deliberation's page over the shared websocket: the owner's page connects, the background driver plays the
committee, each persona's words stream into the live box, every committed step redraws the live parts, and the
page ends on the verdict; another user's socket is refused."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client

from mercury.asgi import application
from simulations.kinds.deliberation.games import state_of
from simulations.kinds.deliberation.state import Verdict
from simulations.models import Game
from simulations.services.content.scenarios import load_scenarios
from simulations.services.ledger.turns import create_game

pytestmark = [pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[3]


def _game(owner_name: str) -> tuple[User, Game]:
    ((version, _),) = load_scenarios(path=ROOT / "scenarios" / "deliberation")
    owner = User.objects.create_user(owner_name, password="a-long-test-passphrase-42")
    return owner, create_game(scenario_version=version, seed=5, owner=owner, options={"sample": "secret"})


def _headers(user: User) -> list[tuple[bytes, bytes]]:
    client = Client()
    client.force_login(user)
    return [
        (b"origin", b"http://localhost"),
        (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()),
    ]


async def test_a_watched_deliberation_streams_to_its_verdict(settings: pytest.FixtureRequest) -> None:
    settings.MERCURY_OFFLINE_TOKEN_DELAY = 0.003  # type: ignore[attr-defined]  # words arrive over several frames
    owner, game = await database_sync_to_async(_game)("watcher")
    headers = await database_sync_to_async(_headers)(owner)
    comm = WebsocketCommunicator(application, f"/ws/games/{game.pk}/", headers=headers)
    connected, _ = await comm.connect()
    assert connected
    frames: list[str] = []
    async with asyncio.timeout(60):
        while 'data-action="review"' not in (frames[-1] if frames else ""):
            frames.append(await comm.receive_from(timeout=60))
    await comm.disconnect()
    streamed = [f for f in frames if 'class="entry streaming"' in f]
    assert streamed and any("Security Lead (Sam)" in f for f in streamed)  # a persona's words, live
    redraws = [f for f in frames if 'id="rounds" hx-swap-oob="outerHTML"' in f]
    versions = [int(v) for f in redraws for v in re.findall(r'id="panels" data-action="\w+" data-status="\w+" '
                                                            r'data-version="(\d+)"', f)]  # fmt: skip
    assert versions == sorted(versions) and len(set(versions)) > 5  # one redraw per committed step (or more)
    final = await database_sync_to_async(Game.objects.get)(pk=game.pk)
    assert state_of(final).verdict == Verdict.APPROVED


async def test_another_users_socket_is_refused() -> None:
    _, game = await database_sync_to_async(_game)("owner")
    other = await database_sync_to_async(User.objects.create_user)(
        "other", password="a-long-test-passphrase-42"
    )
    headers = await database_sync_to_async(_headers)(other)
    comm = WebsocketCommunicator(application, f"/ws/games/{game.pk}/", headers=headers)
    connected, _ = await comm.connect()
    assert not connected
