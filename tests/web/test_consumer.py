"""The game's websocket: who may connect, what a page receives, streaming, and a tab closed mid-stream (the
background driver carries on)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client

from mercury.asgi import application
from simulations.kinds.negotiation.games import step_of
from simulations.models import Game, TranscriptEntry
from tests.helpers import game_at_first_ai_turn, repin

pytestmark = [pytest.mark.django_db(transaction=True)]


def _setup_game(owner_name: str) -> tuple[User, Game]:
    """A game whose next step is an AI seat's first message in a private talk."""
    owner = User.objects.create_user(owner_name, password="a-long-test-passphrase-42")
    return owner, game_at_first_ai_turn(seed=5, owner=owner)


def _cookie(user: User | None) -> list[tuple[bytes, bytes]]:
    headers = [(b"origin", b"http://localhost")]
    if user is not None:
        client = Client()
        client.force_login(user)
        headers.append((b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()))
    return headers


async def _connect(
    game: Game, user: User | None, origin: bytes = b"http://localhost"
) -> WebsocketCommunicator:
    headers = await database_sync_to_async(_cookie)(user)
    headers[0] = (b"origin", origin)
    return WebsocketCommunicator(application, f"/ws/games/{game.pk}/", headers=headers)


async def _collect(comm: WebsocketCommunicator, until: str, timeout: float = 20) -> list[str]:
    frames: list[str] = []
    async with asyncio.timeout(timeout):
        while True:
            frame = await comm.receive_from(timeout=timeout)
            frames.append(frame)
            if until in frame:
                return frames


async def test_only_the_owner_and_staff_connect() -> None:
    owner, game = await database_sync_to_async(_setup_game)("owner")
    other = await database_sync_to_async(User.objects.create_user)(
        "other", password="a-long-test-passphrase-42"
    )
    for user in (other, None):
        comm = await _connect(game, user)
        connected, _ = await comm.connect()
        assert not connected
    comm = await _connect(game, owner, origin=b"http://evil.example")
    connected, _ = await comm.connect()
    assert not connected  # cross-origin handshakes are refused


async def test_the_owner_gets_a_render_then_the_ai_turn_streams_and_commits(settings: Any) -> None:
    settings.MERCURY_OFFLINE_TOKEN_DELAY = 0.01
    owner, game = await database_sync_to_async(_setup_game)("owner")
    before = await database_sync_to_async(TranscriptEntry.objects.filter(game=game).count)()
    comm = await _connect(game, owner)
    connected, _ = await comm.connect()
    assert connected
    first = await comm.receive_from(timeout=10)
    assert 'id="panels"' in first and 'id="transcript"' in first and 'hx-swap-oob="outerHTML"' in first
    frames = await _collect(comm, 'hx-swap-oob="beforeend:#transcript"')
    streamed = [f for f in frames if "is speaking" in f]
    assert streamed, "the AI's words stream before the message is committed"
    assert 'data-action="talk"' in frames[-1]  # the student's turn again
    after = await database_sync_to_async(TranscriptEntry.objects.filter(game=game).count)()
    assert after == before + 1
    await comm.disconnect()


async def _wait_for(check: Any, timeout: float = 20) -> None:
    """Poll the database (no page open) until `check()` is true."""
    async with asyncio.timeout(timeout):
        while not await database_sync_to_async(check)():
            await asyncio.sleep(0.1)


def _next_kind(game: Game) -> str:
    return step_of(Game.objects.get(pk=game.pk)).kind


async def test_a_tab_closed_mid_stream_does_not_stop_the_game_and_reopening_shows_it_further_along(
    settings: Any,
) -> None:
    settings.MERCURY_OFFLINE_TOKEN_DELAY = 0.02
    owner, game = await database_sync_to_async(_setup_game)("owner")
    seqs = database_sync_to_async(
        lambda: list(TranscriptEntry.objects.filter(game=game).order_by("seq").values_list("seq", flat=True))
    )
    before = await seqs()
    comm = await _connect(game, owner)
    await comm.connect()
    await _collect(comm, "is speaking")  # mid-stream
    await comm.disconnect()
    assert await seqs() == before  # the turn is not over: nothing half-stored
    await _wait_for(lambda: _next_kind(game) != "ai")  # no page open: the background driver finishes it
    after = await seqs()
    assert len(after) == len(before) + 1 and after == sorted(set(after))  # one new message, none doubled
    comm = await _connect(game, owner)
    await comm.connect()
    page = await comm.receive_from(timeout=10)
    rendered = re.findall(r'id="entry-(\d+)"', page)
    assert [int(seq) for seq in rendered] == after  # the reopened page shows the new message, each once
    assert 'data-action="talk"' in page  # the student's turn
    await asyncio.sleep(
        0.5
    )  # the reconnect queued a drive: with nothing for an AI seat to do, it plays nothing
    assert await seqs() == after
    await comm.disconnect()


async def test_streamed_text_is_escaped(settings: Any) -> None:
    """A model that answers with markup: the frames carry it as text, never as HTML."""
    from tests.realmodel.fake_openai import FakeOpenAI, Fault

    owner, game = await database_sync_to_async(_setup_game)("owner")
    hostile = '<img src=x onerror="alert(1)"> We support 2.1.'
    with (
        FakeOpenAI() as server
    ):  # a real streamed answer over HTTP (litellm's mock stream has no finish reason)
        settings.MERCURY_MODEL = "openai/gpt-4o-mini"
        settings.MERCURY_MODEL_API_BASE = server.api_base
        game = await database_sync_to_async(repin)(game)  # games keep the model they started with
        server.inject(Fault(body=hostile))
        server.inject(Fault(body='{"support": {"2": ["2.1"]}}'), kind="judge")
        comm = await _connect(game, owner)
        await comm.connect()
        frames = await _collect(comm, 'hx-swap-oob="beforeend:#transcript"')
        joined = "".join(frames)
        assert "&lt;img src=x onerror=" in joined and "<img src=x" not in joined
        await comm.disconnect()


def _game_waiting_for_the_student(owner_name: str) -> tuple[User, Game]:
    from simulations.kinds.negotiation.turns import play_ai_step

    owner, game = _setup_game(owner_name)
    game = play_ai_step(game=game, step=step_of(game))  # the partner spoke: the student's turn in the talk
    assert step_of(game).kind == "human"
    return owner, game


async def test_turns_committed_together_share_a_render_and_streamed_words_never_overtake_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from channels.layers import get_channel_layer

    from simulations import consumers
    from simulations.services.pages.broadcast import group_name

    window = (
        2.0  # a wide window, so "at once" and "with the next render" are far apart even on a busy machine
    )
    monkeypatch.setattr(consumers, "ADVANCE_COALESCE", window)
    owner, game = await database_sync_to_async(_game_waiting_for_the_student)("owner")
    comm = await _connect(game, owner)
    connected, _ = await comm.connect()
    assert connected
    await comm.receive_from(timeout=10)  # the full render
    layer, group = get_channel_layer(), group_name(game.pk)
    ai_turn = {"type": "game.advanced", "ai_next": True}  # an AI seat plays next
    loop = asyncio.get_running_loop()
    started = loop.time()
    for _ in range(3):  # three turns committed in a burst (skipped turns, votes)
        await layer.group_send(group, ai_turn)
    # A render sends the move's section always (the panels whole, or the regions that changed and the move).
    first = await comm.receive_from(timeout=10)  # the first renders at once
    second = await comm.receive_from(timeout=10)  # the other two share the next render, a window later
    assert 'id="actions"' in first and 'id="actions"' in second
    assert loop.time() - started >= window * 0.9
    assert await comm.receive_nothing(timeout=0.5)
    # Inside the window: a turn the student must answer renders at once all the same.
    started = loop.time()
    await layer.group_send(group, {"type": "game.advanced", "ai_next": False})
    assert 'id="actions"' in await comm.receive_from(timeout=10)
    assert loop.time() - started < window / 2
    # Two turns inside the window wait for the next render, and so do the next speaker's words that arrive
    # meanwhile: the render goes out a window later (it empties the stream box), then the newest words; words
    # of a turn the render already shows as committed (an older version) are dropped.
    started = loop.time()
    for message in (ai_turn, ai_turn):
        await layer.group_send(group, message)
    words = {"type": "game.stream", "speaker": "Canada", "slot": "", "version": game.version}
    await layer.group_send(group, words | {"text": "Canada opens"})
    await layer.group_send(group, words | {"text": "Canada opens the talk."})
    await layer.group_send(group, words | {"text": "Old words.", "slot": "b", "version": game.version - 1})
    rendered, streamed = await comm.receive_from(timeout=10), await comm.receive_from(timeout=10)
    assert 'id="actions"' in rendered and loop.time() - started >= window * 0.9
    assert "Canada opens the talk." in streamed and 'id="actions"' not in streamed
    assert await comm.receive_nothing(timeout=window + 0.5)
    # With no render waiting, words go out at once, unless their turn is already shown committed.
    started = loop.time()
    await layer.group_send(group, words | {"text": "Old words.", "version": game.version - 1})
    await layer.group_send(group, words | {"text": "Canada goes on."})
    assert "Canada goes on." in await comm.receive_from(timeout=10)
    assert loop.time() - started < window / 2
    assert await comm.receive_nothing(timeout=0.5)
    # A render at once for the student's turn replaces the one that was waiting: the next turn waits a whole
    # window from that render, not until the replaced render's time.
    await asyncio.sleep(window)  # out of the last window: the next turn renders at once
    await layer.group_send(group, ai_turn)
    assert 'id="actions"' in await comm.receive_from(timeout=10)
    await layer.group_send(group, ai_turn)  # waits for the window's end
    await asyncio.sleep(window / 2)
    await layer.group_send(group, {"type": "game.advanced", "ai_next": False})
    assert 'id="actions"' in await comm.receive_from(timeout=10)
    student_rendered = loop.time()
    await layer.group_send(group, ai_turn)
    assert 'id="actions"' in await comm.receive_from(timeout=10)
    assert loop.time() - student_rendered >= window * 0.9
    assert await comm.receive_nothing(timeout=0.5)
    await comm.disconnect()


async def test_one_driver_per_game_and_takeover_when_the_holder_dies(settings: Any) -> None:
    """Another process holds the lease (it is driving this game): the drive this page queued plays nothing
    until the lease lapses, as it does when that process dies; then it takes over and plays the turn."""
    from datetime import timedelta

    from django.utils import timezone

    from simulations.services.play.lease import acquire_lease

    owner, game = await database_sync_to_async(_setup_game)("owner")
    assert await database_sync_to_async(acquire_lease)(game_id=game.pk, holder="other-process")
    # The lease lapses well after the 1 s look below, even on a busy machine.
    until = timezone.now() + timedelta(seconds=3.0)
    await database_sync_to_async(Game.objects.filter(pk=game.pk).update)(driver_until=until)
    count = database_sync_to_async(lambda: TranscriptEntry.objects.filter(game=game).count())
    before = await count()
    comm = await _connect(game, owner)
    await comm.connect()
    await comm.receive_from(timeout=10)  # the first render
    await asyncio.sleep(1.0)
    assert await count() == before  # the other holder's lease is live: nothing is played here
    await _collect(comm, 'hx-swap-oob="beforeend:#transcript"', timeout=20)
    assert await count() == before + 1  # lapsed: taken over
    await comm.disconnect()
    # Released at the student's turn: the drive lets go after its commit, and the page may render that commit
    # (sent on commit) a moment before, so look for a few seconds rather than once.
    lease = database_sync_to_async(lambda: Game.objects.values_list("driver", "driver_until").get(pk=game.pk))
    async with asyncio.timeout(5):
        while await lease() != ("", None):
            await asyncio.sleep(0.05)


async def test_a_page_that_missed_a_turns_message_shows_the_turn_by_itself(
    settings: Any, monkeypatch: Any
) -> None:
    """A message can be lost (channels_redis drops a page's messages once 100 wait unread): a page that heard
    nothing for a while compares the game's version with the one it shows, and renders what it missed."""
    from simulations import consumers
    from simulations.services.play.drive import drive_game

    monkeypatch.setattr(consumers, "IDLE_RECHECK", 0.3)
    owner, game = await database_sync_to_async(_setup_game)("owner")
    staff = await database_sync_to_async(User.objects.create_user)(
        "teacher", password="a-long-test-passphrase-42", is_staff=True
    )
    comm = await _connect(game, staff)  # staff reads the game but does not drive it
    assert (await comm.connect())[0]
    await comm.receive_from(timeout=10)  # the first render
    assert await comm.receive_nothing(timeout=1.0)  # nothing changed: nothing sent
    settings.MERCURY_BROADCAST = False  # the turn's message is lost
    await database_sync_to_async(drive_game)(game_id=game.pk, max_steps=1, stream=False)
    frames = await _collect(comm, 'hx-swap-oob="beforeend:#transcript"', timeout=5)
    assert frames  # shown without any message
    # The page's consumer remembers what the page shows: the turn sends the panels' regions that changed, not
    # the panels whole. The move changed (its counters of messages left); the phase, the talk and the outcomes
    # did not.
    turn = frames[-1]
    assert 'id="panels"' not in turn and 'id="actions"' in turn and "Messages left: you" in turn
    assert 'id="progress"' not in turn and 'id="outcomes-slot"' not in turn
    await comm.disconnect()


async def test_a_version_check_whose_page_closed_under_it_stops_quietly(
    monkeypatch: Any, caplog: Any
) -> None:
    """The page's socket can close while its version check sends what it missed (uvicorn raises an OSError
    there): the check stops without logging a failure, as the page is gone."""
    from simulations import consumers

    monkeypatch.setattr(consumers, "IDLE_RECHECK", 0.05)
    page = consumers.GameConsumer.__new__(consumers.GameConsumer)
    page.game_id, page.heard_at, page.advance_pending, page.shown_version = 1, 0.0, False, 0
    sent: list[bool] = []

    async def closed_socket(after: float = 0.0) -> None:
        sent.append(True)
        raise OSError("client disconnected")

    monkeypatch.setattr(page, "_version", lambda: 1)  # a newer version than the page shows
    monkeypatch.setattr(page, "_send_advanced", closed_socket)
    await asyncio.wait_for(page._watch(), timeout=5)  # returns: does not look again every few seconds
    assert sent == [True]
    assert "version check failed" not in caplog.text


async def test_a_pages_database_work_runs_in_the_page_threads_and_hands_its_connection_back(
    monkeypatch: Any,
) -> None:
    """Renders and checks run in the process's page threads (not channels' one database thread, which every page
    would share), and no page thread keeps a connection between calls, even with persistent connections
    configured: a connection kept by a thread is one the process's pool (mercury/db/pool.py) never gets back."""
    import threading

    from django.db import connection

    from simulations import consumers
    from simulations.services.pages import page_threads

    seen: list[str] = []
    render = consumers.GameConsumer._render

    def spy(self: Any, *args: Any) -> Any:
        seen.append(threading.current_thread().name)
        rendered = render(self, *args)
        connection.close_at = None  # as if persistent (CONN_MAX_AGE=None): channels' clean-up would keep it
        return rendered

    monkeypatch.setattr(consumers.GameConsumer, "_render", spy)
    owner, game = await database_sync_to_async(_setup_game)("owner")
    comm = await _connect(game, owner)
    assert (await comm.connect())[0]
    await comm.receive_from(timeout=10)
    await comm.disconnect()
    assert seen and all(name.startswith("mercury-pages") for name in seen)

    everyone_there = threading.Barrier(page_threads.PAGE_THREADS, timeout=10)

    def holds_a_connection() -> bool:
        everyone_there.wait()  # one call on each thread of the pool
        return connection.connection is not None

    pool = page_threads.page_threads()
    calls = [asyncio.wrap_future(pool.submit(holds_a_connection)) for _ in range(page_threads.PAGE_THREADS)]
    assert await asyncio.gather(*calls) == [False] * page_threads.PAGE_THREADS


async def test_a_pages_messages_take_no_trip_to_channels_database_thread(
    settings: Any, monkeypatch: Any
) -> None:
    """channels' dispatch hops to its one database thread before every message to close that thread's old
    connections; a game page does its database work in the page threads, so it skips the hop (one per streamed
    frame and committed turn of every page of the process)."""
    import channels.consumer

    hops: list[int] = []

    async def counted() -> None:
        hops.append(1)

    monkeypatch.setattr(channels.consumer, "aclose_old_connections", counted)
    settings.MERCURY_OFFLINE_TOKEN_DELAY = 0.01
    owner, game = await database_sync_to_async(_setup_game)("owner")
    comm = await _connect(game, owner)
    assert (await comm.connect())[0]
    frames = await _collect(comm, 'hx-swap-oob="beforeend:#transcript"')
    assert any("is speaking" in f for f in frames)  # streamed words and the committed turn both came
    assert hops == []
    await comm.disconnect()
