"""One websocket consumer per open game page: it renders, it does not play.

It renders from the database (so a reconnect shows every message exactly once) and relays what the game's driver
sends to the game's group: streamed words as escaped, rendered fragments (the driver coalesces them to at most five
frames a second), a committed turn as a fresh render, a model failure. It never plays a turn: when the owner's page
connects, or a move leaves an AI seat to act, it queues "drive game N" (`simulations.driving.tasks`) and a background
worker drives the game, whether or not any page stays open. Moves come in over this socket (forms marked
`data-socket-move`) or as HTTP posts, through the one move pipeline (`services.policy.moves.take_move`), which queues the
drive itself from a page thread (`services.pages.page_threads`), and the render after another page's move queues it only if nobody did.

A connection lives only as long as its log-in: logging out closes it (a message to its session's group), and the
session is checked again before each render a frame asks for, each committed turn and every few seconds of
streaming. Frames from the page are limited in size and rate (a flood of one-byte frames would otherwise cost a
full re-render each).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.http import QueryDict
from django.template.loader import render_to_string

from mercury.asgi_handler import request_threads
from simulations.kinds import ai_acts_next, kind_of
from simulations.models import Game
from simulations.services.ledger.seats import seen_by, viewed_as
from simulations.services.ledger.turns import game_with_scenario, load_game, stored_version
from simulations.services.pages.broadcast import group_name, session_group, session_still_valid
from simulations.services.pages.fragments import fragment
from simulations.services.pages.page_threads import hand_back, page_threads
from simulations.services.pages.presence import mark_gone, mark_present
from simulations.services.people.access import can_drive, can_read
from simulations.services.play.drive_queue import queue_drive_if_ai_next
from simulations.services.policy.moves import take_move
from simulations.services.policy.student_errors import failure_title

# Close codes (4000-4999 are the application's): the page's websocket extension reconnects on its own after any.
NOT_FOUND, NOT_ALLOWED, LOGGED_OUT, TOO_MANY_FRAMES, FRAME_TOO_LARGE = 4404, 4403, 4401, 4429, 4413
# The id column's range: a larger number names no game (and must not reach the database).
MAX_GAME_ID = 2**63 - 1
SLOT = re.compile(r"[a-z0-9_]{1,40}")  # a stream box's id suffix: never markup from a message
SESSION_RECHECK_SECONDS = 5.0  # while streaming, the session is looked up again at most this often
RENDER_INTERVAL = 1.0  # seconds: frames asking for a render sooner share the last one
# Seconds: turns committed closer together than this share one render (skipped turns, votes, a model without a
# typing delay commit several a second; a reader sees them arrive together either way).
ADVANCE_COALESCE = 0.1
# A page that heard nothing for this long looks at the game's version itself: a message can be lost (channels_redis
# drops a page's messages once 100 wait unread, as when many games stream at once), and the page must not miss
# the turn its student has to play.
IDLE_RECHECK = 3.0
IDLE_RECHECK_MAX = 30.0


# What a move sent over the socket may be answered with, besides its kind's own refusals.
NOT_YOURS = "Only the student playing this game can make its moves; you can watch it here."
GONE = "This game no longer exists."
MOVE_FAILED = "Your move could not be taken because of an error on our side; send it again in a moment."


def move_fields(text: str | None) -> QueryDict | None:
    """A frame's move (`{"move": {field: text or [texts], ...}}`: a field a form holds several times, such as
    ticked boxes, is a list) as a post's fields, or None for any other frame (a request for a render)."""
    if not text or not text.startswith("{"):
        return None
    try:
        frame = json.loads(text)
    except ValueError:
        return None
    sent = frame.get("move") if isinstance(frame, dict) else None
    if not isinstance(sent, dict):
        return None
    fields = QueryDict(mutable=True)
    for name, value in sent.items():
        values = value if isinstance(value, list) else [value]
        if not isinstance(name, str) or not all(isinstance(v, str) for v in values):
            return None
        fields.setlist(name, values)
    return fields


def _notice_html(error: str, *, answers: str, taken: bool = False) -> str:
    """The notice that answers a move sent over the socket: its sentence, if refused, and which move it answers."""
    context = {"error": error, "oob": True, "answers": answers, "taken": taken}
    return render_to_string("game/_notice.html", context)


class NotFoundConsumer(AsyncWebsocketConsumer):
    """Any websocket path that names no game (`/ws/`, `/ws/games/abc/`, `/ws/games/-1/`): refused cleanly."""

    async def connect(self) -> None:
        await self.close(code=NOT_FOUND)


logger = logging.getLogger("mercury")
P = ParamSpec("P")
T = TypeVar("T")


def _in_request_thread(fn: Callable[P, T]) -> Callable[P, Awaitable[T]]:
    """`fn` as an awaitable run in a request thread (`mercury.asgi_handler.request_threads`), as a post's view
    runs: work that may wait on a model does not hold one of the few page threads."""

    async def call(*args: P.args, **kwargs: P.kwargs) -> T:
        thread = request_threads.take()
        run = database_sync_to_async(hand_back(fn), thread_sensitive=False, executor=thread)
        try:
            return await run(*args, **kwargs)  # type: ignore[no-any-return]
        finally:
            request_threads.give_back(thread)

    return call


def _in_page_thread(fn: Callable[P, T]) -> Callable[P, Awaitable[T]]:
    """`fn` as an awaitable run in this process's page threads. One page's calls are still awaited one at a
    time, in order."""
    return database_sync_to_async(hand_back(fn), thread_sensitive=False, executor=page_threads())  # type: ignore[no-any-return]


class GameConsumer(AsyncWebsocketConsumer):
    game_id: int
    driver: bool = False  # the page may move (its player's): set at connect
    last_seq: int
    session_key: str
    user_pk: int
    session_checked_at: float
    rendered_at: float
    frames: deque[float]
    advanced_at: float  # when the last render for a committed turn began
    advance_pending: bool  # a committed turn is not rendered yet
    advance_later: asyncio.Task[None] | None  # the render that will show it
    sending: asyncio.Lock  # frames leave in the order the game made them (see game_advanced)
    shown_version: int  # the game's version in the last render
    shown: dict[str, str]  # the kind's memory of what the page shows (render_update's `shown`)
    viewer_seat: str | None = (
        None  # the seat its student holds in a class group's game (None: the owner's view)
    )
    seat: str = ""  # the seat the page is drawn for (the viewer's, or the owner's): private words' filter
    heard_at: float  # when the last message from the game's group came
    # Per stream box: the newest words held behind a waiting render, and when they came.
    words_waiting: dict[str, tuple[dict[str, Any], float]]
    watcher: asyncio.Task[None] | None  # see _watch

    async def dispatch(self, message: dict[str, Any]) -> None:
        """channels' dispatch without its `aclose_old_connections` before each message: that is a hop to channels'
        one database thread, shared by every page of the process, to close the connections of that thread, which
        this consumer never uses (its database work runs in the page threads, `_in_page_thread`, each call handing
        its connection back). One hop for every streamed frame and committed turn of every page, for nothing."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def connect(self) -> None:
        self.game_id = int(self.scope["url_route"]["kwargs"]["game_id"])
        user = self.scope.get("user")
        access = await _in_page_thread(self._access)(user) if 0 < self.game_id <= MAX_GAME_ID else None
        if access is None or not access[0]:
            await self.close(code=NOT_ALLOWED)
            return
        self.driver = access[1]
        self.session_key, self.user_pk = self.scope["session"].session_key or "", user.pk
        self.session_checked_at, self.rendered_at, self.frames = time.monotonic(), 0.0, deque()
        self.advanced_at, self.advance_pending, self.advance_later = 0.0, False, None
        self.sending, self.words_waiting = asyncio.Lock(), {}
        self.last_seq, self.shown_version, self.heard_at, self.watcher = 0, -1, time.monotonic(), None
        self.shown = {}
        await self.channel_layer.group_add(group_name(self.game_id), self.channel_name)
        await self.channel_layer.group_add(session_group(self.session_key), self.channel_name)
        await self.accept()
        await self.send_update(full=True)
        self.watcher = asyncio.create_task(self._watch())
        if self.driver:
            await _in_page_thread(mark_present)(self.game_id, self.user_pk)  # the class room's "on the page"
            # Even if a lease is held: its holder may be dead, and the queued task waits for the lease to lapse.
            await _in_page_thread(self._queue_drive)(even_if_driven=True)

    async def disconnect(self, code: int) -> None:
        for task in (getattr(self, "advance_later", None), getattr(self, "watcher", None)):
            if task is not None:
                task.cancel()
        if hasattr(self, "last_seq"):  # accepted: leave the groups (the game goes on without this page)
            await self.channel_layer.group_discard(group_name(self.game_id), self.channel_name)
            await self.channel_layer.group_discard(session_group(self.session_key), self.channel_name)
            if self.driver:
                await _in_page_thread(mark_gone)(self.game_id, self.user_pk)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        # A frame is either a move (`{"move": {field: value}}`, a form marked data-socket-move, sent by the page's
        # script while the socket is open; limited like posted moves, by the move rate) or a request for a fresh
        # render, which a page never needs many of: a large frame or a flood closes the connection, and renders are
        # spaced out. The handshake's origin check stands in for a post's CSRF token (mercury/asgi_guards.py).
        size = len(text_data.encode()) if text_data is not None else len(bytes_data or b"")
        if size > settings.MERCURY_WS_MAX_MOVE_BYTES:
            await self.close(code=FRAME_TOO_LARGE)
            return
        fields = move_fields(text_data)
        if fields is not None:
            await self._move(fields)
            return
        if size > settings.MERCURY_WS_MAX_FRAME_BYTES:
            await self.close(code=FRAME_TOO_LARGE)
            return
        now = time.monotonic()
        self.frames.append(now)
        while self.frames and self.frames[0] < now - 10:
            self.frames.popleft()
        if len(self.frames) > settings.MERCURY_WS_FRAMES_PER_10_SECONDS:
            await self.close(code=TOO_MANY_FRAMES)
            return
        if now - self.rendered_at < RENDER_INTERVAL or not await self._still_logged_in(force=True):
            return
        await self.send_update(full=True)

    # --- moves over the socket ------------------------------------------------------------------------------

    async def _move(self, fields: QueryDict) -> None:
        """Take the move as its post would be taken, then answer with the notice (which says which move it answers,
        and whether it was taken) and, once taken, the game's render (at once, unless it may share the answer's):
        the page needs no request and no second render. The move runs in a request thread, as its post would (a
        real model may judge a text first), together with the session's check and the notice's render; the render
        follows from the game the move committed, in one more hop (the page's frames leave in order, under
        `sending`, which the move's own wait for a model does not hold)."""
        idem = fields.get("idem", "")
        if not self.driver:
            await self._send_notice(NOT_YOURS, answers=idem)
            return
        try:
            answer = await _in_request_thread(self._take_move)(fields)
        except Exception:
            logger.exception("game %s: a move sent over the websocket failed", self.game_id)
            answer = _notice_html(MOVE_FAILED, answers=idem), None, False
        else:
            if answer is None:
                await self._logged_out()
                return
            self.session_checked_at = time.monotonic()
        notice, taken, ai_next = answer
        async with self.sending:
            await self.send(text_data=notice)
        if taken is None:
            return
        # Rendered as any committed turn: a student's move comes seconds after the render that asked for it, so
        # only a move sent within a blink of it waits for the delegations' answer, and is shown with it.
        await self._show_turn(ai_next=ai_next, taken=taken)

    def _take_move(self, fields: QueryDict) -> tuple[str, Game | None, bool] | None:
        """In a request thread: None when the page's session has ended, else the notice, the game the move
        committed if it was taken (its drive is queued: `take_move`), and whether an AI seat acts next."""
        if not session_still_valid(self.session_key, self.user_pk):
            return None
        game = self._load()
        if game is None:
            error = GONE
        else:
            taken = take_move(game, user_id=self.user_pk, fields=fields, pages=kind_of(game).pages)
            error, game = taken.error, taken.game
        notice = _notice_html(error, answers=fields.get("idem", ""), taken=not error)
        if error or game is None:
            return notice, None, False
        return notice, game, ai_acts_next(game)

    async def _send_notice(self, error: str, *, answers: str) -> None:
        html = _notice_html(error, answers=answers)
        async with self.sending:
            await self.send(text_data=html)

    # --- group messages -------------------------------------------------------------------------------------

    async def game_advanced(self, event: dict[str, Any]) -> None:
        """A turn was committed. It renders at once when the game now waits for its user or is over, or when it
        is the first in a while; a turn an AI seat follows within ADVANCE_COALESCE of the last render waits for
        the next render, which shows every turn committed meanwhile. Streamed words wait with that render and go
        out right after it (see game_stream); any other frame (an error, a page's request) first sends a waiting
        render, so the page sees the game in order."""
        self.heard_at = time.monotonic()
        version = event.get("version")
        if version is not None and int(version) <= self.shown_version:
            return  # the page shows this turn already (a render since, e.g. the answer to its own move)
        await self._show_turn(ai_next=bool(event.get("ai_next")))

    async def _show_turn(self, *, ai_next: bool, taken: Game | None = None) -> None:
        """A committed turn to render (`game_advanced`, or `taken`, the page's own move): at once, or, when an AI
        seat follows within ADVANCE_COALESCE of the last render, with the render that will show the next turns."""
        self.advance_pending = True
        if ai_next:
            if self.advance_later is not None:
                return  # the waiting render will show this turn too
            wait = self.advanced_at + ADVANCE_COALESCE - time.monotonic()
            if wait > 0:
                self.advance_later = asyncio.create_task(self._send_advanced(after=wait))
                return
        await self._send_advanced(taken=taken)

    async def _send_advanced(self, after: float = 0.0, *, taken: Game | None = None) -> None:
        """`taken`: the game as the page's own move committed it (checked and queued already; see `_advanced`)."""
        if after:
            await asyncio.sleep(after)
        async with self.sending:
            waiting, self.advance_later = self.advance_later, None
            if waiting is not None and waiting is not asyncio.current_task():
                # This render shows what the waiting one would have: left to run, it would fire later into
                # the next window and render a turn that should have waited for that window's end (at a fast
                # model's pace, a third more renders than turns the page could see).
                waiting.cancel()
            if not self.advance_pending:
                await self._send_words_waiting()  # what rendered the turn sent them already, if any
                return
            self.advance_pending = False
            self.advanced_at = self.rendered_at = time.monotonic()
            # One trip to a page thread: the session check, the render and the queue decision.
            rendered = await _in_page_thread(self._advanced)(taken)
            if rendered is None:
                await self._logged_out()
                return
            html, self.last_seq, self.shown_version = rendered
            self.session_checked_at = time.monotonic()
            await self.send(text_data=html)
            await self._send_words_waiting()

    async def _flush_advanced(self) -> None:
        if self.advance_pending:
            await self._send_advanced()

    async def game_stream(self, event: dict[str, Any]) -> None:
        """Words of the turn being played. While a committed turn's render waits (ADVANCE_COALESCE), they wait
        with it and follow it: the render empties the stream box, and rendering at once for the words instead
        cost a render for nearly every turn of a fast model. Only a box's newest words are kept (each message
        holds everything said so far), and words of a turn the page already shows as committed are dropped."""
        got, self.heard_at = time.time(), time.monotonic()
        if self.advance_pending and self.advance_later is not None:
            self.words_waiting[str(event.get("slot") or "")] = (event, got)
            return
        await self._flush_advanced()
        if not await self._still_logged_in(force=False):
            return
        async with self.sending:
            await self._send_words(event, got)

    async def _send_words_waiting(self) -> None:
        """Under `sending`, after a render."""
        waiting, self.words_waiting = self.words_waiting, {}
        if waiting and await self._still_logged_in(force=False):
            for event, got in waiting.values():
                await self._send_words(event, got)

    async def _send_words(self, event: dict[str, Any], got: float) -> None:
        """Under `sending`. `version`: the game's version when the turn began (its commit makes the next); -1
        where several turns stream at once from one version (a parallel stage), which is never dropped."""
        if 0 <= int(event.get("version", -1)) < self.shown_version:
            return  # the turn is committed and shown as an entry: its words would show it twice
        if event.get("audience") and self.seat not in event["audience"]:
            return  # another pair's private talk (a class group's game): not this page's to see
        slot = str(event.get("slot") or "")
        context = {
            "speaker": event["speaker"],
            "text": event["text"],
            "slot": slot if SLOT.fullmatch(slot) else "",
            # Markdown (a debrief) is rendered by the fragment, after escaping (services.pages.model_markdown).
            "markdown": event.get("markdown") is True,
        }
        if settings.MERCURY_STREAM_TIMESTAMPS:
            # For bench/load.py: when the frame's oldest and newest words left the model, when the channel
            # layer took the message, when this page received it and when the frame went to the socket.
            # (oldest, newest, sent[, written for Redis][, arrived]): bench/layers.py's layers add the last two
            stamps = [float(t) for t in event.get("at") or ()][:5]
            context["chunk_at"] = " ".join(f"{t:.6f}" for t in (*stamps, got, time.time()))
        await self.send(text_data=fragment("game/_stream.html", context))

    async def panels_drawn(self, event: dict[str, Any]) -> None:
        """A post's answer is drawing this game's panels in a page of this session (the page posts a move while its
        socket is not open, as when it has just opened; the post says so before its move commits, so this comes
        before the commit's own message): what the kind remembers of the page's regions may no longer be what it
        shows, and the next update sends the panels whole. A new memory, not the old one emptied: a render
        under way in a page thread fills the one it was given."""
        if event.get("game") == self.game_id:
            self.shown = {}

    async def class_notice(self, event: dict[str, Any]) -> None:
        """The class session's teacher wrote to every student: shown above the page, wherever it is."""
        await self.send(
            text_data=render_to_string("game/_class_notice.html", {"text": event["text"], "oob": True})
        )

    async def session_ended(self, event: dict[str, Any]) -> None:
        """Its user logged out (in any tab): this page shows and drives nothing more."""
        await self._logged_out()

    async def _still_logged_in(self, *, force: bool) -> bool:
        now = time.monotonic()
        if not force and now - self.session_checked_at < SESSION_RECHECK_SECONDS:
            return True
        self.session_checked_at = now
        if await _in_page_thread(session_still_valid)(self.session_key, self.user_pk):
            return True
        await self._logged_out()
        return False

    async def _logged_out(self) -> None:
        self.driver = False
        await self.channel_layer.group_discard(group_name(self.game_id), self.channel_name)
        await self.close(code=LOGGED_OUT)

    async def game_error(self, event: dict[str, Any]) -> None:
        self.heard_at = time.monotonic()
        await self._flush_advanced()
        if not await self._still_logged_in(force=False):
            return
        cause, speaker = event.get("cause", ""), event.get("speaker", "")
        context = {"error": event["error"], "title": failure_title(cause), "cause": cause, "speaker": speaker,
                   "game_id": self.game_id}  # fmt: skip
        html = render_to_string("game/_error.html", context)
        async with self.sending:
            await self.send(text_data=html)

    # --- queueing the driver --------------------------------------------------------------------------------

    def _queue_drive(self, *, even_if_driven: bool, game: Game | None = None) -> None:
        """Queue "drive game N" when an AI seat acts next: on connect even if a lease is held, after a committed
        turn only if nobody drives (the move's view queued it already, unless something else committed it)."""
        game = game or self._load()
        if game is not None:
            queue_drive_if_ai_next(game, even_if_driven=even_if_driven)

    async def _watch(self) -> None:
        """After IDLE_RECHECK seconds without a message, compare the game's version with the one shown and render
        what the page missed (a lost message; see IDLE_RECHECK), or, the first time the player's page finds nothing
        new, queue the drive should an AI seat be next with nobody driving. A lost message is one of a burst, so a
        page that keeps finding nothing looks half as often each time (up to IDLE_RECHECK_MAX): a page waiting on
        its student does not cost its process's one database thread a query every few seconds."""
        wait = IDLE_RECHECK
        while True:
            heard = self.heard_at
            await asyncio.sleep(wait)
            if self.driver:
                await _in_page_thread(mark_present)(self.game_id, self.user_pk)
            if self.heard_at != heard or self.advance_pending:
                wait = IDLE_RECHECK  # the game is moving: look soon after it next goes quiet
                continue
            try:
                version = await _in_page_thread(self._version)()
                if version is not None and version != self.shown_version:
                    self.advance_pending = True
                    await self._send_advanced()
                    wait = IDLE_RECHECK
                else:
                    if self.driver and wait == IDLE_RECHECK:
                        # The game went quiet with the page up to date: if an AI seat is next, someone must drive
                        # it (a move's own queueing, after its commit, may have failed; see pages._answer_soon).
                        await _in_page_thread(self._queue_drive)(even_if_driven=False)
                    wait = min(2 * wait, IDLE_RECHECK_MAX)
            except OSError:
                return  # the page's socket closed under the render (uvicorn's ClientDisconnected): it is gone
            except Exception:  # a database hiccup: look again at the next interval
                logger.exception("game %s: the page's version check failed", self.game_id)

    def _version(self) -> int | None:
        return stored_version(self.game_id)

    def _advanced(self, taken: Game | None = None) -> tuple[str, int, int] | None:
        """The turn's render, or None when the page's session has ended (it was logged out). After the page's own
        move (`taken`, the game it committed) the session was checked with the move and its drive queued: the
        render starts from that game, unless the page has shown a later turn since (then from the game as it is)."""
        if taken is not None:
            game = taken if taken.version > self.shown_version else load_game(self.game_id)
            return self._render(False, game)
        if not session_still_valid(self.session_key, self.user_pk):
            return None
        game = load_game(self.game_id)
        rendered = self._render(False, game)
        if self.driver:
            self._queue_drive(even_if_driven=False, game=game)
        return rendered

    # --- rendering ------------------------------------------------------------------------------------------

    def _access(self, user: Any) -> tuple[bool, bool] | None:
        """(may read, may drive), in the database thread: a teacher's access asks the database for their classes."""
        game = self._load()
        if game is None or user is None or not user.is_authenticated:
            return None
        self.viewer_seat = seen_by(game, user).viewer_seat  # a class group's student other than the owner
        self.seat = self.viewer_seat or game.human_role  # whose words this page may show (a private talk's)
        return can_read(user, game), can_drive(user, game)

    def _load(self) -> Game | None:
        return game_with_scenario(self.game_id)

    def _render(self, full: bool, game: Game | None = None) -> tuple[str, int, int]:
        """The page's frame, the newest entry it shows and the game's version it shows."""
        game = viewed_as(game or load_game(self.game_id), self.viewer_seat)
        since = 0 if full else self.last_seq
        html, seq = kind_of(game).pages.render_update(game, since_seq=since, full=full, shown=self.shown)
        return html, seq, game.version

    async def send_update(self, full: bool) -> None:
        await self._flush_advanced()
        async with self.sending:
            self.rendered_at = time.monotonic()
            html, self.last_seq, self.shown_version = await _in_page_thread(self._render)(full)
            await self.send(text_data=html)
            await self._send_words_waiting()
