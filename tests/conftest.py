from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

# Processes the tests start (servers, workers, a browser) keep the whole machine: a pinned test server would pin
# the browser it launches with it (mercury/cpu_placement.py). tests/test_cpu_placement.py turns it on itself.
os.environ.setdefault("MERCURY_PIN_CPU", "off")

from simulations.kinds.negotiation.scenario import Scenario, load_scenario_dir

SCENARIO_DIR = Path(__file__).resolve().parent.parent / "scenarios" / "mercury"


@pytest.fixture(scope="session")
def scenario() -> Scenario:
    return load_scenario_dir(SCENARIO_DIR)


@pytest.fixture(autouse=True)
def _no_token_delay(settings: pytest.FixtureRequest) -> None:
    settings.MERCURY_OFFLINE_TOKEN_DELAY = 0.0  # type: ignore[attr-defined]
    settings.MERCURY_MODEL_RETRIES = 0  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _fast_password_hashes(settings: pytest.FixtureRequest) -> None:
    """Passwords hashed in a test's own process use a fast hasher. Django's default (PBKDF2, a million rounds)
    took 0.4 s a hash on a CI machine, and the web and security tests alone hash 128 passwords (54 s a leg):
    a hash's strength is Django's concern, not something these tests check. Servers a test starts in a process
    of its own (the browser and school tests) keep the default."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> None:
    """The rate limits count in the cache, which outlives each test's database while user ids repeat: on a fast
    machine one minute held more than a user's allowance of moves across tests, and later tests got 429s."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def _embedded_workers_stop_after_each_test() -> Iterator[None]:
    """A test's first websocket starts the embedded task workers (as a real server's first connection does);
    stop them before the test's database is flushed, so no drive of one test runs into the next."""
    yield
    from simulations.driving.embedded import stop_embedded_workers

    stop_embedded_workers()


@pytest.fixture(autouse=True)
def _shared_sync_thread_closes_its_connection_after_each_test() -> Iterator[None]:
    """asgiref's one shared sync thread, where an async test's `database_sync_to_async` calls and channels' user
    and session look-ups run, lives as long as the process: a connection it kept open would pass from one test to
    the next and still be open when the test database is dropped. The PostgreSQL leg failed so at its very end
    ("database test_test is being accessed by other users"), a session-end listing of pg_stat_activity with each
    connection named after its thread found it there, last used by channels' user look-up. Closed after each test
    here, as the test's own connection is. Waited for briefly: behind anything a test left running in that thread
    it closes later, still before any later call there."""
    yield
    from asgiref.sync import SyncToAsync
    from django.db import connections

    closed = SyncToAsync.single_thread_executor.submit(connections.close_all)
    with contextlib.suppress(TimeoutError):
        closed.result(timeout=2)


@pytest.fixture
async def _drives_stop_while_the_tests_loop_runs() -> AsyncIterator[None]:
    """An async test's websocket records its event loop as the server's, and drive threads send their messages to
    it: stopped while that loop still runs (each async test gets this fixture, torn down before its loop), so no
    drive sends into a loop that has closed. Stopped after the loop had closed, a send could be left half done, and
    on Redis its connection and coroutine were reported unclosed in a later test."""
    yield
    from simulations.driving.embedded import stop_embedded_workers

    await asyncio.to_thread(stop_embedded_workers)


_DATABASE_FIXTURES = {
    "db",
    "transactional_db",
    "live_server",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every async test stops the drives before its loop closes (`_drives_stop_while_the_tests_loop_runs`).

    With DATABASE_URL set (CI's second leg: PostgreSQL and Redis), run only what the configuration can change:
    the tests that use the database, and those marked `configured`. The rest (the engines, offline models,
    prompts and parsers, a third of the suite) play the same on any database and ran on the embedded leg of the
    same commit; the two legs share CI's two cores, so this shortens both. Tests marked `content` use the
    database only as the place whole games are kept while their words are checked (canaries, the offline
    delegations' soundness): storage on PostgreSQL is played by the resume, replay, export and school tests, and
    canaries and passive games alone took 65 s of that leg's 21 minutes on a slow machine (`3f881c1`)."""
    for item in items:
        if isinstance(item, pytest.Function) and inspect.iscoroutinefunction(item.obj):
            item.fixturenames.append("_drives_stop_while_the_tests_loop_runs")
    if not os.environ.get("DATABASE_URL"):
        return
    skip = pytest.mark.skip(reason="uses no database and reads no configuration: run on the embedded leg")
    skip_content = pytest.mark.skip(
        reason="checks what games say, the same on any database: run on the embedded leg"
    )
    for item in items:
        if item.get_closest_marker("content"):
            item.add_marker(skip_content)
            continue
        uses_database = item.get_closest_marker("django_db") or _DATABASE_FIXTURES & set(
            getattr(item, "fixturenames", ())
        )
        if not uses_database and not item.get_closest_marker("configured"):
            item.add_marker(skip)
