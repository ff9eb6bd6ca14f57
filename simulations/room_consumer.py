"""The teacher's live room of a class session (`/ws/classes/<id>/`): it listens to every game of the session and
to the session itself, and whenever something changed (a turn committed, a student joined, the session started,
a seat handed to the AI) tells the room's page to fetch its roster again, at most once every ROSTER_EVERY seconds.

The roster itself comes over HTTP (`views.classes.roster`): it carries the teacher's forms (pause, stand-in), whose
CSRF tokens need the request a websocket does not have; the socket only says when."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.urls import reverse

from simulations.models import ClassSession
from simulations.services.pages.broadcast import class_group, group_name
from simulations.services.people import class_sessions

NOT_ALLOWED = 4403
ROSTER_EVERY = 1.0  # seconds between two roster fetches at most: a busy class's turns arrive many a second


class ClassRoomConsumer(AsyncWebsocketConsumer):
    session_id: int
    followed: set[str]  # the channel groups it listens to: the session's and each of its games'
    fetched_at: float
    later: asyncio.Task[None] | None

    async def connect(self) -> None:
        self.session_id = int(self.scope["url_route"]["kwargs"]["session_id"])
        self.followed, self.fetched_at, self.later = set(), 0.0, None
        games = await database_sync_to_async(self._games)(self.scope.get("user"))
        if games is None:
            await self.close(code=NOT_ALLOWED)
            return
        await self.accept()
        await self._follow([class_group(self.session_id), *games])

    async def disconnect(self, code: int) -> None:
        if self.later is not None:
            self.later.cancel()
        for group in self.followed:
            await self.channel_layer.group_discard(group, self.channel_name)

    def _games(self, user: Any) -> list[str] | None:
        """The session's games' groups, for its teacher (None for anyone else)."""
        session = ClassSession.objects.filter(pk=self.session_id).select_related("scenario").first()
        if session is None or user is None or not class_sessions.teaches(user, session):
            return None
        return [group_name(pk) for pk in class_sessions.session_games(session).values_list("pk", flat=True)]

    async def _follow(self, groups: list[str]) -> None:
        for group in set(groups) - self.followed:
            await self.channel_layer.group_add(group, self.channel_name)
            self.followed.add(group)

    async def class_changed(self, event: dict[str, Any]) -> None:
        """The session changed (a join, its start, a new game, a seat handed over): follow any new game too."""
        games = await database_sync_to_async(self._games)(self.scope.get("user"))
        if games is None:  # no longer its teacher's (the session is gone)
            await self.close(code=NOT_ALLOWED)
            return
        await self._follow(games)
        await self._changed()

    async def game_advanced(self, event: dict[str, Any]) -> None:
        await self._changed()

    async def game_stream(self, event: dict[str, Any]) -> None:
        """Words of a turn as they stream: the roster shows turns, not words."""

    async def game_error(self, event: dict[str, Any]) -> None:
        await self._changed()

    async def _changed(self) -> None:
        wait = self.fetched_at + ROSTER_EVERY - time.monotonic()
        if wait <= 0:
            await self._fetch()
        elif self.later is None:
            self.later = asyncio.create_task(self._fetch_after(wait))

    async def _fetch_after(self, wait: float) -> None:
        await asyncio.sleep(wait)
        self.later = None
        await self._fetch()

    async def _fetch(self) -> None:
        self.fetched_at = time.monotonic()
        roster = reverse("class_roster", args=[self.session_id])
        await self.send(
            text_data=f'<div id="roster-live" hx-swap-oob="true"><div hx-get="{roster}" hx-trigger="load" '
            'hx-target="#roster" hx-swap="outerHTML"></div></div>'
        )
