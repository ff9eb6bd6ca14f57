"""A private talk's words as they stream reach only its two parties' pages (issue #67): in a class group's game the
AI partner's reply streams to the student it talks with, never to the group's other students, whose sockets stay
open for the game."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group, User
from django.test import Client

from mercury.asgi import application
from simulations.kinds.negotiation.games import state_of
from simulations.kinds.negotiation.human_turns import submit_human_event
from simulations.kinds.negotiation.state import GameState
from simulations.models import Game, GameSeat
from simulations.services.ledger.seats import viewed_as
from simulations.services.people import class_sessions
from simulations.services.people.access import TEACHERS
from simulations.services.play.drive import drive_game
from tests.helpers import mercury_version, play_group_until

pytestmark = pytest.mark.django_db(transaction=True)
STREAMING = 'class="entry streaming"'  # a stream box holding words (an empty one is sent with every render)


def _cookie(user: User) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


def _talk_with_an_ai(state: GameState, step: Any) -> bool:
    """A student about to write in their own talk with an AI partner (in Round 2's side-by-side lanes)."""
    talk = state.lane_talk(step.seat) if state.status == "ROUND_2_TALKS" and step.seat else None
    return bool(
        talk and talk.phase != "CLOSED" and talk.partner not in state.humans and talk.talker == step.seat
    )


def _group_in_a_talk() -> tuple[Game, dict[str, str], str]:
    """Three students sharing a game, one about to write to an AI partner in a Round 2 talk: the game, each
    seat's session cookie, and the talk's student's seat."""
    teacher = User.objects.create_user("teacher", is_staff=True)
    teacher.groups.add(Group.objects.get_or_create(name=TEACHERS)[0])
    session = class_sessions.open_session(
        teacher=teacher, version=mercury_version(), title="Talks", max_students=3, students_per_group=3
    )
    for name in ("ada", "bo", "cy"):
        class_sessions.join(user=User.objects.create_user(name), code=session.code)
    (game,) = class_sessions.start(session, seed=6)
    talker = ""

    def stop(state: GameState, step: Any) -> bool:
        nonlocal talker
        talker = step.seat if _talk_with_an_ai(state, step) else ""
        return bool(talker)

    game = play_group_until(game, stop)
    cookies = {
        s.role: _cookie(s.student) for s in GameSeat.objects.filter(game=game).select_related("student")
    }
    return game, cookies, talker


async def _page(game_id: int, cookie: str) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://localhost"), (b"cookie", f"sessionid={cookie}".encode())]
    comm = WebsocketCommunicator(application, f"/ws/games/{game_id}/", headers=headers)
    connected, _ = await comm.connect()
    assert connected
    await comm.receive_from(timeout=5)  # the page's first, full render
    return comm


async def _frames(comm: WebsocketCommunicator) -> list[str]:
    frames = []
    while not await comm.receive_nothing(timeout=0.5):
        frames.append(await comm.receive_from(timeout=5))
    return frames


async def test_an_ai_partners_streamed_reply_reaches_only_the_student_it_talks_with(settings: Any) -> None:
    settings.MERCURY_OFFLINE_TOKEN_DELAY = 0
    game, cookies, talker = await database_sync_to_async(_group_in_a_talk)()
    partner = state_of(game).lane_talk(talker).partner  # type: ignore[union-attr]
    pages = {seat: await _page(game.pk, cookie) for seat, cookie in cookies.items()}
    for comm in pages.values():
        await _frames(comm)  # whatever the connect queued
    await database_sync_to_async(submit_human_event)(
        game=viewed_as(game, talker), event="HUMAN_MESSAGE_SUBMITTED",
        payload={"text": "What would move you on emissions?"},
    )  # fmt: skip
    await database_sync_to_async(drive_game)(game_id=game.pk, max_steps=1)  # unless the move's own drive did
    reply = await database_sync_to_async(
        lambda: Game.objects.get(pk=game.pk).entries.filter(speaker=partner).order_by("-seq").first()
    )()
    assert reply is not None and reply.audience == sorted([talker, partner])
    words = reply.text.split(". ")[0][:40]
    seen = {seat: await _frames(comm) for seat, comm in pages.items()}
    assert any(STREAMING in f and words[:20] in f for f in seen[talker]), "the talker saw no streamed words"
    for seat, frames in seen.items():
        if seat != talker:
            assert frames, f"{seat}'s page heard nothing of the game"  # the turn's render, without the talk
            assert not any(STREAMING in f or words[:20] in f for f in frames), (
                f"{seat} was shown another's talk"
            )
    for comm in pages.values():
        await comm.disconnect()
