"""What the browser tests share: a real server on its own SQLite file, the OS Chromium, screenshots.

A real server (Django's runserver, which is daphne: HTTP and websockets) runs in a subprocess; Playwright drives the
OS Chromium (never a downloaded browser). Screenshots go to test-artifacts/ (not committed)."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic"]  # fmt: skip
# Run apart (`pytest -m browser`): Playwright's sync API keeps an event loop that must not meet pytest-asyncio's.
BROWSER_TEST = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="needs the OS Chromium (apt-get install chromium)"
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# A migrated database with a set of scenarios loaded, made once a session per set (and server settings) and
# copied for each test's server: migrating and loading took about nine of the eighteen seconds a server took to
# start on a busy machine.
_PREPARED: dict[tuple[str, ...], Path] = {}


def _prepared(env: dict[str, str], scenarios: str) -> Path:
    key = (
        scenarios,
        *sorted(f"{k}={v}" for k, v in env.items() if k.startswith("MERCURY_") and "SQLITE" not in k),
    )
    if key not in _PREPARED:
        folder = Path(tempfile.mkdtemp(prefix="mercury-e2e-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        path = folder / "prepared.sqlite3"
        env = env | {"MERCURY_SQLITE_PATH": str(path)}
        manage = [sys.executable, str(ROOT / "manage.py")]
        subprocess.run([*manage, "migrate", "-v0"], env=env, check=True, cwd=ROOT)
        subprocess.run(
            [*manage, "load_scenario", scenarios], env=env, check=True, cwd=ROOT, capture_output=True
        )
        # Both commands have exited: SQLite folded its write-ahead log into the file when they closed it.
        wal = path.with_name(path.name + "-wal")
        assert not wal.exists() or not wal.stat().st_size
        _PREPARED[key] = path
    return _PREPARED[key]


@contextmanager
def served(
    tmp_path: Path,
    *,
    scenarios: str,
    token_delay: str,
    env_extra: dict[str, str] | None = None,
    shell: str | None = None,
) -> Iterator[str]:
    """A migrated server with the scenarios at `scenarios` loaded; yields its base URL, stops it afterwards.
    `env_extra`: settings for this server only (a model that cannot be reached, say). `shell`: Python run by
    `manage.py shell` on the server's database before it starts (users a test signs in as, say)."""
    env = {
        **os.environ,
        "MERCURY_SQLITE_PATH": str(tmp_path / "e2e.sqlite3"),
        "MERCURY_OFFLINE_TOKEN_DELAY": token_delay,
        "MERCURY_DEBUG": "true",
        "DJANGO_SETTINGS_MODULE": "mercury.settings",
        **(env_extra or {}),
    }
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    manage = [sys.executable, str(ROOT / "manage.py")]
    shutil.copyfile(_prepared(env, scenarios), env["MERCURY_SQLITE_PATH"])
    if shell:
        subprocess.run([*manage, "shell", "-c", shell], env=env, check=True, cwd=ROOT)
    port = _free_port()
    log = open(tmp_path / "server.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [*manage, "runserver", "--noreload", f"127.0.0.1:{port}"], env=env, cwd=ROOT, stdout=log, stderr=log
    )
    try:
        _wait_until_listening(proc, port, tmp_path / "server.log")
        yield f"http://127.0.0.1:{port}"
    finally:
        stopped = _stop_as_ctrl_c(proc)
        log.close()
    # Every browser test ends with the server in some state of play (a turn streaming, drives queued, pages open):
    # it must stop on Ctrl+C as `make serve` does, at once, whatever it was doing.
    assert stopped, (
        f"the server did not stop within {STOP_TIMEOUT:.0f} s of Ctrl+C; its log: {tmp_path / 'server.log'}"
    )


STOP_TIMEOUT = 3.0


def _stop_as_ctrl_c(proc: subprocess.Popen[bytes]) -> bool:
    """SIGINT, as a terminal's Ctrl+C sends; killed if it has not exited within STOP_TIMEOUT (then False)."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=STOP_TIMEOUT)
        return True
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
        return False


# A server's start is mostly importing litellm: about ten seconds alone, several times that on a busy machine (CI
# runs the browser tests beside the rest of the suite).
SERVER_START_TIMEOUT = 180.0


def _wait_until_listening(proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
    """Until the server accepts connections; a server that exited or never listened fails the test saying so
    (a test that went on would fail later with a refused connection, its cause out of sight)."""
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the test server exited with {proc.returncode}; its log: {log}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"the test server did not listen within {SERVER_START_TIMEOUT:.0f} s; its log: {log}"
                ) from None
            time.sleep(0.1)


def screenshot(page: Any, path: Path, *, full_page: bool = False) -> None:
    """Taken once the page has loaded, retried once. A screenshot is evidence, not an assertion: Chromium
    sometimes refuses one while a navigation is still settling on a loaded machine ("Unable to capture
    screenshot"), and that must not fail a test whose page is right."""
    from playwright.sync_api import Error

    for attempt in (1, 2):
        try:
            page.wait_for_load_state("load")
            page.screenshot(path=str(path), full_page=full_page)
            return
        except Error as exc:
            if attempt == 2:
                print(f"screenshot {path.name} not taken: {exc.message.splitlines()[0]}", file=sys.stderr)
            else:
                page.wait_for_timeout(500)


def serious_accessibility_violations(page: Any) -> list[str]:
    """axe-core's serious and critical findings on the page as it stands, one line each (rule, impact, the first
    offending elements). axe-core comes inside the axe-playwright-python wheel: nothing is downloaded."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    found = []
    for violation in results.response["violations"]:
        if violation["impact"] in ("serious", "critical"):
            targets = [", ".join(node["target"]) for node in violation["nodes"][:3]]
            found.append(f"{violation['id']} ({violation['impact']}): {'; '.join(targets)}")
    return found


def in_viewport(page: Any, selector: str) -> bool | None:
    """Whether the first element matching `selector` is wholly inside the window, as the student sees it now
    (None: no such element, e.g. a turn replaced it meanwhile)."""
    found = page.evaluate(
        """sel => { const el = document.querySelector(sel); if (!el) return null;
                    const r = el.getBoundingClientRect();
                    return r.width > 0 && r.top >= 0 && r.left >= 0 &&
                           r.bottom <= window.innerHeight && r.right <= window.innerWidth; }""",
        selector,
    )
    return None if found is None else bool(found)


def sign_up(page: Any, server: str, *, username: str) -> None:
    """A new user signs up (and lands in the lobby, logged in)."""
    page.goto(f"{server}/accounts/signup/")
    page.fill("#id_username", username)
    page.fill("#id_password1", "a-long-test-passphrase-42")
    page.fill("#id_password2", "a-long-test-passphrase-42")
    page.click("button[type=submit]")


def sign_up_and_start(page: Any, server: str, *, username: str, scenario: str) -> None:
    """A new user signs up and starts `scenario` (its slug) from the lobby."""
    sign_up(page, server, username=username)
    page.check(f"input[name=scenario][value={scenario}]")
    page.click("text=Start a new game")


class Shots:
    """Screenshots named `<prefix>-<name>.png` in ARTIFACTS, each with axe-core's serious findings on that page;
    `assert_accessible()` at the end fails on any."""

    def __init__(self, page: Any, prefix: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        self.page, self.prefix = page, prefix
        self.found: dict[str, list[str]] = {}

    def __call__(self, name: str) -> None:
        screenshot(self.page, ARTIFACTS / f"{self.prefix}-{name}.png")
        self.found[name] = serious_accessibility_violations(self.page)

    def assert_accessible(self) -> None:
        assert not any(self.found.values()), {k: v for k, v in self.found.items() if v}


def sign_up_and_take_a_seat(page: Any, server: str, *, username: str, seat: str = "Canada") -> None:
    """A new student: signs up, starts a game from the lobby, takes `seat` with its first opening."""
    sign_up(page, server, username=username)
    page.click("text=Start a new game")
    page.click(f"text=Play {seat}")
    page.click("text=Confirm and begin")


def panels(page: Any) -> tuple[str, str, str]:
    """The panels' action, status and version, read at once (separate reads could straddle a swap)."""
    found = page.eval_on_selector("#panels", "p => [p.dataset.action, p.dataset.status, p.dataset.version]")
    return found[0], found[1], found[2]


def wait_for_new_panels(page: Any, version: str, timeout: int = 60_000) -> None:
    page.wait_for_function(
        "(v) => { const p = document.getElementById('panels'); return p && p.dataset.version !== v; }",
        arg=version,
        timeout=timeout,
    )


TEACHER_PASSWORD = "a-long-test-passphrase-42"
MAKE_TEACHER = (  # `served(shell=...)`: a teacher, staff in the Teachers group, to sign in as
    "from django.contrib.auth.models import Group, User; "
    f"u = User.objects.create_user('teacher1', password='{TEACHER_PASSWORD}', is_staff=True); "
    "u.groups.add(Group.objects.get_or_create(name='Teachers')[0])"
)
