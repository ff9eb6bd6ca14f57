"""End to end in a real browser: sign up, play a whole game as a country, reach the review, on a phone (390×844)
and on a laptop (1280×800). At every step the phase's primary action must be on screen without scrolling, and
axe-core scans every phase for serious or critical accessibility violations.

A real server (Django's runserver, which is daphne: HTTP and websockets) runs in a subprocess on its own SQLite
file; Playwright drives the OS Chromium (never a downloaded browser). Screenshots of each phase go to
test-artifacts/ (not committed). Run apart from the other tests (`pytest -m browser`): Playwright's sync API keeps
an event loop that must not meet pytest-asyncio's.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.e2e.browser import (
    ARTIFACTS,
    BROWSER_TEST,
    CHROMIUM,
    CHROMIUM_ARGS,
    in_viewport,
    screenshot,
    serious_accessibility_violations,
    served,
)

pytestmark = BROWSER_TEST


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One server for both screens (each signs up a student of its own): a server takes about ten seconds to start."""
    with served(tmp_path_factory.mktemp("server"), scenarios="scenarios/mercury", token_delay="0.003") as url:
        yield url


# The primary action of each phase: what must be on screen without scrolling (the first selector present counts).
PRIMARY = {
    "advance": ["[data-auto-advance]"],
    "partner": ["#actions button.primary"],
    "talk": ["#message", "#actions button.primary"],
    "placement": ["#issue-modal[open] button.primary", "#actions button.primary"],
    "speech": ["#speech", "#actions button.primary"],
    "vote": ["#vote-modal[open] [data-confirm-vote]", "#actions button.primary"],
    "waiting": ["#waiting"],
    "review": ["#actions a.primary"],
}


@pytest.mark.parametrize("screen", [(390, 844), (1280, 800)], ids=["phone", "laptop"])
def test_a_student_plays_a_whole_game_in_the_browser(server: str, screen: tuple[int, int]) -> None:
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    seen: set[str] = set()
    scanned: dict[str, list[str]] = {}
    off_screen: list[str] = []
    width, height = screen
    device = "phone" if width < 800 else "laptop"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.set_default_timeout(30_000)
        # Moves posted and sent over the websocket, counted once the game has begun (`counting`). Listened for
        # from the start: the game page opens its socket before then, and a listener added later never hears it.
        posted: list[str] = []
        sent_over_socket: list[str] = []
        counting: list[bool] = []
        page.on(
            "request",
            lambda r: posted.append(r.url) if counting and r.method == "POST" and "/move/" in r.url else None,
        )

        def frame_sent(frame: str | bytes) -> None:
            if counting and '"move"' in str(frame):
                sent_over_socket.append(str(frame))

        page.on("websocket", lambda ws: ws.on("framesent", frame_sent))

        def shot(name: str) -> None:
            if name not in seen:
                seen.add(name)
                screenshot(page, ARTIFACTS / f"{device}-{len(seen):02d}-{name}.png")

        def check_phase(name: str, action: str) -> None:
            """The primary action is on screen, and (once per phase) axe finds nothing serious."""
            if name not in scanned:
                scanned[name] = serious_accessibility_violations(page)
            for selector in PRIMARY.get(action, []):
                shown = in_viewport(page, selector)
                if shown is not None:
                    if not shown:
                        off_screen.append(f"{name}: {selector}")
                        screenshot(page, ARTIFACTS / f"{device}-off-screen-{len(off_screen)}.png")
                    break

        page.goto(f"{server}/games/1/")
        expect(page).to_have_url(f"{server}/accounts/login/?next=/games/1/")  # anonymous: sent to log in
        page.goto(f"{server}/accounts/signup/")
        check_phase("sign-up", "")
        page.fill("#id_username", f"student{width}")
        page.fill("#id_password1", "a-long-test-passphrase-42")
        page.fill("#id_password2", "a-long-test-passphrase-42")
        page.click("button[type=submit]")
        check_phase("lobby", "")
        page.click("text=Start a new game")
        shot("roles")
        check_phase("roles", "")
        page.click("text=Play Canada")
        shot("persona")
        check_phase("persona", "")
        assert in_viewport(page, ".sticky-actions button.primary"), "the set-up's button is below the fold"
        page.click("text=Confirm and begin")
        # From here on the page's moves travel over its open websocket, not as posts (app.js, data-socket-move).
        counting.append(True)
        spoke = voted = talked = 0
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            # One read of the three attributes: separate reads could straddle a swap of the panels.
            action, status, version = page.eval_on_selector(
                "#panels", "p => [p.dataset.action, p.dataset.status, p.dataset.version]"
            )
            if action == "review":
                check_phase("review-ready", action)
                break
            check_phase(f"{action}:{status}", action)
            if action == "advance":
                shot("round-1")
                page.click("[data-auto-advance]")
                # After each step focus moves to the next thing to do, never back to the page's top.
                page.wait_for_function(
                    "(v) => document.getElementById('panels').dataset.version !== v"
                    " && document.activeElement && document.activeElement.closest('#actions, dialog')",
                    arg=version,
                )
            elif action == "partner":
                shot("round-2-partner")
                if page.locator("text=Skip the second talk").count():
                    if not in_viewport(page, ".skip-talk button"):
                        off_screen.append(f"partner:{status}: .skip-talk button")
                    page.click("text=Skip the second talk")
                else:
                    page.check("input[name=starter][value=human]")
                    page.click("text=Start the talk")
            elif action == "talk":
                shot("round-2-talk")
                talked += 1
                page.fill(
                    "#message",
                    f"Canada is ready to offer a dedicated financial mechanism. Will you support emissions in scope (2.1)? ({talked})",
                )
                page.click("#actions button.primary")
            elif action == "placement":
                if page.locator("#issue-modal[open]").count():
                    shot("round-3-issue-modal")
                    page.click("#issue-modal button:has-text('Close')")
                page.check("input[name=placement][value=first]")
                page.click("text=Open the debate")
            elif action == "speech":
                shot("round-3-speech")
                spoke += 1
                page.fill(
                    "#speech", "Canada supports 2.1 and 1.1, and we offer a dedicated financial mechanism."
                )
                page.click("#actions button.primary")
            elif action == "vote":
                if not page.locator("#vote-modal[open]").count():
                    page.click("text=Cast your vote")
                shot("round-3-vote")
                voted += 1
                # Focus starts on the neutral choice; a vote is chosen, then confirmed.
                assert page.evaluate("document.activeElement.textContent") == "Not yet"
                page.check("#vote-modal input[value=yes]")
                expect(page.locator("#vote-modal [data-confirm-vote]")).to_have_text("Confirm my vote: YES")
                page.click("#vote-modal [data-confirm-vote]")
            elif action == "waiting" and status.startswith("ROUND_2"):
                shot("round-2-streaming")  # an AI seat has the floor: its words stream in
            # Every move, the student's or an AI seat's, ends in a newer version of the panels.
            try:
                page.wait_for_function(
                    "(v) => { const p = document.getElementById('panels'); return p && p.dataset.version !== v; }",
                    arg=version,
                    timeout=60_000,
                )
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "stuck.png"))
                raise AssertionError(f"stuck at {action} / {status} / version {version}") from None
        assert page.locator("#panels").get_attribute("data-action") == "review"
        assert talked == 6 and spoke >= 4 and voted == 4
        # Every move after the set-up went over the socket (the first may have left while it was still opening).
        assert len(sent_over_socket) > 30 and len(posted) <= 1, (len(sent_over_socket), posted)
        # Private talks show only this student's own; the transcript shows each entry once.
        ids = page.eval_on_selector_all("#transcript li", "els => els.map(e => e.id)")
        assert len(ids) == len(set(ids)) > 100
        assert not off_screen, off_screen
        # The side panel keeps every issue's outcome.
        assert page.locator("ol.outcomes li.adopted, ol.outcomes li.rejected").count() == 4
        page.click("text=Open the review")
        expect(page.locator("h1")).to_contain_text("Review")
        scanned["review"] = serious_accessibility_violations(page)
        assert not any(scanned.values()), {k: v for k, v in scanned.items() if v}
        expect(page.locator("h2:text-is('At a glance')")).to_be_visible()
        expect(page.locator(".glance-table tbody tr")).to_have_count(4)
        expect(page.locator("figure.stance-chart svg")).to_have_count(4)
        expect(page.locator("details.part summary:has-text('Round 2 of 3 · Private talks')")).to_be_visible()
        shot("review")
        screenshot(page, ARTIFACTS / f"{device}-review-full.png", full_page=True)
        # The instructor's link: its code rides after '#', the page posts it, the review opens with no code in
        # any URL the server saw.
        page.click("text=Create a read-only link for an instructor")
        link = page.locator("input.share").input_value()
        code = link.split("#", 1)[1]
        instructor = browser.new_context().new_page()
        requested: list[str] = []
        instructor.on("request", lambda request: requested.append(request.url))
        instructor.goto(link)
        expect(instructor.locator("h1")).to_contain_text("Review")
        assert instructor.url.endswith("/review/") and requested
        assert not any(code in url for url in requested), requested
        browser.close()
