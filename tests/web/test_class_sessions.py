"""Class sessions (issue #67, first step): a teacher opens one, students join with its code and each plays their
own game; the teacher's room lists them with where each game stands, reads their games and downloads the results.
Who may see what: the room, roster and results are the session's teacher's; the waiting page its members'."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.test import Client

from simulations.kinds import ai_acts_next, kind_of
from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.headless import student
from simulations.models import ClassSession, Game, ModelCall, Vote
from simulations.services.ledger.turns import create_game
from simulations.services.people.class_sessions import JoinRefused, session_games
from simulations.services.play.drive import Outcome, drive_game
from simulations.services.play.headless import GamePaused, play_to_end
from simulations.services.policy.rate_limit import RateLimited
from tests.helpers import logged_in, mercury_version

pytestmark = pytest.mark.django_db


def _open(teacher: Client, **fields: Any) -> ClassSession:
    version = mercury_version()
    posted = teacher.post("/classes/new/", {"scenario": version.slug, "title": "Seminar B", "max_students": 30,
                                            "model": "default"} | fields)  # fmt: skip
    assert posted.status_code == 302, posted.content.decode()[:400]
    return ClassSession.objects.get(pk=int(posted["Location"].strip("/").split("/")[-1]))


def _join(client: Client, code: str) -> tuple[int, str]:
    response = client.post("/join/", {"code": code}, follow=True)
    return response.status_code, response.content.decode()


def test_a_class_joins_with_the_code_plays_and_the_teacher_reads_every_game_and_the_results() -> None:
    teacher, room = logged_in("teacher", staff=True)
    session = _open(room)
    page = room.get(f"/classes/{session.pk}/").content.decode()
    assert session.code in page and "Nobody has joined yet" in page
    # The join link as a QR code drawn on the server (an inline SVG, named by the link it holds).
    assert 'class="segno"' in page and f"<title>Join: http://testserver/join/{session.code}/</title>" in page
    ada, ada_client = logged_in("ada")
    status, waiting = _join(
        ada_client, f" {session.code.lower()[:3]} {session.code.lower()[3:]} "
    )  # as typed
    assert status == 200 and "You are in" in waiting
    assert "ada" in room.get(f"/classes/{session.pk}/roster/").content.decode()
    early = ada_client.post(f"/classes/{session.pk}/play/", follow=True).content.decode()
    assert "wait for your teacher" in early and not Game.objects.filter(owner=ada).exists()

    room.post(f"/classes/{session.pk}/start/")
    session.refresh_from_db()
    opened = ada_client.post(f"/classes/{session.pk}/play/")
    game = Game.objects.get(owner=ada)
    assert opened["Location"] == f"/games/{game.pk}/" and list(session_games(session)) == [game]
    again = ada_client.post(f"/classes/{session.pk}/play/")  # a second click: the same game, not a new one
    assert again["Location"] == f"/games/{game.pk}/" and Game.objects.filter(owner=ada).count() == 1
    roster = room.get(f"/classes/{session.pk}/roster/").content.decode()
    assert f"#{game.pk}" in roster and "this student" in roster  # the student chooses a delegation

    play_to_end(game, bot=student(game, make_policy("passive", "CAN")))
    assert room.get(f"/games/{game.pk}/review/").status_code == 200  # the teacher reads the student's game
    rows = list(csv.DictReader(io.StringIO(room.get(f"/classes/{session.pk}/results.csv").content.decode())))
    votes = {v.issue: v for v in Vote.objects.filter(game=game)}
    assert len(votes) == 4 and [r["issue"] for r in rows] == sorted(
        votes
    )  # one row per issue the class voted on
    for row in rows:
        vote = votes[row["issue"]]
        assert (row["student"], row["game_id"], row["seat"], row["finished"]) == (
            "ada",
            str(game.pk),
            "CAN",
            "yes",
        )
        assert (row["proposal"], row["adopted"]) == (vote.proposal, "yes" if vote.adopted else "no")
        assert row["own_ballot"] == vote.ballots["CAN"]  # what the student cast
    room.post(f"/classes/{session.pk}/end/")
    assert "has ended" in ada_client.get(f"/classes/{session.pk}/wait/").content.decode()


def test_only_the_sessions_teacher_sees_its_room_and_only_its_members_its_waiting_page() -> None:
    _, room = logged_in("teacher", staff=True)
    session = _open(room)
    other_teacher = logged_in("other", staff=True)[1]
    student, student_client = logged_in("ada")
    _join(student_client, session.code)
    stranger = logged_in("bob")[1]
    for path in ("", "roster/", "results.csv"):
        assert other_teacher.get(f"/classes/{session.pk}/{path}").status_code == 404
        assert student_client.get(f"/classes/{session.pk}/{path}").status_code == 404
    assert other_teacher.post(f"/classes/{session.pk}/start/").status_code == 404
    assert stranger.get(f"/classes/{session.pk}/wait/").status_code == 404
    assert stranger.post(f"/classes/{session.pk}/play/").status_code == 404
    assert student_client.get("/classes/new/").status_code == 404  # students do not open sessions
    room.post(f"/classes/{session.pk}/start/")
    student_client.post(f"/classes/{session.pk}/play/")
    game = Game.objects.get(owner=student)
    assert other_teacher.get(f"/games/{game.pk}/review/").status_code == 404  # not their session's game


def test_a_wrong_code_a_full_or_ended_session_and_guessing_are_refused(settings: Any) -> None:
    _, room = logged_in("teacher", staff=True)
    session = _open(room, max_students=1)
    first = logged_in("ada")[1]
    second = logged_in("bob")[1]
    assert _join(first, session.code)[0] == 200
    status, page = _join(second, session.code)
    assert status == 400 and JoinRefused.FULL in page
    status, page = _join(second, "ZZZZZZ")
    assert status == 400 and JoinRefused.UNKNOWN in page
    room.post(f"/classes/{session.pk}/end/")
    late = logged_in("cy")[1]
    status, page = _join(late, session.code)
    assert status == 400 and JoinRefused.ENDED in page
    settings.MERCURY_RATE_JOINS_PER_15_MINUTES = 3
    guesser = logged_in("eve")[1]
    answers = [_join(guesser, code)[0] for code in ("AAAAAA", "BBBBBB", "CCCCCC", "DDDDDD")]
    assert answers == [400, 400, 400, 429]
    assert RateLimited.JOINS in _join(guesser, session.code)[1]  # the right code too, until the window turns


def test_a_sessions_games_are_its_members_games_of_its_scenario_while_it_ran() -> None:
    teacher, room = logged_in("teacher", staff=True)
    session = _open(room)
    ada, ada_client = logged_in("ada")
    before = create_game(scenario_version=session.scenario, seed=1, owner=ada)  # made before the session ran
    _join(ada_client, session.code)
    room.post(f"/classes/{session.pk}/start/")
    outsider = create_game(scenario_version=session.scenario, seed=2, owner=logged_in("bob")[0])
    during = create_game(scenario_version=session.scenario, seed=3, owner=ada)
    session.refresh_from_db()
    assert list(session_games(session)) == [during]
    assert room.get(f"/games/{during.pk}/review/").status_code == 200
    for other in (before, outsider):
        assert room.get(f"/games/{other.pk}/review/").status_code == 404


def test_a_students_name_reaches_the_csv_as_text_not_a_formula() -> None:
    _, room = logged_in("teacher", staff=True)
    session = _open(room)
    _join(logged_in("+cmd")[1], session.code)
    rows = list(csv.reader(io.StringIO(room.get(f"/classes/{session.pk}/results.csv").content.decode())))
    assert rows[1][0] == "'+cmd" and rows[1][5:10] == ["no", "", "", "", ""]  # joined, no game yet


def test_a_paused_session_plays_no_ai_step_until_the_teacher_resumes_it() -> None:
    _, room = logged_in("teacher", staff=True)
    session = _open(room)
    ada, ada_client = logged_in("ada")
    _join(ada_client, session.code)
    room.post(f"/classes/{session.pk}/start/")
    session.refresh_from_db()
    game = create_game(scenario_version=session.scenario, seed=4, owner=ada)
    seat = student(game, make_policy("passive", "CAN"))
    while not ai_acts_next(game):  # the student takes a seat and opens: then a delegation speaks
        game = seat(game, kind_of(game).next_step(game), None)

    room.post(f"/classes/{session.pk}/pause/")
    game.refresh_from_db()
    calls, version = ModelCall.objects.filter(game=game).count(), game.version
    assert game.paused and not ai_acts_next(game)  # nothing queues a drive for it
    assert drive_game(game_id=game.pk, stream=False).outcome is Outcome.STOPPED
    assert (ModelCall.objects.filter(game=game).count(), Game.objects.get(pk=game.pk).version) == (
        calls,
        version,
    )
    assert "Your teacher has paused this game" in ada_client.get(f"/games/{game.pk}/").content.decode()
    assert "the teacher (paused)" in room.get(f"/classes/{session.pk}/roster/").content.decode()
    with pytest.raises(GamePaused):
        play_to_end(game, bot=seat)

    room.post(f"/classes/{session.pk}/games/{game.pk}/resume/")  # one game's AI plays on
    game = play_to_end(Game.objects.get(pk=game.pk), bot=seat)
    assert game.finished_at and ModelCall.objects.filter(game=game).count() > calls


def test_a_teacher_pauses_only_their_own_sessions_games() -> None:
    _, room = logged_in("teacher", staff=True)
    session = _open(room)
    ada, ada_client = logged_in("ada")
    _join(ada_client, session.code)
    room.post(f"/classes/{session.pk}/start/")
    other = create_game(scenario_version=session.scenario, seed=5, owner=logged_in("bob")[0])
    assert room.post(f"/classes/{session.pk}/games/{other.pk}/pause/").status_code == 404
    assert logged_in("other", staff=True)[1].post(f"/classes/{session.pk}/pause/").status_code == 404
    assert not Game.objects.get(pk=other.pk).paused
