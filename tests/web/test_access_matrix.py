"""Access matrix: every kind of visitor x every URL of a game, and the websocket. Only the owner drives; staff and
share-link holders read; other players get nothing; anonymous visitors are sent to log in."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client

from mercury.asgi import application
from simulations.kinds.negotiation.human_turns import submit_human_event
from simulations.models import Game, TranscriptEntry
from simulations.services.ledger.turns import create_game
from simulations.services.people.access import share_game
from tests.helpers import mercury_version

PASSWORD = "a-long-test-passphrase-42"
READ = ("game", "review", "export.json", "export.md")
# visitor -> (what each read URL answers, whether a move / share post is accepted)
EXPECTED = {
    "owner": ({"game": 200, "review": 200, "export.json": 200, "export.md": 200}, True),
    "staff": ({"game": 302, "review": 200, "export.json": 200, "export.md": 200}, False),
    "other": ({"game": 404, "review": 404, "export.json": 404, "export.md": 404}, False),
    "anonymous": ({"game": 302, "review": 302, "export.json": 302, "export.md": 302}, False),
    "share link": ({"game": 302, "review": 200, "export.json": 200, "export.md": 200}, False),
}


def _world() -> tuple[Game, dict[str, Client], str]:
    owner = User.objects.create_user("owner", password=PASSWORD)
    User.objects.create_user("other", password=PASSWORD)
    User.objects.create_user("staff", password=PASSWORD, is_staff=True, is_superuser=True)
    game = create_game(scenario_version=mercury_version(), seed=3, owner=owner)
    game = submit_human_event(game=game, event="ROLE_CONFIRMED", payload={"role": "EU"})
    token = share_game(game=game)
    clients = {}
    for who in EXPECTED:
        client = Client()
        if who in ("owner", "staff", "other"):
            client.force_login(User.objects.get(username=who))
        if who == "share link":  # the link's page posts its token once; the session then holds the grant
            assert client.post("/shared/", {"token": token}).status_code == 302
        clients[who] = client
    return game, clients, token


def _url(game: Game, what: str) -> str:
    return {"game": f"/games/{game.pk}/", "review": f"/games/{game.pk}/review/"}.get(what) or (
        f"/games/{game.pk}/{what}"
    )


@pytest.mark.django_db
def test_every_visitor_on_every_url() -> None:
    game, clients, _ = _world()
    for who, (reads, drives) in EXPECTED.items():
        client = clients[who]
        for what in READ:
            response = client.get(_url(game, what))
            assert response.status_code == reads[what], (who, what, response.status_code)
            if response.status_code == 302 and who == "staff":  # staff read a game page as its review
                assert response["Location"] == f"/games/{game.pk}/review/", (who, what)
            elif response.status_code == 302:
                assert response["Location"].startswith("/accounts/login/"), (who, what)
        before = Game.objects.get(pk=game.pk).version
        move = client.post(f"/games/{game.pk}/move/", {"event": "OPENING_PRESENTED", "version": before})
        after = Game.objects.get(pk=game.pk).version
        assert (after == before + 1) == drives, (who, move.status_code)
        if not drives:
            assert move.status_code in (302, 404), (who, move.status_code)
        share = client.post(f"/games/{game.pk}/share/")
        assert (share.status_code == 302 and who == "owner") or share.status_code in (302, 404), who


@pytest.mark.django_db
def test_script_in_a_message_is_inert_in_the_admin() -> None:
    game, clients, _ = _world()
    hostile = "<script>alert('admin')</script>"
    TranscriptEntry.objects.create(
        game=game, seq=999, round=1, phase="ROUND_1_OPENING_STATEMENTS", speaker="EU", kind="message",
        visibility="public", text=hostile,
    )  # fmt: skip
    page = clients["staff"].get(f"/admin/simulations/game/{game.pk}/change/")
    assert page.status_code == 200
    assert b"<script>alert('admin')" not in page.content and b"&lt;script&gt;alert(" in page.content


@pytest.mark.django_db(transaction=True)
async def test_the_websocket_matrix() -> None:
    game, clients, _ = await database_sync_to_async(_world)()
    expected = {"owner": True, "staff": True, "other": False, "anonymous": False, "share link": False}
    for who, allowed in expected.items():
        cookie = clients[who].cookies.get("sessionid")
        headers = [(b"origin", b"http://localhost")]
        if cookie:
            headers.append((b"cookie", f"sessionid={cookie.value}".encode()))
        comm = WebsocketCommunicator(application, f"/ws/games/{game.pk}/", headers=headers)
        connected, _ = await comm.connect()
        assert connected == allowed, who
        if connected:
            await comm.receive_from(timeout=10)
        await comm.disconnect()  # refused too: the consumer finishes (on PostgreSQL it held a connection)
