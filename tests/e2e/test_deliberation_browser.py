"""End to end in a real browser: a deliberation started from the lobby, played as the proposer.

Sign up, start the code-review committee with the planted-secret sample as the proposer, watch the personas'
turns stream in and the veto land, type a statement that survives a reload, submit the amended code, reach APPROVED
and open the review. Same harness as test_browser.py (tests/e2e/browser.py: a real daphne server on its own SQLite
file, the OS Chromium); run apart with `pytest -m browser tests/e2e/test_deliberation_browser.py`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simulations.kinds.deliberation.machine import Event
from simulations.kinds.deliberation.scenario import load_default_scenario
from simulations.kinds.deliberation.state import ConclusionCause, Stance, State, Verdict
from tests.e2e.browser import (
    BROWSER_TEST,
    CHROMIUM,
    CHROMIUM_ARGS,
    Shots,
    served,
    sign_up_and_start,
)

pytestmark = BROWSER_TEST
IDS = [*State, *Stance, *Verdict, *ConclusionCause, *Event]


def leaked_ids(page: Any) -> list[str]:
    """The machine's ids a person reads on the page, in the text as written (CSS uppercases a few flags) and
    outside the code under review."""
    written = page.evaluate(
        "() => { const m = document.querySelector('main').cloneNode(true);"
        " m.querySelectorAll('pre, textarea, script').forEach(e => e.remove()); return m.textContent; }"
    )
    return [i for i in IDS if re.search(rf"(?<!\w){i}(?!\w)", written)]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    # Slow enough that each persona's words stream over several frames (about a second an opinion).
    with served(tmp_path, scenarios="scenarios/deliberation", token_delay="0.02") as url:
        yield url


def test_a_proposer_amends_a_vetoed_change_to_approval_in_the_browser(server: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    amended = load_default_scenario().sample("secret").amended
    assert amended is not None
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(30_000)

        shot = Shots(page, "deliberation")
        sign_up_and_start(page, server, username="proposer1", scenario="code-review")

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

        # A typed statement survives a reload (kept per tab by app.js's drafts, keyed by game, move and round).
        page.fill("#decline-text", "The token is only in the test fixture")
        page.reload()
        page.wait_for_selector("#panels[data-action=amend]")
        expect(page.locator("#decline-text")).to_have_value("The token is only in the test fixture")

        page.fill("#amended-code", amended)
        page.click("text=Submit the amended code")
        try:
            page.wait_for_selector("#panels[data-action=review]", timeout=45_000)
        except Exception:
            shot("stuck")
            raise AssertionError(page.locator("#panels").inner_text()) from None
        expect(page.locator("#panels")).to_contain_text("Verdict: Approved")
        expect(page.locator("#rounds")).to_contain_text("Round 2")
        assert not leaked_ids(page), leaked_ids(page)
        shot("approved")

        page.click("text=Open the review")
        expect(page.locator("h1")).to_contain_text("Review")
        expect(page.locator(".verdict-value")).to_contain_text("Approved")
        assert not leaked_ids(page), leaked_ids(page)
        assert page.locator("figure.vote-chart svg").count() == 2
        expect(page.locator("text=Download review-report.md")).to_be_visible()
        shot("review")
        browser.close()
        shot.assert_accessible()
