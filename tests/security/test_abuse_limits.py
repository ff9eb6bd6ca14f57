"""Finding 8 (part): sign-ups and log-in attempts are limited (counters in the cache, shared by every process when
MERCURY_CACHE_URL names a Redis database), and user names that only look like another's are refused."""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth import forms as auth_forms
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from simulations.services.policy import rate_limit
from simulations.views.accounts import ASCII_NAMES, TAKEN

pytestmark = pytest.mark.django_db
PASSWORD = "a-long-test-passphrase-42"


@pytest.fixture(autouse=True)
def _fresh_counters(monkeypatch: pytest.MonkeyPatch) -> None:
    cache.clear()
    # Mid-window: counts made during a test fall in one window (a run crossing a window's edge once reset them).
    monkeypatch.setattr(rate_limit, "clock", lambda: 1_000_000 * 3600 + 1800.0)


def _signup(client: Client, name: str) -> Any:
    return client.post("/accounts/signup/", {"username": name, "password1": PASSWORD, "password2": PASSWORD})


def test_sign_ups_from_one_address_are_limited(settings: Any) -> None:
    settings.MERCURY_RATE_SIGNUPS_PER_HOUR = 3
    statuses = [_signup(Client(), f"user{n}").status_code for n in range(5)]
    assert statuses == [302, 302, 302, 429, 429]
    assert User.objects.count() == 3
    taken = _signup(Client(), "user0")  # refused before any check: it does not say whether the name is taken
    assert taken.status_code == 429 and b"already exists" not in taken.content
    other = Client(REMOTE_ADDR="203.0.113.9")
    assert _signup(other, "elsewhere").status_code == 302  # another address has its own allowance


def test_a_class_signs_up_from_one_school_network_with_the_default_limit() -> None:
    """Thirty students behind one address (a school's network) sign up at the start of a lesson."""
    statuses = [_signup(Client(), f"pupil{n}").status_code for n in range(30)]
    assert statuses == [302] * 30


def test_log_in_attempts_are_limited_per_address_and_per_name(settings: Any) -> None:
    settings.MERCURY_RATE_LOGINS_PER_15_MINUTES = 4
    settings.MERCURY_RATE_LOGIN_FAILURES_PER_ADDRESS = 4
    User.objects.create_user("alice", password=PASSWORD)
    guesses = [
        Client(REMOTE_ADDR=f"198.51.100.{n}").post(
            "/accounts/login/", {"username": "alice", "password": f"guess{n}"}
        )
        for n in range(5)
    ]  # a distributed guesser: a new address each time, the same name
    assert [g.status_code for g in guesses] == [200, 200, 200, 200, 429]
    blocked = Client(REMOTE_ADDR="198.51.100.77").post(
        "/accounts/login/", {"username": "alice", "password": PASSWORD}
    )
    assert (
        blocked.status_code == 429 and b"Too many log-in attempts" in blocked.content
    )  # even the right password
    one_address = Client(REMOTE_ADDR="192.0.2.1")
    tries = [one_address.post("/accounts/login/", {"username": f"n{n}", "password": "x"}) for n in range(5)]
    assert [t.status_code for t in tries] == [200, 200, 200, 200, 429]  # many names from one address


def test_a_class_logs_in_from_one_address_and_only_failures_count_against_it(settings: Any) -> None:
    """A class behind one address logs in together: successful log-ins cost the address nothing. Failed ones do,
    and once the address has failed its limit even a right password from it is refused (other addresses are
    not)."""
    settings.MERCURY_RATE_LOGINS_PER_15_MINUTES = 4
    settings.MERCURY_RATE_LOGIN_FAILURES_PER_ADDRESS = 4
    for n in range(31):
        User.objects.create_user(f"pupil{n}", password=PASSWORD)
    school = "192.0.2.50"
    logins = [
        Client(REMOTE_ADDR=school).post("/accounts/login/", {"username": f"pupil{n}", "password": PASSWORD})
        for n in range(30)
    ]
    assert [r.status_code for r in logins] == [302] * 30
    typos = [
        Client(REMOTE_ADDR=school).post("/accounts/login/", {"username": f"pupil{n}", "password": "typo"})
        for n in range(4)
    ]
    assert [r.status_code for r in typos] == [200] * 4  # the form again, with Django's own error
    refused = Client(REMOTE_ADDR=school).post(
        "/accounts/login/", {"username": "pupil30", "password": PASSWORD}
    )
    assert refused.status_code == 429 and b"Too many log-in attempts" in refused.content
    elsewhere = Client(REMOTE_ADDR="203.0.113.7")
    assert (
        elsewhere.post("/accounts/login/", {"username": "pupil30", "password": PASSWORD}).status_code == 302
    )


def test_parallel_guesses_from_one_address_cannot_pass_its_limit(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guesses sent at once are in their password checks together: each counts against the address before its
    check, so only the limit's worth get one (a failure counted only after the check let all eight through)."""
    settings.MERCURY_RATE_LOGIN_FAILURES_PER_ADDRESS = 4
    checking = threading.Barrier(
        8, timeout=1.0
    )  # holds each check until all eight are in one, or for a second

    def slow_refusal(request: Any = None, **credentials: Any) -> None:
        with contextlib.suppress(threading.BrokenBarrierError):
            checking.wait()
        return None

    monkeypatch.setattr(auth_forms, "authenticate", slow_refusal)
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = sorted(pool.map(
            lambda n: Client(REMOTE_ADDR="192.0.2.99").post(
                "/accounts/login/", {"username": f"guess{n}", "password": "x"}
            ).status_code,
            range(8),
        ))  # fmt: skip
    assert statuses == [200] * 4 + [429] * 4


def test_a_refused_log_in_checks_no_password(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the limit the page says so without checking the password: had it checked (the posted form showing its
    errors), a wrong password would show an error and a right one none, telling the guesser which was right."""
    settings.MERCURY_RATE_LOGINS_PER_15_MINUTES = 2
    User.objects.create_user("alice", password=PASSWORD)
    checked: list[str] = []
    real = authenticate  # the function the log-in form calls, by its own module's name

    def counted(request: Any = None, **credentials: Any) -> Any:
        checked.append(credentials.get("password", ""))
        return real(request, **credentials)

    monkeypatch.setattr(auth_forms, "authenticate", counted)
    for guess in ("guess1", "guess2"):
        assert Client().post("/accounts/login/", {"username": "alice", "password": guess}).status_code == 200
    pages = [
        Client().post("/accounts/login/", {"username": "alice", "password": p}) for p in ("guess3", PASSWORD)
    ]
    assert [p.status_code for p in pages] == [429, 429]
    assert checked == ["guess1", "guess2"]
    assert all(b"correct username and password" not in p.content for p in pages)


@pytest.mark.parametrize("name", ["\u0430lice", "ALICE", "Alice", "\uff41lice", "al\u0456ce", "alice\u200b"])
def test_a_name_that_looks_like_another_is_refused(name: str) -> None:
    User.objects.create_user("alice", password=PASSWORD)
    response = _signup(Client(), name)
    assert response.status_code == 200 and User.objects.count() == 1
    body = response.content.decode()
    assert "English letters" in body or "already exists" in body
    assert (ASCII_NAMES.split(" (")[0] in body.replace("&#x27;", "'")) or TAKEN in body


VARIANTS = [" alice", "alice ", "\talice", "\uff41lice", "alice\u00a0", "ALICE", "\u3000alice"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_spelling_variants_of_a_name_share_its_log_in_limit(settings: Any, variant: str) -> None:
    """The limit counts the name that authentication looks up: once it holds for alice, no variant that logs in
    as alice (white space, full-width letters, case) gets a guess or a log-in past it."""
    settings.MERCURY_RATE_LOGINS_PER_15_MINUTES = 3
    User.objects.create_user("alice", password=PASSWORD)
    guesses = [
        Client(REMOTE_ADDR=f"198.51.100.{n}").post(
            "/accounts/login/", {"username": name, "password": "guess"}
        )
        for n, name in enumerate(["alice", variant, variant])
    ]
    assert [g.status_code for g in guesses] == [200, 200, 200]
    refused = Client(REMOTE_ADDR="198.51.100.50").post(
        "/accounts/login/", {"username": variant, "password": PASSWORD}
    )
    assert refused.status_code == 429 and b"Too many log-in attempts" in refused.content


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.casefold() != "alice"])
def test_a_variant_logs_in_as_the_name_it_spells(variant: str) -> None:
    """Authentication and the limit read one name: a variant with the right password is alice."""
    User.objects.create_user("alice", password=PASSWORD)
    client = Client()
    assert client.post("/accounts/login/", {"username": variant, "password": PASSWORD}).status_code == 302
    assert client.session["_auth_user_id"] == str(User.objects.get(username="alice").pk)


def test_one_address_in_two_spellings_shares_its_failure_limit(settings: Any) -> None:
    settings.MERCURY_RATE_LOGIN_FAILURES_PER_ADDRESS = 2
    spellings = ["192.0.2.7", "::ffff:192.0.2.7", "::ffff:c000:207"]
    tries = [
        Client(REMOTE_ADDR=address).post("/accounts/login/", {"username": f"n{n}", "password": "x"})
        for n, address in enumerate(spellings)
    ]
    assert [t.status_code for t in tries] == [200, 200, 429]


def test_sign_up_stores_the_name_log_in_reads() -> None:
    assert _signup(Client(), "\uff42ob\u00a0").status_code == 302
    assert list(User.objects.values_list("username", flat=True)) == ["bob"]
    assert Client().post("/accounts/login/", {"username": " bob", "password": PASSWORD}).status_code == 302
