"""Teachers read the games of their classes' students (in admin and on the review page) and no one else's; other
staff still read every game."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.test import Client

from simulations.models import Classroom, Game
from simulations.services.ledger.turns import create_game
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db


def _login(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def school() -> dict[str, object]:
    teacher = User.objects.create_user("ms-lee", is_staff=True)
    teacher.groups.add(Group.objects.get(name="Teachers"))
    other_teacher = User.objects.create_user("mr-okafor", is_staff=True)
    other_teacher.groups.add(Group.objects.get(name="Teachers"))
    mine, theirs = User.objects.create_user("ana"), User.objects.create_user("ben")
    one = Classroom.objects.create(name="Tuesday 9A")
    one.teachers.add(teacher)
    one.students.add(mine)
    two = Classroom.objects.create(name="Thursday 9B")
    two.teachers.add(other_teacher)
    two.students.add(theirs)
    version = mercury_version()
    return {
        "teacher": teacher, "mine": create_game(scenario_version=version, seed=1, owner=mine),
        "theirs": create_game(scenario_version=version, seed=2, owner=theirs),
        "cli": create_game(scenario_version=version, seed=3),
    }  # fmt: skip


def test_a_teacher_reads_only_her_classes_games(school: dict[str, object]) -> None:
    teacher, mine, theirs, cli = (school[k] for k in ("teacher", "mine", "theirs", "cli"))
    assert isinstance(teacher, User) and isinstance(mine, Game) and isinstance(theirs, Game)
    assert isinstance(cli, Game)
    client = _login(teacher)
    listing = client.get("/admin/simulations/game/").content.decode()
    assert f'href="/games/{mine.pk}/review/"' in listing
    assert (
        f'href="/games/{theirs.pk}/review/"' not in listing
        and f'href="/games/{cli.pk}/review/"' not in listing
    )
    assert client.get(f"/admin/simulations/game/{mine.pk}/change/").status_code == 200
    assert client.get(f"/admin/simulations/game/{theirs.pk}/change/").status_code == 302  # "does not exist"
    assert client.get(f"/games/{mine.pk}/review/").status_code == 200
    assert client.get(f"/games/{theirs.pk}/review/").status_code == 404
    opened = client.get(f"/games/{mine.pk}/")  # the student's game page: its read-only review, for her
    assert opened.status_code == 302 and opened["Location"] == f"/games/{mine.pk}/review/"
    assert client.get(f"/games/{theirs.pk}/").status_code == 404  # another class's game does not exist
    classes = client.get("/admin/simulations/classroom/").content.decode()
    assert "Tuesday 9A" in classes and "Thursday 9B" not in classes


def test_other_staff_still_read_every_game(school: dict[str, object]) -> None:
    staff = User.objects.create_user("registrar", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_game"))
    client = _login(staff)
    listing = client.get("/admin/simulations/game/").content.decode()
    for key in ("mine", "theirs", "cli"):
        game = school[key]
        assert isinstance(game, Game)
        assert f'href="/games/{game.pk}/review/"' in listing
        assert client.get(f"/games/{game.pk}/review/").status_code == 200
