"""End to end in a real browser: a deliberation started from the lobby, played as the proposer.

Sign up, start the code-review committee with the planted-secret sample as the proposer, watch the personas'
turns stream in and the veto land, submit the amended code, reach APPROVED and open the review. Same harness as
test_browser.py (a real daphne server on its own SQLite file, the OS Chromium through Playwright); run apart with
`pytest -m browser tests/e2e/test_deliberation_browser.py`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from simulations.kinds.deliberation.scenario import load_default_scenario
from tests.e2e.screens import screenshot

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="needs the OS Chromium (apt-get install chromium)"
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    env = {
        **os.environ,
        "MERCURY_SQLITE_PATH": str(tmp_path / "e2e.sqlite3"),
        # Slow enough that each persona's words stream over several frames (about a second an opinion).
        "MERCURY_OFFLINE_TOKEN_DELAY": "0.02",
        "MERCURY_DEBUG": "true",
        "DJANGO_SETTINGS_MODULE": "mercury.settings",
    }
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True, cwd=ROOT)
    subprocess.run(
        [*manage, "load_scenario", "scenarios/deliberation"],
        env=env,
        check=True,
        cwd=ROOT,
        capture_output=True,
    )
    port = _free_port()
    log = open(tmp_path / "server.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [*manage, "runserver", "--noreload", f"127.0.0.1:{port}"], env=env, cwd=ROOT, stdout=log, stderr=log
    )
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


def test_a_proposer_amends_a_vetoed_change_to_approval_in_the_browser(server: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    amended = load_default_scenario().sample("secret").amended
    assert amended is not None
    ARTIFACTS.mkdir(exist_ok=True)
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic"]  # fmt: skip
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=args)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(30_000)

        def shot(name: str) -> None:
            screenshot(page, ARTIFACTS / f"deliberation-{name}.png")

        page.goto(f"{server}/accounts/signup/")
        page.fill("#id_username", "proposer1")
        page.fill("#id_password1", "a-long-test-passphrase-42")
        page.fill("#id_password2", "a-long-test-passphrase-42")
        page.click("button[type=submit]")
        page.check("input[name=scenario][value=code-review]")
        page.click("text=Start a new game")

        expect(page.locator("h1")).to_contain_text("table code for review")
        page.check("input[name=source][value=sample]")
        page.check("input[name=sample][value=secret]")
        page.check("input[name=seat][value=proposer]")
        shot("setup")
        page.click("text=Table the code")

        # The personas' turns stream into the live box, word by word, before each is committed.
        page.wait_for_selector("#stream .streaming", timeout=30_000)
        shot("streaming")
        page.wait_for_selector("#panels[data-action=amend]", timeout=45_000)
        expect(page.locator("#rounds")).to_contain_text("Vetoes")
        expect(page.locator("#panels .phase")).to_contain_text("Veto")
        shot("veto")

        page.fill("#amended-code", amended)
        page.click("text=Submit the amended code")
        try:
            page.wait_for_selector("#panels[data-action=review]", timeout=45_000)
        except Exception:
            shot("stuck")
            raise AssertionError(page.locator("#panels").inner_text()) from None
        expect(page.locator("#panels")).to_contain_text("Verdict: Approved")
        expect(page.locator("#rounds")).to_contain_text("Round 2")
        shot("approved")

        page.click("text=Open the review")
        expect(page.locator("h1")).to_contain_text("Review")
        expect(page.locator(".verdict-value")).to_contain_text("APPROVED")
        assert page.locator("figure.vote-chart svg").count() == 2
        expect(page.locator("text=Download review-report.md")).to_be_visible()
        shot("review")
        browser.close()
