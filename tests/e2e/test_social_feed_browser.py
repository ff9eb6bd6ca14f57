"""End to end in a real browser: a social-feed run set up from the lobby, watched as its charts grow round by
round (the offline reasoner simulating a model's latency), paused and resumed, to its results and downloads.
Same harness as test_browser.py; run apart with `pytest -m browser tests/e2e/test_social_feed_browser.py`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simulations.kinds.social_feed.entities import AgentState
from simulations.kinds.social_feed.machine import Event, Status
from tests.e2e.browser import (
    BROWSER_TEST,
    CHROMIUM,
    CHROMIUM_ARGS,
    Shots,
    served,
    sign_up_and_start,
)

pytestmark = BROWSER_TEST
IDS = [*AgentState, *Status, *Event]
MISCOUNTED = re.compile(r"(?<![\w.,])(?:1 (?:posts|likes|replies|reshares|agents|rounds|calls|decisions)|"
                        r"(?:0|[2-9]|\d\d+) (?:post|like|reply|reshare|agent|round|call|decision))\b")  # fmt: skip


def leaked_ids(page: Any) -> list[str]:
    """The machine's ids a person reads on the page, as shown."""
    shown = page.locator("main").inner_text()
    return [i for i in IDS if re.search(rf"(?<!\w){i}(?!\w)", shown)] + MISCOUNTED.findall(shown)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with served(tmp_path, scenarios="scenarios/social_feed", token_delay="0",
                env_extra={"MERCURY_OFFLINE_CALL_LATENCY": "0.15"}) as url:  # fmt: skip
        yield url


def test_a_run_is_watched_as_its_charts_grow_paused_resumed_and_finished(server: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(30_000)
        shot = Shots(page, "social-feed")
        sign_up_and_start(page, server, username="teacher1", scenario="town-square")
        expect(page.locator("h1")).to_contain_text("set up a run")
        page.fill("input[name=agents]", "150")
        page.fill("input[name=max_rounds]", "40")
        page.fill("input[name=checkpoint_frequency]", "2")
        shot("setup")
        page.click("text=Start the run")

        chart = page.locator("svg.feed-chart.states")
        page.wait_for_function("() => Number(document.querySelector('#panels').dataset.round) >= 4")
        seen = int(chart.get_attribute("data-rounds") or 0)
        page.wait_for_function(f"() => Number(document.querySelector('svg.states').dataset.rounds) > {seen}")
        assert (
            page.locator("svg.states polygon.band").count() == 8
        )  # a band per state, redrawn as rounds come
        shot("running")
        page.click("#panels button:has-text('Pause')")
        try:
            expect(page.locator("#panels .phase")).to_contain_text("Paused", timeout=15_000)
        except AssertionError:
            shot("not-paused")
            raise AssertionError(page.locator("#panels").inner_text()[:1500]) from None
        paused_at = page.locator("#panels").get_attribute("data-round")
        page.wait_for_timeout(600)
        assert page.locator("#panels").get_attribute("data-round") == paused_at  # nothing moves while paused
        shot("paused")
        page.click("text=Resume the run")
        page.wait_for_selector("#panels[data-status=FINISHED]", timeout=60_000)
        expect(page.locator("#panels .phase")).to_contain_text("round 40 of 40")
        assert not leaked_ids(page), leaked_ids(page)
        for name, y_title in (("states", "Agents (share)"), ("engagement", "Count")):
            expect(page.locator(f"svg.{name} .axis-title")).to_have_text(["Round", y_title])
        assert page.locator(".legend rect[fill^='#']").count() == page.locator(".legend li").count() == 12
        assert page.locator(".legend [style], svg.feed-chart [style]").count() == 0
        page.click("text=See the results")
        expect(page.locator("h1")).to_contain_text("Results")
        expect(page.locator("text=Decision log (JSON lines)")).to_be_visible()
        assert not leaked_ids(page), leaked_ids(page)
        shot("results")
        browser.close()
        shot.assert_accessible()
