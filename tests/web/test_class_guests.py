"""Students who join a class session with a name only (issue #67): an account of the session's own, no password,
that reaches their session's waiting page and their own games in it and nothing else."""

from __future__ import annotations

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
