"""End to end in a real browser: a Message Lab panel started from the lobby and steered through its quality gate.

Sign up, set up a two-round panel with a gate after round 1 (the default gates after rounds 3 and 6 go as the rounds
drop) and another moderator, watch the participants' words stream side by side, decide the gate in its dialog
(eliminate a survivor, give a direction that survives a reload), reach the report. Same harness as
test_browser.py (tests/e2e/browser.py: a real daphne server on its own SQLite file, the OS Chromium); run apart with
`pytest -m browser tests/e2e/test_message_lab_browser.py`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simulations.kinds.message_lab.machine import Event
from simulations.kinds.message_lab.state import ConceptStatus, RoundStage, SimulationStatus
from tests.e2e.browser import (
    BROWSER_TEST,
    CHROMIUM,
    CHROMIUM_ARGS,
    Shots,
    served,
    sign_up_and_start,
)

pytestmark = BROWSER_TEST
IDS = [*Event, *SimulationStatus, *RoundStage, *ConceptStatus]


def leaked_ids(page: Any) -> list[str]:
    """The machine's ids a person reads on the page. Ids with an underscore are looked for in the text as shown;
    one-word ids in the text as written (a CSS-uppercased badge shows "Winner" as WINNER, a word)."""
    shown, written = page.locator("main").inner_text(), page.locator("main").text_content() or ""
    found = [i for i in IDS if re.search(rf"(?<!\w){i}(?!\w)", shown if "_" in i else written)]
    return found + re.findall(r"(?<![\w/.#-])[a-z]+(?:_[a-z0-9]+)+(?![\w/.])", shown)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with served(tmp_path, scenarios="scenarios/message_lab", token_delay="0.005") as url:
        yield url


def test_a_panel_is_steered_through_its_gate_to_the_report_in_the_browser(server: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(30_000)
        shot = Shots(page, "message-lab")
        sign_up_and_start(page, server, username="copylead1", scenario="message-lab")

        expect(page.locator("h1")).to_contain_text("set up the panel")
        shot("setup-defaults")
        page.fill("input[name=rounds]", "2")
        for n in (
            "3",
            "6",
        ):  # the default gates the run no longer reaches go (app's static JS; the server too)
            expect(page.locator(f"input[name=gates][value='{n}']")).to_be_disabled()
            expect(page.locator(f"input[name=gates][value='{n}']")).to_be_hidden()
        page.check("input[name=gates][value='1']")
        page.select_option("select[name=moderator]", "humorist")  # a participant off the panel moderates
        shot("setup")
        page.click("text=Start the panel")
        expect(page.locator("#judges")).to_contain_text("Moderator: Fergus Tolley-Ashe")

        # Round 1's drafts stream side by side, one box per participant.
        page.wait_for_selector(".stream-grid .streaming", timeout=30_000)
        shot("streaming")
        dialog = page.locator("#gate-dialog")
        try:
            expect(dialog).to_be_visible(timeout=60_000)  # the gate's dialog opens by itself
        except AssertionError:
            shot("stuck")
            raise AssertionError(page.locator("#panels").inner_text()) from None
        expect(dialog).to_contain_text("Quality gate after round 1")
        shot("gate")
        # A typed direction survives a reload (kept per tab by app.js's drafts); the dialog opens again with it.
        dialog.locator("#gate-direction").fill("Open with the 30-day returns")
        page.reload()
        expect(dialog).to_be_visible()
        expect(dialog.locator("#gate-direction")).to_have_value("Open with the 30-day returns")
        boxes = dialog.locator("input[name=eliminate]")
        assert boxes.count() >= 2
        boxes.first.check()
        dialog.locator("text=Confirm and continue").click()

        try:
            page.wait_for_selector("#panels[data-action=done]", timeout=60_000)
        except Exception:
            shot("stuck-after-gate")
            raise AssertionError(page.locator("body").inner_text()[:3000]) from None
        expect(page.locator("#panels .phase")).to_contain_text("Finished")
        expect(page.locator("#panels")).to_contain_text("Placed")
        expect(page.locator("#actions")).to_contain_text("The panel has finished")
        expect(page.locator("#actions")).to_contain_text("Read the final report next")
        expect(page.locator("#panels")).not_to_contain_text("drafting")
        assert not leaked_ids(page), leaked_ids(page)
        shot("finished")
        page.click("text=Open the final report")
        expect(page.locator("h1")).to_contain_text("final report")
        expect(page.locator(".result h2")).to_have_text("The panel's verdict")
        expect(page.locator("h2", has_text="Winner:")).to_have_count(1)  # the winner's own card, once
        expect(page.locator("text=Download the report (Markdown)")).to_be_visible()
        expect(page.locator("text=Open with the 30-day returns").first).to_be_attached()
        assert not leaked_ids(page), leaked_ids(page)
        expect(page.locator(".score-chart .axis-title")).to_have_text(["Round", "Score (1 to 10)"])
        keys = page.locator(".legend li")
        assert keys.count() >= 3 and page.locator(".legend rect[fill^='#']").count() == keys.count()
        assert page.locator(".legend [style], .score-chart [style]").count() == 0
        shot("report")
        browser.close()
        shot.assert_accessible()
