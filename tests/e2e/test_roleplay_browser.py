"""End to end in a real browser: a practice conversation played from the lobby to SUCCESS.

Sign up, start the café scenario, type the scripted student's lines into the chat (Dana's replies stream in), watch
the graph beside the chat mark each state as reached and the fork's sibling as blocked, see the end screen and open
the review. On the way: a typed draft survives a reload and is gone once its message is sent, and the student
reads plain words throughout (no state name of the scenario, no Markdown asterisk). Same harness as
test_browser.py; run apart with `pytest -m browser tests/e2e/test_roleplay_browser.py`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser import (
    BROWSER_TEST,
    CHROMIUM,
    CHROMIUM_ARGS,
    ROOT,
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


def scenario_ids(file: str) -> list[str]:
    """Every id the scenario file gives a state or a branch, the terminal states and START."""
    document = json.loads((ROOT / "scenarios" / "roleplay" / file).read_text(encoding="utf-8"))
    branches = document["states"]
    return [
        "START",
        *document["tstates"],
        *branches,
        *(name for states in branches.values() for name in states),
    ]


CAFE_IDS = scenario_ids("cafe-barista.json")


def assert_plain_words(page: Any, where: str) -> None:
    """What the student reads on the page (its rendered text, the graph's labels included) names no state by its
    id and shows no asterisk of a stage direction or emphasis."""
    text = page.locator("main").inner_text()
    ids = [name for name in CAFE_IDS if re.search(rf"\b{name}\b", text)]
    assert not ids, f"{where}: state ids shown to the student: {ids}"
    assert "*" not in text, f"{where}: an asterisk is shown: {text[max(0, text.find('*') - 80) :][:200]!r}"


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
        expect(node).to_contain_text("Acknowledge feelings")
        # The opening's stage direction reads as emphasis, not as asterisks.
        expect(page.locator("#conversation > li").first.locator("em")).to_contain_text("Dana sets a cup down")
        assert_plain_words(page, "start")
        shot("start")

        # A draft survives a reload of the page.
        draft = "Half a thought I have not sent yet: sorry about"
        page.fill("#say-text", draft)
        page.reload()
        expect(page.locator("#say-text")).to_have_value(draft)

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
                # Sent and committed: its draft is gone, a reload brings back an empty box.
                expect(page.locator("#say-text")).to_have_value("")
                page.reload()
                expect(page.locator("#conversation > li")).to_have_count(3)
                expect(page.locator("#say-text")).to_have_value("")
                assert_plain_words(page, "after the first reply")
        expect(page.locator('.state-graph .node[data-state="SendToBackOfQueue"]')).to_have_attribute(
            "data-mark", "blocked"
        )
        expect(page.locator('.state-graph .node[data-state="SUCCESS"]')).to_have_attribute(
            "data-mark", "visited"
        )
        expect(page.locator(".ending h2")).to_contain_text("Goal reached")
        expect(page.locator(".ending")).to_contain_text("What went well")
        expect(page.locator("#say")).to_have_count(0)
        assert_plain_words(page, "end screen")
        shot("ended")
        page.click("text=Open the review")
        expect(page.locator("h2#transitions-title")).to_be_visible()
        expect(page.locator(".judgments")).to_contain_text(
            "closed “Send her to wait in the queue again” for good"
        )
        assert_plain_words(page, "review")
        shot("review")
        browser.close()
        shot.assert_accessible()
