"""The session engine (mercury/sessions.py): Django's database sessions, read with a statement built once. What a
read finds must be what Django's own store finds: a live session's data, nothing for an expired, unknown or
malformed key; log-in and log-out work through it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore as DjangoStore
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

from mercury.sessions import SessionStore
from simulations.services.broadcast import session_still_valid

pytestmark = pytest.mark.django_db


def test_it_is_the_configured_engine() -> None:
    assert settings.SESSION_ENGINE == "mercury.sessions"


def test_a_read_finds_what_djangos_store_finds() -> None:
    live = SessionStore()
    live["answer"] = {"n": 42, "text": "ünïcode"}
    live.create()
    expired = SessionStore()
    expired["gone"] = True
    expired.create()
    Session.objects.filter(pk=expired.session_key).update(expire_date=timezone.now() - timedelta(seconds=1))
    for key in (live.session_key, expired.session_key, "x" * 32, "short", "", None):
        ours, django = SessionStore(key), DjangoStore(key)
        assert ours.load() == django.load()
        assert (
            ours.session_key == django.session_key
        )  # an unknown or expired key is dropped, as Django drops it
    assert SessionStore(live.session_key)["answer"] == {"n": 42, "text": "ünïcode"}
    assert SessionStore(expired.session_key).load() == {}


def test_log_in_a_page_check_and_log_out_go_through_it() -> None:
    user = User.objects.create_user("student", password="a-long-test-passphrase-42")
    client = Client()
    assert (
        client.post(
            "/accounts/login/", {"username": "student", "password": "a-long-test-passphrase-42"}
        ).status_code
        == 302
    )
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    assert client.get("/").status_code == 200 and session_still_valid(key, user.pk)
    assert not session_still_valid(key, user.pk + 1)  # another user's page
    client.post("/accounts/logout/")
    assert not session_still_valid(key, user.pk)
