"""One websocket consumer per open game page.

It renders from the database (so a reconnect shows every message exactly once), drives the game's AI turns while
the owner is connected, and relays a turn's text as it streams: escaped, rendered fragments, coalesced to at most
five frames a second. Moves come in as ordinary HTTP posts; a committed turn reaches every page of the game through
the channel group (`services.broadcast`).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.db import connections
from django.template.loader import render_to_string

from simulations.ai import prompts
from simulations.ai.gateway import ModelFailure
from simulations.engine.mercury import Step
from simulations.models import Game
from simulations.services.access import can_drive, can_read
from simulations.services.ai_turns import play_ai_step
from simulations.services.broadcast import group_name
from simulations.services.lease import acquire_lease, lease_expires_in, new_holder, release_lease
from simulations.services.scenarios import scenario_of
from simulations.services.turns import StaleTurn, games_with_scenario, step_of
from simulations.views.presenters import game_context, transcript

FRAME_INTERVAL = 0.2  # seconds between streamed frames: at most 5 a second
_drivers: dict[int, asyncio.Lock] = {}  # one AI driver per game in this process


class TurnCancelled(BaseException):
    """Raised from the chunk callback to abandon a turn whose page went away (BaseException: nothing catches it)."""


def _play_in_worker(
    *, game: Game, step: Step, on_chunk: Callable[[str], None], on_restart: Callable[[], None]
) -> None:
    """One AI turn in a worker thread of its own, which then closes its database connections: a pooled thread
    must not keep a connection open after the turn, however the turn ended."""
    try:
        play_ai_step(game=game, step=step, on_chunk=on_chunk, on_restart=on_restart)
    finally:
        connections.close_all()


class GameConsumer(AsyncWebsocketConsumer):
    game_id: int
    driver: bool
    last_seq: int

    async def connect(self) -> None:
        self.game_id = int(self.scope["url_route"]["kwargs"]["game_id"])
        user = self.scope.get("user")
        game = await database_sync_to_async(self._load)()
        if game is None or user is None or not user.is_authenticated or not can_read(user, game):
            await self.close(code=4403)
            return
        self.driver = can_drive(user, game)
        self.last_seq = 0
        self.cancelled = threading.Event()
        self.task: asyncio.Task[None] | None = None
        self.pending = False
        self.holder = new_holder()
        await self.channel_layer.group_add(group_name(self.game_id), self.channel_name)
        await self.accept()
        await self.send_update(full=True)
        self.kick()

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "cancelled"):
            self.cancelled.set()  # an AI turn streaming for this page is abandoned, never half-stored
            await self.channel_layer.group_discard(group_name(self.game_id), self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        # Moves arrive as HTTP posts (CSRF-protected); any frame from the page just asks for a fresh render.
        await self.send_update(full=True)

    # --- group messages -------------------------------------------------------------------------------------

    async def game_advanced(self, event: dict[str, Any]) -> None:
        await self.send_update(full=False)
        self.kick()

    async def game_stream(self, event: dict[str, Any]) -> None:
        html = render_to_string("game/_stream.html", {"speaker": event["speaker"], "text": event["text"]})
        await self.send(text_data=html)

    async def game_error(self, event: dict[str, Any]) -> None:
        html = render_to_string("game/_error.html", {"error": event["error"], "game_id": self.game_id})
        await self.send(text_data=html)

    # --- rendering ------------------------------------------------------------------------------------------

    def _load(self) -> Game | None:
        return games_with_scenario().filter(pk=self.game_id).first()

    def _render(self, full: bool) -> tuple[str, int]:
        game = games_with_scenario().get(pk=self.game_id)
        since = 0 if full else self.last_seq
        entries = transcript(game, since_seq=since)
        context = game_context(game) | {"entries": entries, "oob": True}
        parts = [render_to_string("game/_panels.html", context)]
        template = "game/_transcript.html" if full else "game/_new_entries.html"
        if full or entries:
            parts.append(render_to_string(template, context))
        parts.append(render_to_string("game/_stream.html", {}))
        last = entries[-1].seq if entries else since
        return "".join(parts), last

    async def send_update(self, full: bool) -> None:
        html, self.last_seq = await database_sync_to_async(self._render)(full)
        await self.send(text_data=html)

    # --- driving AI turns -----------------------------------------------------------------------------------

    def kick(self) -> None:
        self.pending = True  # read by a running driver before it stops, so no kick is ever lost
        if self.driver and (self.task is None or self.task.done()):
            self.task = asyncio.create_task(self.drive())

    async def drive(self) -> None:
        lock = _drivers.setdefault(self.game_id, asyncio.Lock())
        if lock.locked():
            return  # another page of this game in this process is driving it
        async with lock:
            try:
                await self._drive()
            finally:
                await database_sync_to_async(release_lease)(game_id=self.game_id, holder=self.holder)
        if not lock.locked() and _drivers.get(self.game_id) is lock:
            del _drivers[self.game_id]  # no lock is kept for a game nobody drives

    async def _drive(self) -> None:
        while not self.cancelled.is_set():
            self.pending = False
            game, step = await database_sync_to_async(self._next)()
            if step.kind != "ai":
                if self.pending:
                    continue  # the game moved while we looked: look again
                return
            if not await database_sync_to_async(acquire_lease)(game_id=self.game_id, holder=self.holder):
                # Another process drives this game; if it dies its lease lapses, and we take over then.
                wait = await database_sync_to_async(lease_expires_in)(game_id=self.game_id)
                await asyncio.sleep(min(wait + 0.1, 30.0))
                continue
            try:
                await self.play_turn(game, step)
            except StaleTurn:
                continue
            except ModelFailure as exc:
                await self.channel_layer.group_send(
                    group_name(self.game_id), {"type": "game.error", "error": str(exc)}
                )
                return
            except TurnCancelled:
                return

    def _next(self) -> tuple[Game, Step]:
        game = games_with_scenario().get(pk=self.game_id)
        return game, step_of(game)

    async def play_turn(self, game: Game, step: Step) -> None:
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[str | None] = asyncio.Queue()

        def on_chunk(text: str) -> None:
            if self.cancelled.is_set():
                raise TurnCancelled
            loop.call_soon_threadsafe(chunks.put_nowait, text)

        def on_restart() -> None:  # the model call is retried: the words shown so far are void
            loop.call_soon_threadsafe(chunks.put_nowait, None)

        speaker = scenario_of(game.scenario).display_name(step.role) if step.role else "The debrief"
        relay = asyncio.create_task(self.relay(chunks, speaker))
        try:
            # Its own thread: the shared sync thread must stay free for this page's renders and its disconnect.
            turn = partial(_play_in_worker, game=game, step=step, on_chunk=on_chunk, on_restart=on_restart)
            await database_sync_to_async(turn, thread_sensitive=False)()
        finally:
            relay.cancel()

    async def relay(self, chunks: asyncio.Queue[str | None], speaker: str) -> None:
        """Coalesce streamed chunks into frames for the whole group, at most one per FRAME_INTERVAL.
        A None in the queue means the call is retried: the text starts again from nothing."""
        text, sent_at = "", 0.0

        def add(chunk: str | None) -> str:
            return "" if chunk is None else text + chunk

        while True:
            text = add(await chunks.get())
            while not chunks.empty():
                text = add(chunks.get_nowait())
            wait = FRAME_INTERVAL - (time.monotonic() - sent_at)
            if wait > 0:
                await asyncio.sleep(wait)
                while not chunks.empty():
                    text = add(chunks.get_nowait())
            if prompts.PASS.startswith(text.strip().upper()):
                continue  # a seat that passes answers PASS: a decision, not words to show
            sent_at = time.monotonic()
            await self.channel_layer.group_send(
                group_name(self.game_id), {"type": "game.stream", "speaker": speaker, "text": text}
            )
