"""CI's PostgreSQL + Redis leg (DATABASE_URL set) runs only the tests its configuration can change: tests/conftest.py
skips the rest, which ran on the embedded leg of the same commit. Played here in a pytest of its own, once with
DATABASE_URL and once without."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytest_plugins = ["pytester"]

INNER_TESTS = """
import pytest

@pytest.fixture
def db():  # stands for pytest-django's database fixture (its plugin is off in this inner run)
    return None

def test_pure():
    pass

@pytest.mark.django_db
def test_marked():
    pass

def test_by_fixture(db):
    pass

@pytest.mark.configured
def test_configured():
    pass

@pytest.mark.django_db
@pytest.mark.content
def test_content():
    pass
"""


INNER_NAMES = ("test_pure", "test_marked", "test_by_fixture", "test_configured", "test_content")


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the inner conftest takes the hook from tests/conftest.py
    pytester.makeconftest("from tests.conftest import pytest_collection_modifyitems  # noqa: F401")
    pytester.makeini("[pytest]\nmarkers =\n    django_db\n    configured\n    content\n")
    pytester.makepyfile(test_inner=INNER_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:django", "-p", "no:cacheprovider", "-rs", "-v")
    outcomes = {}
    for line in result.outlines:
        for name in INNER_NAMES:
            if f"::{name} " in line:
                outcomes[name] = line.split()[1]
    return outcomes


def test_the_database_leg_skips_what_uses_no_database_and_no_configuration_and_what_checks_only_content(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none")
    assert _run(pytester, monkeypatch) == {
        "test_pure": "SKIPPED",
        "test_marked": "PASSED",
        "test_by_fixture": "PASSED",
        "test_configured": "PASSED",
        "test_content": "SKIPPED",
    }


def test_the_embedded_leg_runs_everything(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert _run(pytester, monkeypatch) == dict.fromkeys(INNER_NAMES, "PASSED")
