"""Messages to a game's websocket group: the game advanced (pages re-render from the database), a turn's text as
it streams, a model failure.

Senders run anywhere: in a request, in the server's embedded worker threads, or in a separate worker process.
The in-memory channel layer is asyncio queues owned by the server's event loop and is not thread-safe, so a
thread outside that loop hands its message to the loop (`serve_from_loop` records it) instead of running a
private loop of its own; with Redis too, since that loop already holds the process's Redis connections. In a
process with no server (a `drive_worker`) each sending thread keeps one event loop of its own for the purpose
(`_thread_loop`): channels_redis keeps its connections per event loop, and a fresh loop per message (what
`async_to_sync` does in a worker thread) would cost a new Redis connection and far more CPU for every streamed
frame than a kept loop sending over the thread's one connection. The scaled set-up's layer does
better still: it sends from such a thread over a blocking connection of the thread's own
(`BatchedRedisChannelLayer.group_send_blocking`), without the loop's poll before the send that let the thread
wait for the GIL behind a hundred others. (Not one loop for the whole worker process:
every message would wait for that loop's thread to get the GIL among the drive threads. Not a loop kept per
thread in a server: its request threads live for one request each, and each would open a connection.)
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from importlib import import_module
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.conf import settings
from django.contrib.auth import SESSION_KEY

from mercury.channel_layer import BatchedRedisChannelLayer, LocalChannelLayer

logger = logging.getLogger("mercury")
_server_loop: asyncio.AbstractEventLoop | None = None
_thread = threading.local()  # .loop: the thread's event loop for messages to Redis
# Seconds a worker waits for the server loop to take a message; a page that misses one re-renders on the next.
SEND_TIMEOUT = 5.0


def group_name(game_id: int) -> str:
    return f"game-{game_id}"


def serve_from_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Record the event loop that serves the websockets (called by the server as it takes a connection)."""
    global _server_loop
    _server_loop = loop


def class_group(session_id: int) -> str:
    """The teachers' rooms of a class session (simulations/room_consumer.py)."""
    return f"class-{session_id}"


def notify_class_changed(session_id: int) -> None:
    """A class session changed (a student joined, it started or ended, a game began, a seat was handed over): its
    rooms fetch their roster again."""
    if settings.MERCURY_BROADCAST:
        _send(class_group(session_id), {"type": "class.changed"})


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


def notify_panels_drawn(session_key: str, game_id: int) -> None:
    """The game's panels are drawn in a page of this session by a post's answer, not by its websocket: the page's
    consumer forgets which regions it last sent (their next update sends the panels whole). Sent before the move
    commits, so that the consumer hears it before the commit's `game.advanced`."""
    if settings.MERCURY_BROADCAST and session_key:
        _send(session_group(session_key), {"type": "panels.drawn", "game": game_id})


def send_to_game(game_id: int, message: dict[str, Any]) -> None:
    """Best effort: a page that misses a message re-renders from the database when the next one arrives."""
    if settings.MERCURY_BROADCAST:
        _send(group_name(game_id), message)


def _send(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    loop = _server_loop
    if loop is not None and loop.is_running() and not _inside(loop):
        _send_in(loop, layer, group, message)  # a server process
        return
    if isinstance(layer, InMemoryChannelLayer):
        # No server loop recorded (headless play, tests): a page can only listen from a loop in this process.
        # With nobody in the group there is nothing to send, and async_to_sync's thread hop would cost a
        # headless game about a tenth of a second.
        if layer.groups.get(group):
            async_to_sync(layer.group_send)(group, message)
        return
    if isinstance(layer, BatchedRedisChannelLayer) and layer.group_send_blocking(group, message):
        return  # the scaled set-up's layer: see why there
    _thread_loop().run_until_complete(layer.group_send(group, message))


def _send_in(loop: asyncio.AbstractEventLoop, layer: Any, group: str, message: dict[str, Any]) -> None:
    """Send from that loop and wait for it, so one sender's messages keep their order. The in-process layer
    keeps them in order without the wait (`LocalChannelLayer.group_send_soon`): a drive does not stop for the
    loop's turn after each streamed frame and committed turn."""
    if isinstance(layer, LocalChannelLayer):
        layer.group_send_soon(loop, group, message)
        return
    future = asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop)
    try:
        future.result(timeout=SEND_TIMEOUT)
    except FutureTimeout:
        future.cancel()
        logger.warning("%s: the server loop did not send a message in time", group)


def _thread_loop() -> asyncio.AbstractEventLoop:
    """This thread's event loop for messages to Redis, kept between messages (and with it, the connection)."""
    loop: asyncio.AbstractEventLoop | None = getattr(_thread, "loop", None)
    if loop is None or loop.is_closed():
        loop = _thread.loop = asyncio.new_event_loop()
    return loop


def _inside(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def notify_game_advanced(game_id: int, *, version: int, ai_next: bool = False) -> None:
    """`version`: the game's version after the turn (a page that shows it already renders nothing for it).
    `ai_next`: an AI seat plays next, so a page may show this turn together with the next one."""
    send_to_game(game_id, {"type": "game.advanced", "version": version, "ai_next": ai_next})


def notify_stream(
    game_id: int,
    *,
    speaker: str,
    text: str,
    at: tuple[float, float] = (0.0, 0.0),
    slot: str = "",
    version: int = -1,
    markdown: bool = False,
    audience: Sequence[str] = (),
) -> None:
    """The words streamed so far; `at`: when the oldest and the newest of the words not sent before came from
    the model (wall clock; the load benchmark measures from them to the page's frame, MERCURY_STREAM_TIMESTAMPS);
    `slot`: the stream box it fills when several turns stream side by side (a word of [a-z0-9_], or "");
    `version`: the game's version the turn started from (a page showing a later one shows the turn committed),
    -1 when several turns stream from one version; `markdown`: the words are Markdown, shown rendered; `audience`:
    the seats whose pages may show them (a private talk's parties; empty: every page of the game)."""
    message: dict[str, object] = {
        "type": "game.stream", "speaker": speaker, "text": text, "at": list(at), "slot": slot, "version": version,
    }  # fmt: skip
    if markdown:
        message["markdown"] = True
    if audience:
        message["audience"] = list(audience)
    if settings.MERCURY_STREAM_TIMESTAMPS:  # bench/load.py times each hop: here the channel layer takes it
        message["at"] = [*at, time.time()]
    send_to_game(game_id, message)


def notify_error(game_id: int, *, error: str, cause: str = "", speaker: str = "") -> None:
    """A turn failed: its pages show a card saying what happened (`cause`: the failure's kind, gateway.CAUSES's
    keys or "budget") and what to do, and stop showing `speaker` as having the floor."""
    send_to_game(game_id, {"type": "game.error", "error": str(error), "cause": cause, "speaker": speaker})
