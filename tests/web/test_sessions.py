"""Sessions are Django's database sessions, read through the cache where every process that reads them shares it
(settings.SESSION_ENGINE): a log-in, a page's check that its session still names its user, and a log-out go through
them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from simulations.services.pages.broadcast import session_still_valid

pytestmark = pytest.mark.django_db


ROOT = Path(__file__).resolve().parents[2]


def _engine(**env: str) -> str:
    """SESSION_ENGINE as a fresh interpreter reads it from this environment (settings are read once)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MERCURY_", "DJANGO_", "REDIS_URL"))}
    clean |= {"PYTHONPATH": str(ROOT), "DJANGO_SETTINGS_MODULE": "mercury.settings", **env}
    show = "import json; from django.conf import settings; print(json.dumps(settings.SESSION_ENGINE))"
    done = subprocess.run(
        [sys.executable, "-c", show],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.configured
def test_sessions_are_read_through_a_cache_only_where_every_reader_shares_it() -> None:
    cached, database = "django.contrib.sessions.backends.cached_db", "django.contrib.sessions.backends.db"
    assert _engine() == cached  # one server process
    assert _engine(REDIS_URL="redis://127.0.0.1:6379/9") == database  # several, each with a cache of its own
    assert (
        _engine(REDIS_URL="redis://127.0.0.1:6379/9", MERCURY_CACHE_URL="redis://127.0.0.1:6379/1") == cached
    )


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
