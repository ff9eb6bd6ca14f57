"""Round 2 side by side in a game three students share (issue #67), through the pages: each student chooses and
holds their own talks while the others hold theirs, a move stands however many other lanes moved since its page
was drawn, a student chosen by another is told so and writes that talk, nobody reads another pair's talk, the
teacher's room says where each student's lane stands, a student past the turn limit is stood in for in their own
lane only, and a server restarted mid-round resumes every lane at its last completed message."""

from __future__ import annotations

import html
import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from simulations.kinds import Actor, kind_of
from simulations.kinds.negotiation.games import state_of
from simulations.kinds.negotiation.state import GameState
from simulations.models import ClassSession, Event, Game, GameSeat
from simulations.services.ledger.resume import resume_game
from simulations.services.people.class_sessions import session_games
from simulations.services.play.drive import drive_game
from tests.helpers import logged_in, mercury_version, play_group_until

pytestmark = pytest.mark.django_db(transaction=True)  # a drive's lease heartbeat writes from its own thread

STUDENTS = ("ada", "bo", "cy")
LIMIT = 600  # a session's turn limit, in seconds: the tests move its clock by hand


def _group(**fields: Any) -> tuple[ClassSession, Client, dict[str, Client], Game, dict[str, str]]:
    """Three students sharing one game, played to the opening of Round 2's talks: the session, the teacher's
    client, each student's, the game, and each student's seat."""
    _, room = logged_in("teacher", staff=True)
    posted = room.post("/classes/new/", {"scenario": mercury_version().slug, "title": "Lanes", "max_students": 3,
                                         "students_per_group": 3, "model": "default",
                                         "seats": "usa, can, chn"} | fields)  # fmt: skip
    assert posted.status_code == 302, posted.content.decode()[:600]
    session = ClassSession.objects.get(pk=int(posted["Location"].strip("/").split("/")[-1]))
    clients = {}
    for name in STUDENTS:
        _, clients[name] = logged_in(name)
        assert clients[name].post("/join/", {"code": session.code}).status_code == 302
    assert room.post(f"/classes/{session.pk}/start/").status_code == 302
    session.refresh_from_db()
    (game,) = session_games(session)
    game = play_group_until(game, lambda state, step: state.status == "ROUND_2_TALKS")
    seats = dict(GameSeat.objects.filter(game=game).values_list("student__username", "role"))
    assert seats == {"ada": "USA", "bo": "CAN", "cy": "CHN"}
    return session, room, clients, game, seats


def _page(client: Client, game: Game) -> str:
    return html.unescape(client.get(f"/games/{game.pk}/").content.decode())


def _form(page: str, event: str) -> dict[str, str]:
    """The hidden fields of the page's move form that sends `event`."""
    for form in re.findall(r"<form[^>]*data-socket-move[^>]*>(.*?)</form>", page, re.S):
        fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form))
        if fields.get("event") == event:
            return fields
    raise AssertionError(f"no {event} form on the page")


def _post(client: Client, game: Game, fields: dict[str, str]) -> Any:
    return client.post(f"/games/{game.pk}/move/", fields, HTTP_HX_REQUEST="true")


def _choose(client: Client, game: Game, partner: str, *, starter: str = "human", page: str = "") -> Any:
    """A partner chosen from the student's page (`page`: as drawn earlier, default now)."""
    form = _form(page or _page(client, game), "CONVO_1_STARTED")
    return _post(client, game, form | {"partner": partner, "starter": starter})


def _say(client: Client, game: Game, text: str) -> Any:
    return _post(client, game, _form(_page(client, game), "HUMAN_MESSAGE_SUBMITTED") | {"text": text})


def _drive(game: Game) -> Game:
    drive_game(game_id=game.pk)  # the AI partners' replies, lane after lane
    return Game.objects.select_related("scenario").get(pk=game.pk)


def _talks_private(game: Game, pair: set[str]) -> list[int]:
    return [e.seq for e in game.entries.filter(visibility="private") if set(e.audience) == pair]


def test_three_students_hold_two_talks_at_once_each_move_standing_whatever_the_others_did() -> None:
    _, _, clients, game, _ = _group()
    ada, bo, cy = (clients[name] for name in STUDENTS)
    pages = {name: _page(clients[name], game) for name in STUDENTS}  # all three drawn at the same version
    for name in STUDENTS:
        assert "Choose a partner for a private talk" in pages[name], name
    # Bo chooses Cy. Ada, from her page drawn before Bo's move, asks for Cy too: Cy is in a talk now, and Ada is told
    # so in words; her choice of Brazil (an AI), from the same page, stands.
    assert _choose(bo, game, "CHN", page=pages["bo"]).status_code == 200
    busy = _choose(ada, game, "CHN", page=pages["ada"])
    assert busy.status_code == 409
    assert "That delegation is in another private talk" in html.unescape(busy.content.decode())
    assert 'value="CHN" disabled required> China <span class="muted">(in a private talk)' in _page(ada, game)
    assert (
        _choose(ada, game, "BRA", page=pages["ada"]).status_code == 200
    )  # the same page: another lane moved
    game = Game.objects.select_related("scenario").get(pk=game.pk)
    state = state_of(game)
    talks = [(state.talker_of(c), c.partner) for c in state.round2.conversations]
    assert talks == [("CAN", "CHN"), ("USA", "BRA")]
    cys = _page(cy, game)
    assert "Canada is talking with you" in cys and "Your message to Canada" not in cys  # Bo writes first
    assert "United States is in a private talk." in cys  # with whom, and what is said there, is theirs
    adas = _page(ada, game)
    assert "Canada is in a private talk." in adas and "China is in a private talk." in adas
    # Interleaved: Ada writes, Bo writes from a page drawn before Ada's message was committed, Brazil answers Ada,
    # Cy answers Bo, and Ada writes again while Cy's message is the game's latest.
    bos, second_tab = _page(bo, game), _page(bo, game)
    assert _say(ada, game, "We support a legally binding instrument, 1.1.").status_code == 200
    drawn_before = _form(bos, "HUMAN_MESSAGE_SUBMITTED") | {"text": "Will China back 2.1?"}
    assert _post(bo, game, drawn_before).status_code == 200
    ada_next = _page(ada, game)
    assert 'id="message"' not in ada_next and "Brazil has the floor" in ada_next  # her lane waits on Brazil
    assert 'http-equiv="refresh"' in ada_next  # without JavaScript her page reloads while Brazil answers,
    assert 'http-equiv="refresh"' not in _page(cy, game)  # never Cy's, who may be typing
    game = _drive(game)
    assert _say(cy, game, "China could look at 2.1 with finance.").status_code == 200
    assert _say(ada, game, "Could Brazil accept emissions in scope?").status_code == 200
    # A stale move of Bo's own lane (his second tab, drawn before his message) is refused in the talk's words.
    stale = _post(bo, game, _form(second_tab, "HUMAN_MESSAGE_SUBMITTED") | {"text": "Again?"})
    assert stale.status_code == 409
    assert "Your talk moved on since this page was drawn" in html.unescape(stale.content.decode())
    game = _drive(game)
    # Each student's page shows their own talk and never the other pair's; no AI prompt held the other pair's words.
    pairs = {"ada": {"USA", "BRA"}, "bo": {"CAN", "CHN"}, "cy": {"CAN", "CHN"}}
    for name, client in clients.items():
        page = client.get(f"/games/{game.pk}/").content.decode()
        for pair in ({"USA", "BRA"}, {"CAN", "CHN"}):
            shown = [f'id="entry-{seq}"' in page for seq in _talks_private(game, pair)]
            assert shown and (all(shown) if pair == pairs[name] else not any(shown)), (name, pair)
    can_chn = set(_talks_private(game, {"CAN", "CHN"}))
    calls = list(game.model_calls.filter(role="BRA"))
    assert len(calls) == 2 and all(not can_chn & set(call.context) for call in calls)


def test_the_room_shows_where_each_students_round_2_stands() -> None:
    session, room, clients, game, _ = _group()
    _choose(clients["bo"], game, "CHN")
    _choose(clients["ada"], game, "BRA", starter="partner")
    roster = html.unescape(room.get(f"/classes/{session.pk}/roster/").content.decode())
    rows = {name: re.search(rf"<tr><td>{name}</td>(.*?)</tr>", roster, re.S) for name in STUDENTS}
    assert "the AI: Brazil, in a private talk" in rows["ada"].group(1)  # type: ignore[union-attr]
    assert "this student: writing to China" in rows["bo"].group(1)  # type: ignore[union-attr]
    assert "another student (Canada), in their private talk" in rows["cy"].group(1)  # type: ignore[union-attr]
    game = _drive(game)  # Brazil opens Ada's talk: now hers to answer
    roster = html.unescape(room.get(f"/classes/{session.pk}/roster/").content.decode())
    assert "this student: writing to Brazil" in roster


def test_a_student_past_the_turn_limit_is_stood_in_for_in_their_own_lane_to_its_end() -> None:
    _, _, clients, game, _ = _group(turn_seconds=LIMIT)
    for name, partner in (("ada", "BRA"), ("bo", "EU")):  # Ada and Bo choose; Cy does not
        _choose(clients[name], game, partner)
    game = Game.objects.select_related("scenario").get(pk=game.pk)
    step = kind_of(game).next_step(game)
    assert step.actor is Actor.HUMAN and step.since is not None  # the oldest lane's floor, timed on its own
    # Cy lets the limit pass in her lane, again and again; Ada and Bo keep theirs.
    for _ in range(60):
        state = state_of(game)
        cy = state.lane("CHN")
        assert cy is not None
        if cy.phase == "ROUND_2_WRAP_UP" and cy.joined is None:
            break
        long_ago = timezone.now() - timedelta(seconds=LIMIT + 1)
        Event.objects.filter(game=game, seq=cy.since).update(created_at=long_ago)
        game = Game.objects.select_related("scenario").get(pk=game.pk)
        step = kind_of(game).next_step(game)
        if step.actor is Actor.AI and step.seat == "CHN":
            assert "(AI stand-in)" in step.speaker
        drive_game(game_id=game.pk)
        game = Game.objects.select_related("scenario").get(pk=game.pk)
    else:
        raise AssertionError("the stand-in did not close China's lane")
    assert game.events.filter(actor="stand-in:CHN").count() >= 6  # a partner, five messages and a final one
    assert not game.events.filter(actor__in=("stand-in:USA", "stand-in:CAN")).exists()
    assert state_of(game).lane("USA").phase == "ROUND_2_CONVERSATION_ACTIVE"  # type: ignore[union-attr]
    marked = game.entries.filter(speaker="CHN", text__startswith="(AI stand-in) ", kind="message")
    assert marked.count() >= 5
    assert _say(clients["ada"], game, "We support 1.1.").status_code == 200  # hers is still hers


def test_a_server_restarted_mid_round_2_resumes_every_lane_at_its_last_message() -> None:
    _, _, clients, game, _ = _group()
    _choose(clients["bo"], game, "CHN")
    _choose(clients["ada"], game, "BRA")
    _say(clients["ada"], game, "We support 1.1.")
    _say(clients["bo"], game, "Will China back 2.1?")
    game = _drive(game)
    before: GameState = state_of(game)
    assert sum(lane.talk is not None for lane in before.round2.lanes) == 2
    resumed, state = resume_game(game_id=game.pk)  # as a restarted server does, from the latest checkpoint
    assert state.model_dump() == before.model_dump()
    steps = kind_of(resumed).next_step(resumed)
    moving = {lane.seat for lane in steps.lanes if lane.moves}
    assert moving == {"USA", "CHN"}  # Brazil has answered Ada; Cy answers Bo
    assert _say(clients["cy"], resumed, "Only with finance.").status_code == 200
    assert _say(clients["ada"], resumed, "Finance is on the table.").status_code == 200
    game = play_group_until(resumed, lambda state, step: state.status != "ROUND_2_TALKS")
    assert game.phase == "ISSUE_INTRO"
    assert all(c.phase == "CLOSED" for c in state_of(game).round2.conversations)
