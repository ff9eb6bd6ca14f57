"""Moves sent over the game's websocket (`{"move": {...}}`, what the page's script sends for a form marked
data-socket-move while the socket is open): the same checks as a posted move, an answer that names the move, the
game's render at once and only once, and nothing taken from anyone but the game's player."""

from __future__ import annotations

import asyncio
import json
import re
from importlib import import_module
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.test import Client
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from mercury.asgi import application
from simulations.consumers import (
    FRAME_TOO_LARGE,
    LOGGED_OUT,
    MOVE_FAILED,
    NOT_YOURS,
    GameConsumer,
    move_fields,
)
from simulations.kinds.negotiation import pages as negotiation_pages
from simulations.models import Game, TranscriptEntry
from simulations.services.ledger.turns import load_game
from tests.helpers import game_in_private_talk

pytestmark = [pytest.mark.django_db(transaction=True)]
PASSWORD = "a-long-test-passphrase-42"
NOTICE = re.compile(r'<div id="notice"[^>]*data-answers="([^"]*)" data-taken="([01])"[^>]*>(.*?)</div>', re.S)
HIDDEN = re.compile(r'<input type="hidden" name="(\w+)" value="([^"]*)">')


def end_every_session() -> None:
    """Every session ended as a log-out ends it, here or in another process (the session engine may keep it in the
    cache too), or as its expiry does."""
    engine = import_module(settings.SESSION_ENGINE)
    for key in Session.objects.values_list("session_key", flat=True):
        engine.SessionStore(key).delete()


def _game_at_a_talk(name: str) -> tuple[User, Game, str]:
    """A game at the student's first message of a private talk, its owner, and a session cookie for them."""
    owner = User.objects.create_user(name, password=PASSWORD)
    client = Client()
    client.force_login(owner)
    game = game_in_private_talk(client, owner)
    return owner, game, client.cookies["sessionid"].value


def _cookie_for(user: User) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


async def _open(game: Game, session: str) -> tuple[WebsocketCommunicator, str]:
    """A connected page and its first (full) render."""
    headers = [(b"origin", b"http://localhost"), (b"cookie", f"sessionid={session}".encode())]
    comm = WebsocketCommunicator(application, f"/ws/games/{game.pk}/", headers=headers)
    connected, _ = await comm.connect()
    assert connected
    return comm, await comm.receive_from(timeout=10)


def _talk_form(html: str) -> dict[str, str]:
    """The talk form's hidden fields as the page rendered them (event, version, idempotency key)."""
    at = html.index('name="event" value="HUMAN_MESSAGE')
    form = html[html.rindex("<form", 0, at) :]
    form = form[: form.index("</form>")]
    return dict(HIDDEN.findall(form))


async def _answer(comm: WebsocketCommunicator) -> tuple[str, str, str]:
    """The notice that answers a move: (the key it answers, "1" if taken else "0", its sentence)."""
    async with asyncio.timeout(10):
        while True:
            frame = await comm.receive_from(timeout=10)
            match = NOTICE.search(frame)
            if match:
                return match.group(1), match.group(2), re.sub(r"<[^>]+>", "", match.group(3))


def _drives_pending(game_id: int) -> bool:
    """A drive of the game is queued or running, or holds its lease."""
    tasks = DBTaskResult.objects.filter(args_kwargs__kwargs__game_id=game_id)
    live = tasks.filter(status__in=(TaskResultStatus.READY, TaskResultStatus.RUNNING)).exists()
    return live or bool(Game.objects.get(pk=game_id).driver)


def _student_messages(game: Game) -> list[str]:
    """What the student (Canada) said after the opening statements."""
    entries = TranscriptEntry.objects.filter(game=game, speaker="CAN").order_by("seq")
    return list(entries.values_list("text", flat=True))[1:]


async def test_a_move_over_the_socket_is_taken_answered_and_rendered_once(settings: Any) -> None:
    settings.MERCURY_OFFLINE_TOKEN_DELAY = 0
    _, game, session = await database_sync_to_async(_game_at_a_talk)("student")
    comm, page = await _open(game, session)
    fields = _talk_form(page) | {"text": "Canada proposes a 2030 phase-out date for dental amalgam."}
    await comm.send_to(text_data=json.dumps({"move": fields}))
    assert await _answer(comm) == (fields["idem"], "1", "")
    render = await comm.receive_from(timeout=10)  # at once: not held back for the partner's answer
    assert "a 2030 phase-out date for dental amalgam" in render
    assert await database_sync_to_async(_student_messages)(game) == [fields["text"]]
    version = int(fields["version"]) + 1
    assert f'data-version="{version}"' in render
    # The partner answers (the move queued its drive); the commit's own announcement renders nothing again.
    frames: list[str] = []
    async with asyncio.timeout(20):
        while not any('hx-swap-oob="beforeend:#transcript"' in f for f in frames):
            frames.append(await comm.receive_from(timeout=20))
    assert not any(f'data-version="{version}"' in f for f in frames)  # one render of the move's turn
    await comm.disconnect()


async def test_a_move_sent_within_a_blink_of_the_last_render_shares_the_answers_render(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """As committed turns do (ADVANCE_COALESCE): a move the delegations answer, sent right after the page's last
    render of a turn, is rendered with that answer, once; a student taking seconds over it sees it at once (above)."""
    from channels.layers import get_channel_layer

    from simulations.services.pages.broadcast import group_name

    settings.MERCURY_OFFLINE_TOKEN_DELAY = 0
    monkeypatch.setattr(
        "simulations.consumers.ADVANCE_COALESCE", 30.0
    )  # "right after", however slow the machine
    _, game, session = await database_sync_to_async(_game_at_a_talk)("student")
    comm, page = await _open(game, session)
    layer = get_channel_layer()
    assert layer is not None
    await layer.group_send(group_name(game.pk), {"type": "game.advanced", "ai_next": False})
    await comm.receive_from(timeout=10)  # the turn's render: the window opens
    fields = _talk_form(page) | {"text": "Canada would fund monitoring in small island states."}
    await comm.send_to(text_data=json.dumps({"move": fields}))
    assert (await _answer(comm))[:2] == (fields["idem"], "1")
    render = await comm.receive_from(timeout=20)  # not the move alone: the partner's answer with it
    assert "fund monitoring in small island states" in render
    assert f'data-version="{int(fields["version"]) + 1}"' not in render
    assert len(re.findall(r'<li id="entry-\d+"', render)) >= 2  # the move and the answer, in one render
    await comm.disconnect()


async def _render_offering_a_talk_message(comm: WebsocketCommunicator) -> str:
    """The next frame that offers the student a message in the talk (the partner has answered)."""
    async with asyncio.timeout(20):
        while True:
            frame = await comm.receive_from(timeout=20)
            if 'name="event" value="HUMAN_MESSAGE' in frame:
                return frame


async def test_a_move_over_the_socket_is_followed_by_the_regions_that_changed_a_posted_one_by_the_panels_whole(
    settings: Any,
) -> None:
    """The panels are the consumer's to update while its page sends moves over the socket: the render after such a
    move sends only the regions that changed (and the move). A move the page posted (its socket not open yet) had
    its answer redraw the panels whole, and the consumer's next update sends them whole too
    (broadcast.notify_panels_drawn): what it remembered of the page's regions no longer holds."""
    settings.MERCURY_OFFLINE_TOKEN_DELAY = 0
    _, game, session = await database_sync_to_async(_game_at_a_talk)("student")
    comm, page = await _open(game, session)
    assert 'id="panels"' in page  # the first render: the panels whole
    fields = _talk_form(page) | {"text": "Canada asks for a monitoring fund for small island states."}
    await comm.send_to(text_data=json.dumps({"move": fields}))
    assert (await _answer(comm))[1] == "1"
    render = await comm.receive_from(timeout=10)
    assert (
        'id="actions"' in render and 'id="panels"' not in render
    )  # the move's render: the regions that changed
    offering = await _render_offering_a_talk_message(comm)  # the partner answered: a message to write again
    assert 'id="panels"' not in offering
    posted = _talk_form(offering) | {"text": "And a date for the fund's first report."}

    def post() -> int:
        client = Client()
        client.cookies["sessionid"] = session
        return client.post(f"/games/{game.pk}/move/", posted, headers={"HX-Request": "true"}).status_code

    assert await database_sync_to_async(post)() == 200
    async with asyncio.timeout(20):
        while 'id="actions"' not in (frame := await comm.receive_from(timeout=20)):
            pass
    assert 'id="panels"' in frame  # the update after the posted move: the panels whole
    assert await database_sync_to_async(_student_messages)(game) == [fields["text"], posted["text"]]
    await comm.disconnect()


async def test_the_same_move_sent_twice_is_taken_once_and_the_copy_is_told_why() -> None:
    _, game, session = await database_sync_to_async(_game_at_a_talk)("student")
    comm, page = await _open(game, session)
    fields = _talk_form(page) | {"text": "We can accept a phase-out of mercury-added products by 2025."}
    await comm.send_to(text_data=json.dumps({"move": fields}))
    await comm.send_to(text_data=json.dumps({"move": fields}))  # a double click
    first = await _answer(comm)
    second = await _answer(comm)
    assert first == (fields["idem"], "1", "")
    assert second[:2] == (fields["idem"], "0") and second[2]  # refused, with a sentence for the student
    assert await database_sync_to_async(_student_messages)(game) == [fields["text"]]
    await comm.disconnect()


async def test_a_refused_move_changes_nothing_and_says_why() -> None:
    _, game, session = await database_sync_to_async(_game_at_a_talk)("student")
    comm, page = await _open(game, session)
    fields = _talk_form(page)
    for bad in (
        fields | {"text": "   "},  # nothing to say
        fields | {"text": "An old turn.", "version": str(int(fields["version"]) - 1)},  # a stale form
        {k: v for k, v in fields.items() if k != "version"} | {"text": "No version."},
        fields | {"event": "VOTE_CAST", "ballot": "yes"},  # not a move allowed now
    ):
        await comm.send_to(text_data=json.dumps({"move": bad}))
        answers, taken, sentence = await _answer(comm)
        assert (answers, taken) == (fields["idem"], "0") and sentence.strip()
    assert await database_sync_to_async(_student_messages)(game) == []
    assert await database_sync_to_async(lambda: Game.objects.get(pk=game.pk).version)() == int(
        fields["version"]
    )
    await comm.disconnect()


async def test_only_the_player_moves_a_watching_admin_is_told_so() -> None:
    _, game, _ = await database_sync_to_async(_game_at_a_talk)("student")
    admin = await database_sync_to_async(User.objects.create_superuser)("admin", password=PASSWORD)
    comm, page = await _open(game, await database_sync_to_async(_cookie_for)(admin))
    fields = _talk_form(page) if "HUMAN_MESSAGE" in page else {"event": "HUMAN_MESSAGE", "version": "1"}
    await comm.send_to(text_data=json.dumps({"move": fields | {"text": "Not mine to say.", "idem": "k"}}))
    assert await _answer(comm) == ("k", "0", NOT_YOURS)
    assert await database_sync_to_async(_student_messages)(game) == []
    await comm.disconnect()


async def test_a_long_message_fits_a_frame_and_an_oversized_frame_closes_the_socket(settings: Any) -> None:
    _, game, session = await database_sync_to_async(_game_at_a_talk)("student")
    comm, page = await _open(game, session)
    text = "💧" * 2000  # the longest message, 8,000 bytes: over a render request's 4,096
    fields = _talk_form(page) | {"text": text}
    await comm.send_to(text_data=json.dumps({"move": fields}, ensure_ascii=False))
    assert (await _answer(comm))[:2] == (fields["idem"], "1")
    await comm.send_to(text_data="x" * (settings.MERCURY_WS_MAX_MOVE_BYTES + 1))
    async with asyncio.timeout(20):
        while (output := await comm.receive_output(timeout=20))["type"] != "websocket.close":
            pass  # the move's render, the partner's answer
    assert output["code"] == FRAME_TOO_LARGE
    assert await database_sync_to_async(_student_messages)(game) == [text]


async def test_a_move_from_a_page_whose_session_ended_is_not_taken_and_the_socket_closes() -> None:
    """The move's own trip checks the session (logged out in another process, or expired: no message came)."""
    _, game, session = await database_sync_to_async(_game_at_a_talk)("student")
    comm, page = await _open(game, session)
    await database_sync_to_async(end_every_session)()
    fields = _talk_form(page) | {"text": "Sent after my session ended."}
    await comm.send_to(text_data=json.dumps({"move": fields}))
    output = await comm.receive_output(timeout=10)
    assert output == {"type": "websocket.close", "code": LOGGED_OUT}  # no notice, no render
    assert await database_sync_to_async(_student_messages)(game) == []


async def test_a_move_that_fails_on_our_side_is_refused_with_a_sentence_and_the_page_carries_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, game, session = await database_sync_to_async(_game_at_a_talk)("student")
    comm, page = await _open(game, session)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the database went away")

    with monkeypatch.context() as patched:
        patched.setattr(negotiation_pages, "read_move", broken)
        fields = _talk_form(page) | {"text": "This one meets an error."}
        await comm.send_to(text_data=json.dumps({"move": fields}))
        assert await _answer(comm) == (fields["idem"], "0", MOVE_FAILED)
    fields |= {"text": "Sent again, it is taken."}  # the same form: nothing was committed
    await comm.send_to(text_data=json.dumps({"move": fields}))
    assert (await _answer(comm))[:2] == (fields["idem"], "1")
    assert await database_sync_to_async(_student_messages)(game) == [fields["text"]]
    await comm.disconnect()


async def test_should_the_moves_own_queueing_fail_the_quiet_page_queues_the_answer(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.MERCURY_OFFLINE_TOKEN_DELAY = 0
    _, game, session = await database_sync_to_async(_game_at_a_talk)("student")

    def fails(game: Game) -> None:
        raise RuntimeError("the database hiccuped")

    monkeypatch.setattr("simulations.services.policy.moves.queue_drive_after_move", fails)
    monkeypatch.setattr("simulations.consumers.IDLE_RECHECK", 0.5)
    comm, page = await _open(game, session)
    async with asyncio.timeout(10):  # the drive its connection queued has found the student to act, and gone
        while await database_sync_to_async(_drives_pending)(game.pk):
            await asyncio.sleep(0.05)
    fields = _talk_form(page) | {"text": "Canada asks AMAP what monitoring it would need."}
    await comm.send_to(text_data=json.dumps({"move": fields}))
    assert (await _answer(comm))[:2] == (fields["idem"], "1")
    assert "what monitoring it would need" in await comm.receive_from(timeout=10)  # the move's render
    async with asyncio.timeout(20):  # the partner answers all the same
        while 'hx-swap-oob="beforeend:#transcript"' not in await comm.receive_from(timeout=20):
            pass
    async with asyncio.timeout(10):  # its drive done (its last messages sent) before this test's loop closes
        while await database_sync_to_async(_drives_pending)(game.pk):
            await asyncio.sleep(0.05)
    await comm.disconnect()


def test_the_moves_render_starts_from_the_game_as_it_is_when_the_page_has_shown_a_later_turn() -> None:
    """The render after the page's own move uses the game that move committed, read nowhere again; should a
    later turn's render have gone out first, it reads the game as it is (never the older one over the newer)."""
    owner = User.objects.create_user("student", password=PASSWORD)
    client = Client()
    client.force_login(owner)
    game = game_in_private_talk(client, owner)
    page = GameConsumer()
    page.game_id, page.driver, page.shown, page.last_seq = game.pk, True, {}, 0
    page.shown_version = game.version - 1
    first = page._advanced(game)
    assert first is not None and first[2] == game.version
    older = load_game(game.pk)
    fields = {
        "event": "HUMAN_MESSAGE_SUBMITTED",
        "version": game.version,
        "text": "A later turn.",
        "idem": "l",
    }
    client.post(f"/games/{game.pk}/move/", fields)
    assert Game.objects.get(pk=game.pk).version == older.version + 1
    page.shown_version = older.version + 1  # the later turn's render went out first
    rendered = page._advanced(older)
    assert rendered is not None and rendered[2] == older.version + 1


def test_only_a_move_shaped_frame_is_a_move() -> None:
    fields = move_fields('{"move": {"event": "HUMAN_MESSAGE", "version": "3"}}')
    assert fields is not None and fields.dict() == {"event": "HUMAN_MESSAGE", "version": "3"}
    ticked = move_fields(
        '{"move": {"eliminate": ["c1", "c3"], "version": "4"}}'
    )  # a field the form holds twice
    assert ticked is not None and ticked.getlist("eliminate") == ["c1", "c3"] and ticked["version"] == "4"
    for other in (
        '{"move": {"eliminate": ["c1", 2]}}',
        "",
        "render please",
        "{",
        "[1]",
        '{"move": ["a"]}',
        '{"move": {"version": 3}}',
        '{"x": {}}',
    ):
        assert move_fields(other) is None
