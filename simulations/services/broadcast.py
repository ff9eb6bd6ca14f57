"""Messages to a game's websocket group: the game advanced (pages re-render from the database), a turn's text as
it streams, a model failure.

Senders run anywhere: in a request, in the server's embedded worker threads, or in a separate worker process.
The in-memory channel layer is asyncio queues owned by the server's event loop and is not thread-safe, so a
thread outside that loop hands its message to the loop (`serve_from_loop` records it) instead of running a
private loop of its own. With Redis every sender talks to Redis directly.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from concurrent.futures import TimeoutError as FutureTimeout
from importlib import import_module
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.conf import settings
from django.contrib.auth import SESSION_KEY

logger = logging.getLogger("mercury")
_server_loop: asyncio.AbstractEventLoop | None = None
# Seconds a worker waits for the server loop to take a message; a page that misses one re-renders on the next.
SEND_TIMEOUT = 5.0


def group_name(game_id: int) -> str:
    return f"game-{game_id}"


def serve_from_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Record the event loop that serves the websockets (called by the server as it takes a connection)."""
    global _server_loop
    _server_loop = loop


def session_group(session_key: str) -> str:
    """The websockets opened under one log-in session (hashed: the key itself never leaves the database)."""
    return f"session-{hashlib.sha256(session_key.encode()).hexdigest()[:32]}"


def session_still_valid(session_key: str, user_pk: int) -> bool:
    """The session exists, has not expired and still names this user (a log-out deletes it)."""
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    return bool(session_key) and str(store.get(SESSION_KEY)) == str(user_pk)


def notify_session_ended(session_key: str) -> None:
    """Close every websocket opened under this session (its user logged out)."""
    _send(session_group(session_key), {"type": "session.ended"})


def send_to_game(game_id: int, message: dict[str, Any]) -> None:
    """Best effort: a page that misses a message re-renders from the database when the next one arrives."""
    if settings.MERCURY_BROADCAST:
        _send(group_name(game_id), message)


def _send(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    loop = _server_loop
    if (
        isinstance(layer, InMemoryChannelLayer)
        and loop is not None
        and loop.is_running()
        and not _inside(loop)
    ):
        future = asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop)
        try:
            future.result(timeout=SEND_TIMEOUT)
        except FutureTimeout:
            future.cancel()
            logger.warning("%s: the server loop did not take a message in time", group)
        return
    async_to_sync(layer.group_send)(group, message)


def _inside(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def notify_game_advanced(game_id: int) -> None:
    send_to_game(game_id, {"type": "game.advanced"})


def notify_stream(
    game_id: int, *, speaker: str, text: str, at: tuple[float, float] = (0.0, 0.0), slot: str = ""
) -> None:
    """The words streamed so far; `at`: when the oldest and the newest of the words not sent before came from
    the model (wall clock; the load benchmark measures from them to the page's frame, MERCURY_STREAM_TIMESTAMPS);
    `slot`: the stream box it fills when several turns stream side by side (a word of [a-z0-9_], or "")."""
    message = {"type": "game.stream", "speaker": speaker, "text": text, "at": list(at), "slot": slot}
    send_to_game(game_id, message)


def notify_error(game_id: int, *, error: str, cause: str = "", speaker: str = "") -> None:
    """A turn failed: its pages show a card saying what happened (`cause`: the failure's kind, gateway.CAUSES's
    keys or "budget") and what to do, and stop showing `speaker` as having the floor."""
    send_to_game(game_id, {"type": "game.error", "error": str(error), "cause": cause, "speaker": speaker})
