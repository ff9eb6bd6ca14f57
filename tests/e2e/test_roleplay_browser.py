"""End to end in a real browser: a practice conversation played from the lobby to SUCCESS.

Sign up, start the café scenario, type the scripted student's lines into the chat (Dana's replies stream in), watch
the graph beside the chat mark each state as reached and the fork's sibling as blocked, see the end screen and open
the review. Same harness as test_browser.py; run apart with `pytest -m browser tests/e2e/test_roleplay_browser.py`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.browser import (
    BROWSER_TEST,
    CHROMIUM,
    CHROMIUM_ARGS,
    Shots,
    served,
    sign_up_and_start,
)
from tests.kinds.roleplay.scripts import SCRIPTS

pytestmark = BROWSER_TEST


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with served(tmp_path, scenarios="scenarios/roleplay", token_delay="0.01") as url:
        yield url


def test_a_conversation_reaches_success_and_the_graph_follows_it(server: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(30_000)
        shot = Shots(page, "roleplay")
        sign_up_and_start(page, server, username="barista1", scenario="cafe-barista")

        expect(page.locator(".goal")).to_contain_text("Your goal")
        node = page.locator('.state-graph .node[data-state="AcknowledgeFeelings"]')
        expect(node).to_have_attribute("data-mark", "available")
        shot("start")
        lines = SCRIPTS["cafeBarista"]["success"]
        for n, line in enumerate(lines, start=1):
            page.fill("#say-text", line)
            page.click("#say button[type=submit]")
            # the student's line, then the character's, both in the conversation (a message each)
            try:
                expect(page.locator("#conversation > li")).to_have_count(1 + 2 * n, timeout=30_000)
            except AssertionError:
                shot("stuck")
                raise AssertionError(page.locator("main").inner_text()[:3000]) from None
            if n == 1:
                expect(node).to_have_attribute("data-mark", "visited")
                shot("first-reply")
        expect(page.locator('.state-graph .node[data-state="SendToBackOfQueue"]')).to_have_attribute(
            "data-mark", "blocked"
        )
        expect(page.locator('.state-graph .node[data-state="SUCCESS"]')).to_have_attribute(
            "data-mark", "visited"
        )
        expect(page.locator(".ending h2")).to_contain_text("Goal reached")
        expect(page.locator("#say")).to_have_count(0)
        shot("ended")
        page.click("text=Open the review")
        expect(page.locator("h2#transitions-title")).to_be_visible()
        expect(page.locator(".judgments")).to_contain_text("closed SendToBackOfQueue for good")
        shot("review")
        browser.close()
        shot.assert_accessible()
