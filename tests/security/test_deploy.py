"""Finding 11: production fails closed. Any non-local host or MERCURY_PRODUCTION turns DEBUG off and refuses to
start without a real key; HTTPS settings are on there and configurable from the environment; every response
carries a Content-Security-Policy; `manage.py check --deploy` is clean with the production environment set.
Each case starts a fresh interpreter: settings are read once, at start-up, from the environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

pytestmark = pytest.mark.configured  # a fresh interpreter reads the settings from this environment

ROOT = Path(__file__).resolve().parents[2]
REAL_KEY = "made-up-test-key-" + "x7Q9" * 12  # obviously fake, long and varied enough for Django's check
SHOW = (
    "import json, django; from django.conf import settings; django.setup(); print(json.dumps({k: getattr("
    "settings, k, None) for k in ('DEBUG', 'SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', 'SECURE_SSL_REDIRECT',"
    " 'SECURE_HSTS_SECONDS', 'SECURE_PROXY_SSL_HEADER', 'CSRF_TRUSTED_ORIGINS', 'MERCURY_CSP', 'CACHES')}))"
)


def _run(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MERCURY_", "DJANGO_"))}
    clean |= {"PYTHONPATH": str(ROOT), "DJANGO_SETTINGS_MODULE": "mercury.settings", **env}
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60, check=False
    )


def _settings(**env: str) -> dict[str, object]:
    done = _run(["-c", SHOW], **env)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_local_use_keeps_debug_and_plain_http() -> None:
    local = _settings()
    assert (
        local["DEBUG"] is True
        and local["SECURE_SSL_REDIRECT"] is False
        and local["SESSION_COOKIE_SECURE"] is False
    )


@pytest.mark.parametrize(
    "env",
    [
        {"MERCURY_ALLOWED_HOSTS": "mercury.example.org"},
        {"MERCURY_ALLOWED_HOSTS": "127.0.0.1,mercury.example.org", "MERCURY_DEBUG": "true"},
        {"MERCURY_ALLOWED_HOSTS": "*"},
        {"MERCURY_PRODUCTION": "1"},
        {"MERCURY_PRODUCTION": "1", "MERCURY_DEBUG": "1", "MERCURY_SECRET_KEY": "short"},
        {"MERCURY_PRODUCTION": "1", "MERCURY_SECRET_KEY": "insecure-development-key-only-for-local-use"},
        {"MERCURY_PRODUCTION": "1", "MERCURY_SECRET_KEY": "django-insecure-" + "ab12" * 12},
        {"MERCURY_PRODUCTION": "1", "MERCURY_SECRET_KEY": "a" * 60},
    ],
)
def test_a_reachable_server_refuses_to_start_without_a_real_key(env: dict[str, str]) -> None:
    done = _run(["manage.py", "check"], **env)
    assert done.returncode != 0 and "MERCURY_SECRET_KEY must be set" in done.stderr


@pytest.mark.parametrize(
    "env",
    [{"MERCURY_ALLOWED_HOSTS": "mercury.example.org", "MERCURY_DEBUG": "true"}, {"MERCURY_PRODUCTION": "1"}],
)
def test_production_turns_debug_off_and_https_on(env: dict[str, str]) -> None:
    prod = _settings(MERCURY_SECRET_KEY=REAL_KEY, **env)
    assert prod["DEBUG"] is False
    assert prod["SESSION_COOKIE_SECURE"] is prod["CSRF_COOKIE_SECURE"] is prod["SECURE_SSL_REDIRECT"] is True
    assert isinstance(prod["SECURE_HSTS_SECONDS"], int) and prod["SECURE_HSTS_SECONDS"] >= 31536000


def test_proxy_header_and_trusted_origins_come_from_the_environment() -> None:
    base = {"MERCURY_SECRET_KEY": REAL_KEY, "MERCURY_ALLOWED_HOSTS": "mercury.example.org"}
    assert _settings(**base)["CSRF_TRUSTED_ORIGINS"] == ["https://mercury.example.org"]
    assert _settings(**base)["SECURE_PROXY_SSL_HEADER"] is None
    behind = _settings(
        **base,
        MERCURY_BEHIND_TLS_PROXY="1",
        MERCURY_CSRF_TRUSTED_ORIGINS="https://a.example.org,https://b.example.org",
    )
    assert behind["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert behind["CSRF_TRUSTED_ORIGINS"] == ["https://a.example.org", "https://b.example.org"]


def test_a_cache_url_shares_the_cache_between_processes() -> None:
    assert "locmem" in str(_settings()["CACHES"])
    shared = _settings(MERCURY_CACHE_URL="redis://127.0.0.1:6379/1")["CACHES"]
    assert shared == {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:6379/1",
        }
    }


def test_check_deploy_is_clean_with_the_production_environment() -> None:
    done = _run(
        ["manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        MERCURY_PRODUCTION="1", MERCURY_SECRET_KEY=REAL_KEY, MERCURY_ALLOWED_HOSTS="mercury.example.org",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


@pytest.mark.django_db
def test_every_page_carries_a_content_security_policy_without_inline_script() -> None:
    for url in ("/accounts/login/", "/accounts/signup/"):
        response = Client().get(url)
        policy = response["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy and "unsafe" not in policy
        body = response.content.decode()
        assert "<script>" not in body and " onclick=" not in body and " style=" not in body, url
