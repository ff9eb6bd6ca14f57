"""In a real browser, at a laptop's 1280×800 and a phone's 390×844: where a student looks first (#69).

- Nothing pinned covers a control: on every page with a bar pinned to the bottom of a scrolling area (the lobby's
  start button, the seat's confirm button, the partner choice, the talk, the debate's placement, the speech), each
  visible control (input, label, button, link, text box, summary), scrolled into view from the top of its scrolling
  areas, lies wholly clear of the bar.
- The seat's confidential brief can be read before its persona is chosen, on the same page.
- On a phone the lobby shows the student's games and "Start a new game" on its first screen (its games, laid out
  as cards, still a table to a screen reader).

Each test's server is shared (module scope: a server takes seconds to start); each test signs up a student of its
own. Screenshots go to test-artifacts/layout-*.png. Run apart from the other tests (`pytest -m browser`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.browser import (
    ARTIFACTS,
    BROWSER_TEST,
    CHROMIUM,
    CHROMIUM_ARGS,
    panels,
    screenshot,
    serious_accessibility_violations,
    served,
    sign_up,
    wait_for_new_panels,
)

pytestmark = BROWSER_TEST

# The lobby of a class lists every shipped scenario: nine of them, as the issue saw it.
MORE_SCENARIOS = (
    "from django.core.management import call_command\n"
    "for folder in ('plastics', 'deliberation', 'message_lab', 'roleplay', 'social_feed'):\n"
    "    call_command('load_scenario', f'scenarios/{folder}', verbosity=0)\n"
)

# Bars pinned to the bottom of a scrolling area (sticky or fixed, with a bottom offset; a modal dialog is no bar),
# and every control on screen outside them. Each control is brought into view as a student scrolling down (or
# tabbing) reaches it: its scrolling areas at their top, then scrollIntoView, which stops at the bottom edge less
# the area's scroll padding. A control that then meets a bar's box is reported.
COVERED_CONTROLS = """() => {
  const shown = (el) => { const r = el.getBoundingClientRect();
                          return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== "hidden"; };
  const bars = [...document.querySelectorAll("body *")].filter((el) => {
    const cs = getComputedStyle(el);
    return (cs.position === "sticky" || cs.position === "fixed") && cs.bottom !== "auto" && el.tagName !== "DIALOG"
      && shown(el);
  });
  const controls = [...document.querySelectorAll(
      "input:not([type=hidden]), label, button, a[href], textarea, select, summary")]
    .filter((el) => shown(el) && !bars.some((bar) => bar.contains(el)) && !el.closest("dialog:not([open])"));
  const scrollers = (el) => {
    const found = [];
    for (let p = el.parentElement; p; p = p.parentElement) {
      const o = getComputedStyle(p).overflowY;
      if ((o === "auto" || o === "scroll") && p.scrollHeight > p.clientHeight) found.push(p);
    }
    return [...found, document.scrollingElement];
  };
  const covered = [];
  for (const el of controls) {
    scrollers(el).forEach((s) => { s.scrollTop = 0; });
    el.scrollIntoView({ block: "nearest" });
    const r = el.getBoundingClientRect();
    for (const bar of bars) {
      const b = bar.getBoundingClientRect();
      if (r.left < b.right && b.left < r.right && r.top < b.bottom && b.top < r.bottom) {
        const name = (el.textContent || el.value || el.name || "").trim().slice(0, 40);
        covered.push(`${el.tagName.toLowerCase()} "${name}" under "${bar.textContent.trim().slice(0, 30)}"`);
      }
    }
  }
  scrollers(document.body).forEach((s) => { s.scrollTop = 0; });
  return { bars: bars.length, controls: controls.length, covered };
}"""


# The pages with a pinned bar, each checked on both screens (the vote's page is checked too; it has none).
PINNED_PAGES = ("lobby", "persona", "partner", "partner-second", "talk", "placement", "speech")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("server")
    with served(folder, scenarios="scenarios/mercury", token_delay="0", shell=MORE_SCENARIOS) as url:
        yield url


def _covered(page: Any, name: str, found: dict[str, list[str]], *, pinned: bool = True) -> None:
    """Checks the page as it stands (once per `name`): what a pinned bar covers goes into `found`; `pinned`: the
    page must have such a bar (else the check would pass for want of one)."""
    if name in found:
        return
    result = page.evaluate(COVERED_CONTROLS)
    assert result["controls"] > 0, name
    assert not pinned or result["bars"] >= 1, f"{name}: no pinned bar found"
    found[name] = result["covered"]


@pytest.mark.parametrize("screen", [(390, 844), (1280, 800)], ids=["phone", "laptop"])
def test_nothing_pinned_covers_a_control(server: str, screen: tuple[int, int]) -> None:
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    width, height = screen
    device = "phone" if width < 800 else "laptop"
    found: dict[str, list[str]] = {}

    def shot(name: str) -> None:
        screenshot(page, ARTIFACTS / f"layout-{device}-{name}.png")

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.set_default_timeout(30_000)
        sign_up(page, server, username=f"layout{width}")
        _covered(page, "lobby", found)
        page.click("text=Start a new game")
        page.click("text=Play Canada")
        # The seat's confidential brief, before its persona is chosen: on the page, with the personas after it.
        brief = page.locator(".seat-brief")
        expect(brief).to_contain_text("Red lines")
        expect(brief).to_contain_text("Priorities")
        assert page.locator("input[name=variant]").count() == 3
        shot("persona")
        _covered(page, "persona", found)
        page.click("text=Confirm and begin")
        for _ in range(400):
            action, status, version = panels(page)
            if action == "advance":
                page.click("[data-auto-advance]")
            elif action == "partner":
                skip = page.locator("text=Skip the second talk").count() > 0
                shot(f"partner{'-second' if skip else ''}")
                _covered(page, f"partner{'-second' if skip else ''}", found)
                page.click("text=Skip the second talk" if skip else "text=Start the talk")
            elif action == "talk":
                shot("talk")
                _covered(page, "talk", found)
                page.fill("#message", "Canada offers a financial mechanism. Will you support 2.1?")
                page.click("#actions button.primary")
            elif action == "placement":
                if page.locator("#issue-modal[open]").count():
                    page.click("#issue-modal button:has-text('Close')")
                # "First in my group" says what it means for this seat.
                expect(page.locator("#actions .placement")).to_contain_text("the first country to speak")
                shot("placement")
                _covered(page, "placement", found)
                page.click("text=Open the debate")
            elif action == "speech":
                shot("speech")
                _covered(page, "speech", found)
                page.fill("#speech", "Canada supports 2.1 and offers a dedicated financial mechanism.")
                page.click("#actions button.primary")
            elif action == "vote":
                if page.locator("#vote-modal[open]").count():
                    page.click("#vote-modal button:has-text('Not yet')")
                shot("vote")
                _covered(page, "vote", found, pinned=False)
                break
            wait_for_new_panels(page, version)
        else:
            raise AssertionError(f"no vote reached; last at {action} / {status}")
        browser.close()
    assert set(found) >= set(PINNED_PAGES) | {"vote"}
    assert not any(found.values()), {k: v for k, v in found.items() if v}


def test_a_phone_lobby_shows_your_games_and_start_on_its_first_screen(server: str) -> None:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.set_default_timeout(30_000)
        sign_up(page, server, username="phone-lobby")
        page.click("text=Start a new game")
        page.click("text=Play Tanzania")
        page.click("text=Confirm and begin")
        page.wait_for_selector("#panels")
        page.goto(f"{server}/")
        assert page.locator("input[name=scenario]").count() == 9
        screenshot(page, ARTIFACTS / "layout-phone-lobby.png")
        # Its games laid out as cards are still a table to a screen reader, and axe finds nothing serious.
        assert page.get_by_role("cell", name="Tanzania").count() == 1
        assert serious_accessibility_violations(page) == []
        # As the page opens, unscrolled: wholly inside the window.
        boxes = page.evaluate(
            """() => [document.querySelector(".your-games a[href*='/games/']"),
                      [...document.querySelectorAll("button")].find((b) => b.textContent.includes("Start a new game"))]
                     .map((el) => { const r = el.getBoundingClientRect();
                                    return [el.textContent.trim(), r.top, r.bottom, window.innerHeight]; })"""
        )
        browser.close()
    for name, top, bottom, screen in boxes:
        assert top >= 0 and bottom <= screen, (name, top, bottom)
    assert [name for name, *_ in boxes] == ["Resume", "Start a new game"]
