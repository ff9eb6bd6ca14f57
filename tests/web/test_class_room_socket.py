"""The teacher's room of a class session is live over its websocket: a committed turn in any of the session's
games, a student joining, a seat handed over each tell the room to fetch its roster again; nobody but the session's
teacher may open that socket."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group, User
from django.test import Client

from mercury.asgi import application
from simulations.models import ClassSession, Game
from simulations.room_consumer import NOT_ALLOWED
from simulations.services.ledger.turns import commit_event
from simulations.services.people import class_sessions
from simulations.services.people.access import TEACHERS
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db(transaction=True)


def _cookie(user: User) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


def _started_session() -> tuple[ClassSession, str, str, Game]:
    """A session of two students sharing one game, started; the teacher's and a student's session cookies."""
    teacher = User.objects.create_user("teacher", is_staff=True)
    teacher.groups.add(Group.objects.get_or_create(name=TEACHERS)[0])
    session = class_sessions.open_session(
        teacher=teacher, version=mercury_version(), title="Live", max_students=3, students_per_group=2
    )
    students = [User.objects.create_user(name) for name in ("ada", "bo")]
    for student in students:
        class_sessions.join(user=student, code=session.code)
    (game,) = class_sessions.start(session, seed=4)
    return session, _cookie(teacher), _cookie(students[0]), game


async def _room(session_id: int, cookie: str) -> tuple[WebsocketCommunicator, Any]:
    headers = [(b"origin", b"http://localhost"), (b"cookie", f"sessionid={cookie}".encode())]
    comm = WebsocketCommunicator(application, f"/ws/classes/{session_id}/", headers=headers)
    return comm, await comm.connect()


async def _fetch_told(comm: WebsocketCommunicator, session_id: int) -> None:
    frame = await comm.receive_from(timeout=5)
    assert f'hx-get="/classes/{session_id}/roster/"' in frame and 'hx-trigger="load"' in frame


async def test_the_room_hears_every_change_of_its_session_and_only_its_teacher_listens(settings: Any) -> None:
    settings.MERCURY_OFFLINE_TOKEN_DELAY = 0
    session, teacher, student, game = await database_sync_to_async(_started_session)()
    comm, (connected, _) = await _room(session.pk, teacher)
    assert connected
    outsider, (allowed, code) = await _room(session.pk, student)
    assert not allowed and code == NOT_ALLOWED
    # A turn in the session's game (the first opening statement, as a student's page confirms it).
    await database_sync_to_async(commit_event)(
        game_id=game.pk, expected_version=game.version, event="OPENING_PRESENTED"
    )
    await _fetch_told(comm, session.pk)
    # A student joins late: the room hears it too (after the roster's minimum spacing).
    late = await database_sync_to_async(User.objects.create_user)("cy")
    await database_sync_to_async(class_sessions.join)(user=late, code=session.code)
    async with asyncio.timeout(5):
        await _fetch_told(comm, session.pk)
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()


def _post_notice(session_id: int, teacher_cookie: str, text: str) -> int:
    client = Client()
    client.cookies["sessionid"] = teacher_cookie
    return client.post(f"/classes/{session_id}/notice/", {"notice": text}).status_code


async def test_a_teachers_notice_reaches_every_students_open_page_at_once(settings: Any) -> None:
    settings.MERCURY_OFFLINE_TOKEN_DELAY = 0
    session, teacher, student, game = await database_sync_to_async(_started_session)()
    headers = [(b"origin", b"http://localhost"), (b"cookie", f"sessionid={student}".encode())]
    page = WebsocketCommunicator(application, f"/ws/games/{game.pk}/", headers=headers)
    assert (await page.connect())[0]
    await page.receive_from(timeout=10)  # its first render
    assert (
        await database_sync_to_async(_post_notice)(session.pk, teacher, "<b>Ten</b> minutes to the vote.")
        == 302
    )
    async with asyncio.timeout(10):
        while "From your teacher" not in (frame := await page.receive_from(timeout=10)):
            pass
    assert 'id="class-notice"' in frame and "&lt;b&gt;Ten&lt;/b&gt; minutes to the vote." in frame
    await page.disconnect()

    def pages() -> tuple[str, str, int]:
        client = Client()
        client.cookies["sessionid"] = student
        game_page = client.get(f"/games/{game.pk}/").content.decode()
        waiting = client.get(f"/classes/{session.pk}/wait/").content.decode()
        return game_page, waiting, client.post(f"/classes/{session.pk}/notice/", {"notice": "x"}).status_code

    game_page, waiting, by_student = await database_sync_to_async(pages)()
    assert "&lt;b&gt;Ten&lt;/b&gt; minutes" in game_page and "&lt;b&gt;Ten&lt;/b&gt; minutes" in waiting
    assert by_student == 404  # only the session's teacher writes to it
    await database_sync_to_async(_post_notice)(session.pk, teacher, " \u200b ")  # nothing visible: refused
    stored = await database_sync_to_async(lambda: ClassSession.objects.get(pk=session.pk).notice)()
    assert stored == "<b>Ten</b> minutes to the vote."


async def test_the_roster_says_whose_game_page_is_open(settings: Any) -> None:
    settings.MERCURY_OFFLINE_TOKEN_DELAY = 0
    session, teacher, student, game = await database_sync_to_async(_started_session)()

    def roster() -> str:
        client = Client()
        client.cookies["sessionid"] = teacher
        return client.get(f"/classes/{session.pk}/roster/").content.decode()

    def row(html: str, name: str) -> str:
        return next(line for line in html.split("<tr>") if f"<td>{name}</td>" in line)

    assert "closed" in row(await database_sync_to_async(roster)(), "ada")
    headers = [(b"origin", b"http://localhost"), (b"cookie", f"sessionid={student}".encode())]
    page = WebsocketCommunicator(application, f"/ws/games/{game.pk}/", headers=headers)
    assert (await page.connect())[0]
    await page.receive_from(timeout=10)
    now = await database_sync_to_async(roster)()
    assert "<td>open</td>" in row(now, "ada") and "closed" in row(now, "bo")
    await page.disconnect()
    assert "closed" in row(await database_sync_to_async(roster)(), "ada")
