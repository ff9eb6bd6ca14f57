"""Finding 7: websocket routing, origin, log-out and frame limits; request bodies refused before they are read.

- Paths that name no game are refused cleanly (no exception, no 500).
- The handshake's Origin must be this server's scheme, host and port: another port of an allowed host is refused.
- Logging out closes the session's open game pages at once; a session that disappears otherwise (expired,
  deleted) is noticed at the next frame or committed turn.
- A flood of tiny frames closes the connection after a few renders; an oversized frame closes it at once.
- An anonymous upload larger than MERCURY_MAX_REQUEST_BYTES gets 413 having read nothing (declared length) or
  little more than the limit (no length).
"""

from __future__ import annotations

import asyncio
from importlib import import_module
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.test import Client

from mercury.asgi import application
from mercury.asgi_guards import TOO_LARGE
from simulations.consumers import FRAME_TOO_LARGE, LOGGED_OUT, TOO_MANY_FRAMES
from simulations.models import Game
from tests.helpers import game_at_first_ai_turn

pytestmark = [pytest.mark.django_db(transaction=True)]
RENDER = 'id="panels"'  # every full or partial render carries the panels


def end_every_session() -> None:
    """Every session ended as a log-out ends it, here or in another process (the session engine may keep it in the
    cache too), or as its expiry does."""
    engine = import_module(settings.SESSION_ENGINE)
    for key in Session.objects.values_list("session_key", flat=True):
        engine.SessionStore(key).delete()


def _owner_and_game() -> tuple[Client, Game]:
    owner = User.objects.create_user("owner", password="a-long-test-passphrase-42")
    client = Client()
    client.force_login(owner)
    # At the student's turn (the first AI turn played): no driver runs while these tests send frames.
    game = game_at_first_ai_turn(seed=5, owner=owner)
    from simulations.services.play.drive import drive_game

    drive_game(game_id=game.pk, stream=False)
    return client, game


def _socket(
    path: str, client: Client | None = None, *, origin: bytes = b"http://localhost", host: bytes | None = None
) -> WebsocketCommunicator:
    headers = [(b"origin", origin)]
    if host is not None:
        headers.append((b"host", host))
    if client is not None:
        headers.append((b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()))
    return WebsocketCommunicator(application, path, headers=headers)


async def _closed_with(comm: WebsocketCommunicator, timeout: float = 10) -> tuple[int, list[str]]:
    """Frames received until the server closes the socket, and its close code."""
    frames: list[str] = []
    async with asyncio.timeout(timeout):
        while True:
            message = await comm.receive_output(timeout=timeout)
            if message["type"] == "websocket.close":
                await comm.disconnect()  # the client's side of the close: the consumer finishes
                return message.get("code", 1000), frames
            frames.append(message.get("text", ""))


@pytest.mark.parametrize(
    "path",
    ["/ws/", "/ws/games/abc/", "/ws/games/-1/", "/ws/games/0/", "/ws/games/99999999999999999999999/", "/x"],
)
async def test_paths_that_name_no_game_are_refused_cleanly(path: str) -> None:
    client, _ = await database_sync_to_async(_owner_and_game)()
    comm = _socket(path, client)
    connected, code = await comm.connect(timeout=5)
    assert not connected and code in (4403, 4404)
    await comm.disconnect()


async def test_the_origin_must_be_this_servers_scheme_host_and_port() -> None:
    client, game = await database_sync_to_async(_owner_and_game)()
    path = f"/ws/games/{game.pk}/"
    refused = [
        b"http://localhost:8001",
        b"https://localhost:8000",
        b"http://localhost",
        b"http://evil.example:8000",
    ]
    for origin in refused:
        comm = _socket(path, client, origin=origin, host=b"localhost:8000")
        assert not (await comm.connect(timeout=5))[0], origin
        await comm.disconnect()
    comm = _socket(path, client, origin=b"http://localhost:8000", host=b"localhost:8000")
    assert (await comm.connect(timeout=5))[0]
    await comm.disconnect()
    no_host = _socket(path, client, origin=b"http://localhost:8001")  # no Host header: only the default port
    assert not (await no_host.connect(timeout=5))[0]
    await no_host.disconnect()


async def test_logging_out_closes_the_sessions_open_pages_at_once() -> None:
    client, game = await database_sync_to_async(_owner_and_game)()
    comm = _socket(f"/ws/games/{game.pk}/", client)
    assert (await comm.connect())[0]
    await comm.receive_from(timeout=10)
    response = await database_sync_to_async(client.post)("/accounts/logout/")
    assert response.status_code == 200 and b"logged out" in response.content.lower()
    code, frames = await _closed_with(comm, timeout=5)
    assert code == LOGGED_OUT and frames == []


async def test_a_session_gone_by_other_means_is_noticed_at_the_next_frame() -> None:
    client, game = await database_sync_to_async(_owner_and_game)()
    comm = _socket(f"/ws/games/{game.pk}/", client)
    assert (await comm.connect())[0]
    await comm.receive_from(timeout=10)
    await asyncio.sleep(1.1)  # past the render spacing: the next frame would render
    await database_sync_to_async(end_every_session)()  # expired, or logged out in another process
    await comm.send_to(text_data="x")
    code, frames = await _closed_with(comm, timeout=5)
    assert code == LOGGED_OUT and not any(RENDER in f for f in frames)


async def test_a_session_gone_by_other_means_gets_no_render_of_the_next_turn() -> None:
    """The render a committed turn sends checks the session in the same trip to the database."""
    from channels.layers import get_channel_layer

    from simulations.services.pages.broadcast import group_name

    client, game = await database_sync_to_async(_owner_and_game)()
    comm = _socket(f"/ws/games/{game.pk}/", client)
    assert (await comm.connect())[0]
    await comm.receive_from(timeout=10)
    await database_sync_to_async(end_every_session)()
    layer = get_channel_layer()
    assert layer is not None
    await layer.group_send(group_name(game.pk), {"type": "game.advanced", "ai_next": False})
    code, frames = await _closed_with(comm, timeout=5)
    assert code == LOGGED_OUT and not any(RENDER in f for f in frames)


async def test_a_flood_of_one_byte_frames_is_cut_off_after_a_few_renders() -> None:
    client, game = await database_sync_to_async(_owner_and_game)()
    comm = _socket(f"/ws/games/{game.pk}/", client)
    assert (await comm.connect())[0]
    await comm.receive_from(timeout=10)
    for _ in range(200):
        await comm.send_to(text_data="x")
    code, frames = await _closed_with(comm)
    renders = sum(RENDER in f for f in frames)
    assert code == TOO_MANY_FRAMES and renders <= 2, renders


async def test_an_oversized_frame_closes_the_connection() -> None:
    client, game = await database_sync_to_async(_owner_and_game)()
    comm = _socket(f"/ws/games/{game.pk}/", client)
    assert (await comm.connect())[0]
    await comm.receive_from(timeout=10)
    await comm.send_to(text_data="x" * 65536)
    code, frames = await _closed_with(comm)
    assert code == FRAME_TOO_LARGE and frames == []


async def _post(body_chunks: int, *, declare: bool, chunk: bytes) -> tuple[int, bytes, int]:
    """An anonymous multipart POST through the ASGI application; returns status, body and chunks it read."""
    size = body_chunks * len(chunk)
    headers = [(b"content-type", b"multipart/form-data; boundary=x"), (b"host", b"localhost")]
    if declare:
        headers.append((b"content-length", str(size).encode()))
    scope: dict[str, Any] = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/accounts/signup/", "raw_path": b"/accounts/signup/", "query_string": b"",
        "root_path": "", "headers": headers, "client": ("127.0.0.1", 5000), "server": ("localhost", 80),
    }  # fmt: skip
    pulled = 0
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        if pulled >= body_chunks:
            await asyncio.sleep(3600)  # the client waits for the answer
        pulled += 1
        return {"type": "http.request", "body": chunk, "more_body": pulled < body_chunks}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await asyncio.wait_for(application(scope, receive, send), timeout=60)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], body, pulled


async def test_a_large_anonymous_upload_is_refused_before_it_is_read(settings: Any) -> None:
    chunk = b"x" * (1024 * 1024)
    assert 2 * len(chunk) >= settings.MERCURY_MAX_REQUEST_BYTES
    status, body, pulled = await _post(64, declare=True, chunk=chunk)
    assert (status, body, pulled) == (413, TOO_LARGE, 0)
    status, body, pulled = await _post(64, declare=False, chunk=chunk)  # chunked: no length declared
    assert (status, body) == (413, TOO_LARGE) and pulled <= 3
