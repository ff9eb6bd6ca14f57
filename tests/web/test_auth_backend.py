"""The log-in's backend (mercury/auth.py): Django's ModelBackend with the user's row read by a statement built
once. The user it reads must be the ORM's, field for field; an inactive or missing user is nobody; the session's
hash still logs out a session whose password changed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from mercury.auth import THIS_BACKEND, UserRowBackend
from simulations.services.ledger.rows import row_by_pk

pytestmark = pytest.mark.django_db
PASSWORD = "a-long-test-passphrase-42"


def _concrete(user: User) -> dict[str, object]:
    return {f.attname: getattr(user, f.attname) for f in User._meta.concrete_fields}


def test_it_is_the_one_configured_backend() -> None:
    assert settings.AUTHENTICATION_BACKENDS == [THIS_BACKEND]


def test_the_user_read_is_the_orms_field_for_field() -> None:
    user = User.objects.create_user("ünï", email="u@example.org", password=PASSWORD, first_name="Zoë")
    User.objects.filter(pk=user.pk).update(last_login=timezone.now() - timedelta(days=3), is_staff=True)
    read = row_by_pk(User, user.pk)
    orm = User.objects.get(pk=user.pk)
    assert read is not None and _concrete(read) == _concrete(orm)
    assert read.last_login is not None and read.last_login.tzinfo is not None  # made aware, as the ORM does
    assert read.is_staff is True and read._state.adding is False and read._state.db == "default"
    assert read.check_password(PASSWORD)


def test_an_inactive_or_missing_user_is_nobody() -> None:
    user = User.objects.create_user("gone", password=PASSWORD)
    assert UserRowBackend().get_user(user.pk) is not None
    User.objects.filter(pk=user.pk).update(is_active=False)
    assert UserRowBackend().get_user(user.pk) is None
    assert UserRowBackend().get_user(user.pk + 1000) is None
    assert row_by_pk(User, user.pk + 1000) is None


def _logged_in(client: Client) -> bool:
    return client.get("/").status_code == 200  # the lobby sends anybody else to the log-in page


def test_a_log_in_goes_through_it_and_a_changed_password_logs_the_session_out() -> None:
    user = User.objects.create_user("student", password=PASSWORD)
    client = Client()
    assert client.post("/accounts/login/", {"username": "student", "password": PASSWORD}).status_code == 302
    assert client.session[BACKEND_SESSION_KEY] == THIS_BACKEND
    assert _logged_in(client)
    user.set_password("another-long-passphrase-43")
    user.save()
    assert not _logged_in(client)  # Django's session hash check, unchanged


def test_a_wrong_password_is_refused() -> None:
    User.objects.create_user("student", password=PASSWORD)
    client = Client()
    assert client.post("/accounts/login/", {"username": "student", "password": "wrong"}).status_code == 200
    assert not _logged_in(client)


def test_a_sign_up_logs_the_new_user_in() -> None:
    client = Client()
    response = client.post(
        "/accounts/signup/", {"username": "newcomer", "password1": PASSWORD, "password2": PASSWORD}
    )
    assert response.status_code == 302 and _logged_in(client)
