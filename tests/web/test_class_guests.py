"""Students who join a class session with a name only (issue #67): an account of the session's own, no password,
that reaches their session's waiting page and their own games in it and nothing else."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from simulations.models import ClassGuest, ClassSession, Game
from simulations.services.people import class_sessions
from simulations.services.people.access import TEACHERS
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db


def _session(title: str = "Guests") -> tuple[ClassSession, Client]:
    teacher = User.objects.create_user(f"teacher-{title}", is_staff=True)
    teacher.groups.add(Group.objects.get_or_create(name=TEACHERS)[0])
    room = Client()
    room.force_login(teacher)
    session = class_sessions.open_session(
        teacher=teacher, version=mercury_version(), title=title, max_students=2
    )
    return session, room


def test_a_student_joins_with_a_name_plays_and_reaches_nothing_else() -> None:
    session, room = _session()
    other, _ = _session("Another")
    visitor = Client()
    form = visitor.get(f"/join/{session.code}/").content.decode()
    assert 'name="name"' in form and session.code in form
    joined = visitor.post("/join/", {"code": session.code, "name": "Ada L."})
    assert joined.status_code == 302 and joined["Location"] == f"/classes/{session.pk}/wait/"
    guest = ClassGuest.objects.get(session=session)
    assert guest.name == "Ada L." and not guest.user.has_usable_password()
    assert "Ada L. (name only)" in room.get(f"/classes/{session.pk}/roster/").content.decode()
    class_sessions.start(session)
    played = visitor.post(f"/classes/{session.pk}/play/")
    game = Game.objects.get(owner=guest.user)
    assert played.status_code == 302 and visitor.get(f"/games/{game.pk}/").status_code == 200
    # Everything outside the session sends them back to it, or is refused.
    for path in ("/", "/classes/", f"/classes/{other.pk}/wait/", "/admin/", "/accounts/signup/"):
        response = visitor.get(path)
        assert response.status_code == 302 and response["Location"] == f"/classes/{session.pk}/wait/", path
    assert visitor.post("/games/new/", {"scenario": "mercury"}).status_code == 404
    assert visitor.post(f"/classes/{other.pk}/play/").status_code == 404
    stranger_game = Game.objects.create(scenario=game.scenario, seed=1, phase="BOOT", state={})
    assert visitor.get(f"/games/{stranger_game.pk}/").status_code == 404  # someone else's game: as for anyone


def test_a_name_only_join_is_refused_with_a_sentence_and_makes_no_account() -> None:
    session, _ = _session()
    visitor = Client()
    for fields, sentence in (
        ({"code": "NOPE42", "name": "Bo"}, "No class session has this code"),
        ({"code": session.code, "name": " \u200b "}, "Write your name"),
        ({"code": session.code, "name": "x" * 61}, "Write your name"),
    ):
        refused = visitor.post("/join/", fields)
        assert refused.status_code == 400 and sentence in refused.content.decode()
    assert not ClassGuest.objects.exists() and not User.objects.filter(username__startswith="guest-").exists()
    class_sessions.end(session)
    ended = visitor.post("/join/", {"code": session.code, "name": "Bo"})
    assert ended.status_code == 400 and "ended" in ended.content.decode()


def test_guessing_codes_without_an_account_is_limited_by_address() -> None:
    visitor = Client()
    answers = [visitor.post("/join/", {"code": f"ZZZZ{n:02d}", "name": "Bo"}).status_code for n in range(12)]
    assert answers[:10] == [400] * 10 and answers[10:] == [429, 429]


def test_a_name_only_student_comes_back_to_their_game_with_their_return_code() -> None:
    """Logged out, or on another browser: the class code and the return code shown when they joined give back
    their own account and game; the code is kept only as a keyed hash, and a wrong one opens nothing."""
    session, _ = _session()
    first = Client()
    first.post("/join/", {"code": session.code, "name": "Ada L."})
    page = first.get(f"/classes/{session.pk}/wait/").content.decode()
    shown = re.search(r"Your return code: <strong>([A-Z0-9]{4}-[A-Z0-9]{4})</strong>", page)
    assert shown, page
    guest = ClassGuest.objects.get(session=session)
    # Kept only as a keyed hash of the session and the code (typed with or without its dash, in any case).
    assert guest.return_key == class_sessions.return_key(session, shown.group(1).replace("-", "").lower())
    assert re.fullmatch(r"[0-9a-f]{40,64}", guest.return_key) and shown.group(1) not in guest.return_key
    class_sessions.start(session)
    first.post(f"/classes/{session.pk}/play/")
    game = Game.objects.get(owner=guest.user)
    first.post("/accounts/logout/")
    assert first.get(f"/games/{game.pk}/").status_code == 302  # logged out: the game asks for a login

    other = Client()
    assert "Coming back?" in other.get(f"/join/{session.code}/").content.decode()
    wrong = other.post("/join/", {"code": session.code, "return_code": "AAAA-AAAA"})
    assert (
        wrong.status_code == 400
        and "No student of this session has that return code" in wrong.content.decode()
    )
    again = other.post("/join/", {"code": session.code.lower(), "return_code": shown.group(1).lower()})
    assert again.status_code == 302 and again["Location"] == f"/classes/{session.pk}/wait/"
    assert other.get(f"/games/{game.pk}/").status_code == 200
    assert ClassGuest.objects.count() == 1 and ClassSession.objects.get(pk=session.pk).members.count() == 1
    # One session's code opens nothing in another session.
    another, _ = _session("Another")
    elsewhere = Client().post("/join/", {"code": another.code, "return_code": shown.group(1)})
    assert elsewhere.status_code == 400
    # After the session ends the student still comes back, to their review.
    class_sessions.end(session)
    late = Client()
    assert late.post("/join/", {"code": session.code, "return_code": shown.group(1)}).status_code == 302
    assert late.get(f"/classes/{session.pk}/wait/").status_code == 200


def test_return_codes_tried_without_an_account_are_limited_by_address() -> None:
    session, _ = _session()
    visitor = Client()
    answers = [
        visitor.post("/join/", {"code": session.code, "return_code": f"ZZZZ-ZZ{n:02d}"}).status_code
        for n in range(12)
    ]
    assert answers[:10] == [400] * 10 and answers[10:] == [429, 429]


def test_the_teacher_gives_a_student_who_lost_their_code_a_new_one() -> None:
    session, room = _session()
    student = Client()
    student.post("/join/", {"code": session.code, "name": "Ada L."})
    old = re.search(
        r"<strong>([A-Z0-9-]{9})</strong>", student.get(f"/classes/{session.pk}/wait/").content.decode()
    )
    guest = ClassGuest.objects.get(session=session)
    roster = room.get(f"/classes/{session.pk}/roster/").content.decode()
    assert f"/classes/{session.pk}/guests/{guest.pk}/return-code/" in roster
    shown = room.post(f"/classes/{session.pk}/guests/{guest.pk}/return-code/", follow=True).content.decode()
    new = re.search(r"Ada L\.&#x27;s new return code: ([A-Z0-9]{4}-[A-Z0-9]{4})", shown)
    assert old and new and new.group(1) != old.group(1), shown
    assert Client().post("/join/", {"code": session.code, "return_code": old.group(1)}).status_code == 400
    assert Client().post("/join/", {"code": session.code, "return_code": new.group(1)}).status_code == 302
    # Nobody but the session's teacher makes one, and only for the session's own students.
    other, other_room = _session("Another")
    assert other_room.post(f"/classes/{session.pk}/guests/{guest.pk}/return-code/").status_code == 404
    assert room.post(f"/classes/{other.pk}/guests/{guest.pk}/return-code/").status_code == 404
    assert student.post(f"/classes/{session.pk}/guests/{guest.pk}/return-code/").status_code == 404
