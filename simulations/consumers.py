"""One websocket consumer per open game page: it renders, it does not play.

It renders from the database (so a reconnect shows every message exactly once) and relays what the game's driver
sends to the game's group: streamed words as escaped, rendered fragments (the driver coalesces them to at most five
frames a second), a committed turn as a fresh render, a model failure. It never plays a turn: when the owner's page
connects, or a move leaves an AI seat to act, it queues "drive game N" (`simulations.tasks`) and a background
worker drives the game, whether or not any page stays open. Moves come in as ordinary HTTP posts.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string

from simulations.models import Game
from simulations.services.access import can_drive, can_read
from simulations.services.broadcast import group_name
from simulations.services.lease import lease_expires_in
from simulations.services.turns import games_with_scenario, step_of
from simulations.tasks import enqueue_drive
from simulations.views.presenters import game_context, transcript


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
        await self.channel_layer.group_add(group_name(self.game_id), self.channel_name)
        await self.accept()
        await self.send_update(full=True)
        if self.driver:
            # Even if a lease is held: its holder may be dead, and the queued task waits for the lease to lapse.
            await database_sync_to_async(self._queue_drive)(even_if_driven=True)

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "last_seq"):  # accepted: leave the group (the game goes on without this page)
            await self.channel_layer.group_discard(group_name(self.game_id), self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        # Moves arrive as HTTP posts (CSRF-protected); any frame from the page just asks for a fresh render.
        await self.send_update(full=True)

    # --- group messages -------------------------------------------------------------------------------------

    async def game_advanced(self, event: dict[str, Any]) -> None:
        # One trip to the database thread for both the render and the queue decision, on the same loaded game.
        html, self.last_seq = await database_sync_to_async(self._advanced)()
        await self.send(text_data=html)

    async def game_stream(self, event: dict[str, Any]) -> None:
        html = render_to_string("game/_stream.html", {"speaker": event["speaker"], "text": event["text"]})
        await self.send(text_data=html)

    async def game_error(self, event: dict[str, Any]) -> None:
        html = render_to_string("game/_error.html", {"error": event["error"], "game_id": self.game_id})
        await self.send(text_data=html)

    # --- queueing the driver --------------------------------------------------------------------------------

    def _queue_drive(self, *, even_if_driven: bool, game: Game | None = None) -> None:
        """Queue "drive game N" when an AI seat acts next. After a turn the driver committed, its lease is live
        and it carries on by itself: only a move made while nobody drives needs a new task."""
        game = game or self._load()
        if game is None or step_of(game).kind != "ai":
            return
        if even_if_driven or lease_expires_in(game_id=self.game_id) == 0:
            enqueue_drive(game_id=self.game_id)

    def _advanced(self) -> tuple[str, int]:
        game = games_with_scenario().get(pk=self.game_id)
        rendered = self._render(False, game)
        if self.driver:
            self._queue_drive(even_if_driven=False, game=game)
        return rendered

    # --- rendering ------------------------------------------------------------------------------------------

    def _load(self) -> Game | None:
        return games_with_scenario().filter(pk=self.game_id).first()

    def _render(self, full: bool, game: Game | None = None) -> tuple[str, int]:
        game = game or games_with_scenario().get(pk=self.game_id)
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
