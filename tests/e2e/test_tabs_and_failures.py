"""In a real browser: what a student sees when two tabs play one game, when a tab was asleep, and when the model
cannot be reached. Drafts survive reloads and other tabs' moves; a refused move says so in the student's words and
keeps the text; a failed AI turn shows a card naming the cause and stops the "has the floor" spinner.

A tab "asleep" is a real tab whose websocket frames from the server are held back (Playwright's websocket routing)
until it wakes: it sends a move from a page that is one move behind, exactly as a laptop woken from sleep would, and
hears the answer (sent on the same socket, after the turns it missed) when it wakes.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser import (
    ARTIFACTS,
    BROWSER_TEST,
    CHROMIUM,
    CHROMIUM_ARGS,
    panels,
    screenshot,
    served,
    sign_up_and_take_a_seat,
    wait_for_new_panels,
)

pytestmark = BROWSER_TEST


class Sleepable:
    """A page whose server-to-page websocket frames can be held back (asleep) and delivered later (awake)."""

    def __init__(self, page: Any) -> None:
        self.asleep = False
        self.held: list[Any] = []
        self.routes: list[Any] = []
        self.frames: dict[Any, int] = {}  # frames the server sent on each connection
        self.page = page
        page.route_web_socket(re.compile(r".*/ws/games/.*"), self._route)

    def connected(self, after: int) -> None:
        """Wait until the page's websocket opened after the first `after` ones has had its first render: a page
        (re)loaded just before it sleeps would otherwise get that full render only when it wakes, replacing the
        transcript under a reader who has scrolled up."""
        for _ in range(200):
            if len(self.routes) > after and self.frames.get(self.routes[-1]):
                return
            self.page.wait_for_timeout(50)
        raise AssertionError("the page's websocket did not bring its first render")

    def _route(self, ws: Any) -> None:
        server = ws.connect_to_server()
        self.routes.append(ws)

        def from_server(message: Any) -> None:
            self.frames[ws] = self.frames.get(ws, 0) + 1
            if self.asleep:
                self.held.append((ws, message))
            else:
                ws.send(message)

        server.on_message(from_server)
        ws.on_message(server.send)

    def wake(self) -> None:
        self.asleep = False
        held, self.held = self.held, []
        for ws, message in held:
            ws.send(message)


def reach_the_talk(page: Any) -> None:
    """Through Round 1 to the student's first private talk, the student speaking first."""
    for _ in range(60):
        action, _status, version = panels(page)
        if action == "talk":
            return
        if action == "advance":
            page.click("[data-auto-advance]")
        elif action == "partner":
            page.check("input[name=starter][value=human]")
            page.click("text=Start the talk")
        wait_for_new_panels(page, version)
    raise AssertionError("never reached the private talk")


def kept_drafts(page: Any) -> list[str]:
    return list(page.evaluate("Object.values(sessionStorage)"))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with served(tmp_path, scenarios="scenarios/mercury", token_delay="0.003") as url:
        yield url


def test_two_tabs_a_sleeping_tab_and_drafts(server: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.set_default_timeout(30_000)
        a = context.new_page()
        sleepy_a = Sleepable(a)
        sign_up_and_take_a_seat(a, server, username="two-tabs")
        reach_the_talk(a)
        b = context.new_page()
        sleepy_b = Sleepable(b)
        b.goto(a.url)
        assert panels(b)[0] == "talk"

        # A draft survives a reload of its tab.
        draft = "Draft typed in tab A: Canada could support 2.1 if the fund is real."
        a.fill("#message", draft)
        opened = len(sleepy_a.routes)
        a.reload()
        expect(a.locator("#message")).to_have_value(draft)
        sleepy_a.connected(after=opened)

        # Tab A sleeps while tab B sends (with Ctrl+Enter); A sends from its old page, over its socket.
        sleepy_a.asleep = True
        _, _, version_b = panels(b)
        b.fill("#message", "Sent from tab B: will you back emissions in scope (2.1)?")
        b.press("#message", "Control+Enter")
        wait_for_new_panels(b, version_b)
        a.click("#actions button.primary")
        # The reader scrolls up to re-read: what arrives does not pull the transcript away, a button says so. The
        # reader is looking at tab A: a tab in the background gets no scroll events (the page would not learn that
        # its reader left the end), and B, opened last, is in front.
        a.bring_to_front()
        a.eval_on_selector(".transcript-pane", "p => { p.scrollTop = 0; }")
        a.wait_for_timeout(200)
        sleepy_a.wake()  # the turns A missed, then the answer to its move
        notice = a.locator("#notice")
        expect(notice).to_contain_text("That turn was already played, perhaps in another tab")
        assert "HUMAN_MESSAGE_SUBMITTED" not in notice.inner_text()
        assert draft in kept_drafts(a)  # refused: the text is kept
        screenshot(a, ARTIFACTS / "tabs-stale-notice.png")
        pill = a.locator("#new-messages")
        expect(pill).to_be_visible()
        assert a.eval_on_selector(".transcript-pane", "p => p.scrollTop") < 100
        pill.click()
        expect(pill).to_be_hidden()
        assert (
            a.eval_on_selector(".transcript-pane", "p => p.scrollHeight - p.scrollTop - p.clientHeight") < 48
        )
        # The partner answers; when it is A's turn again, its box holds the kept draft, and the notice was not
        # wiped by the turns that arrived meanwhile over the websocket.
        a.wait_for_function(
            "() => document.getElementById('panels').dataset.action === 'talk'", timeout=60_000
        )
        expect(a.locator("#message")).to_have_value(draft)
        expect(notice).to_contain_text("already played")
        b.wait_for_function(
            "() => document.getElementById('panels').dataset.action === 'talk'", timeout=60_000
        )

        # Both tabs send at the same moment: one message is committed, the other tab is told and keeps its text.
        sleepy_a.asleep = sleepy_b.asleep = True
        texts = {
            a: "Same moment from A: Canada offers a dedicated fund.",
            b: "Same moment from B: we back 2.1.",
        }
        for page, text in texts.items():
            page.fill("#message", text)
        keys = {page: page.eval_on_selector("#actions input[name=idem]", "i => i.value") for page in texts}
        a.click("#actions button.primary")
        b.click("#actions button.primary")
        sleepy_a.wake()  # each answer comes on its tab's socket
        sleepy_b.wake()
        for page, key in keys.items():  # both moves answered: a notice naming the move
            page.wait_for_function("(k) => document.getElementById('notice').dataset.answers === k", arg=key)
        told = [page for page in (a, b) if "already played" in page.locator("#notice").inner_text()]
        assert len(told) == 1, "exactly one of the two tabs is told its message was not sent"
        a.wait_for_function(
            "() => document.getElementById('panels').dataset.action === 'talk'", timeout=60_000
        )
        transcript = a.locator("#transcript").inner_text()
        committed = [page for page, text in texts.items() if text in transcript]
        assert len(committed) == 1, committed  # exactly one of the two, never both, never neither
        loser = b if committed == [a] else a
        assert told == [loser] and texts[loser] in kept_drafts(loser)
        browser.close()


def test_a_moves_late_answer_does_not_replace_the_turn_the_websocket_brought_first(server: str) -> None:
    """The delegations may answer a move before the move's own response reaches the page (quick decisions, a
    busy server): the response's panels, older than what the websocket brought meanwhile, must not replace them.
    They do not: every update over the socket sends the move's section (presenters.render_update), so the form
    that posted is no longer in the page when its answer comes, and htmx swaps nothing for a request whose element
    it has taken out (not even its swap events fire; a listener on the form saw none). The response is held back
    here (Playwright's request routing) until the partner has answered. A page posts its move while its socket is
    not open (opening, reconnecting); here the form is made to post by taking its data-socket-move mark away (a
    move sent over the socket is answered on it, in order, and cannot arrive late)."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.set_default_timeout(30_000)
        sign_up_and_take_a_seat(page, server, username="late-answer")
        reach_the_talk(page)
        held: list[tuple[Any, Any]] = []

        def hold(route: Any) -> None:
            held.append((route, route.fetch()))  # the server answered; the page gets it when released below

        page.route(re.compile(r".*/move/$"), hold)
        page.eval_on_selector("#actions form", "form => form.removeAttribute('data-socket-move')")
        page.fill("#message", "Canada asks for the fund first, then we talk about scope.")
        page.click("#actions button.primary")
        for _ in range(100):  # the handler runs while the page waits
            if held:
                break
            page.wait_for_timeout(50)
        assert held, "the move's post never reached the route"
        route, response = held[0]
        answered = re.search(r'id="panels"[^>]*data-version="(\d+)"', response.text())
        assert answered, "the move's response carries the panels"
        # The partner answers over the websocket, and it is the student's turn again: a newer version.
        page.wait_for_function(
            "(v) => Number(document.getElementById('panels').dataset.version) > v && "
            "document.getElementById('panels').dataset.action === 'talk'",
            arg=int(answered.group(1)),
            timeout=60_000,
        )
        newer = panels(page)
        route.fulfill(response=response)
        page.wait_for_function("() => !document.querySelector('.htmx-request')")
        page.wait_for_timeout(200)
        assert panels(page) == newer, "the late response replaced newer panels"
        expect(page.locator("#message")).to_be_editable()
        expect(page.locator("#notice")).to_have_text("")
        browser.close()


@pytest.fixture
def unreachable_model_server(tmp_path: Path) -> Iterator[str]:
    """A server whose model is a real litellm provider at an address where nothing listens (refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    env = {
        "MERCURY_MODEL": "openai/a-model-nobody-serves",
        "MERCURY_MODEL_API_BASE": f"http://127.0.0.1:{closed}/v1",
        "MERCURY_MODEL_RETRIES": "0",
    }
    with served(tmp_path, scenarios="scenarios/mercury", token_delay="0", env_extra=env) as url:
        yield url


def test_a_failed_turn_shows_its_cause_and_stops_the_spinner(unreachable_model_server: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.set_default_timeout(30_000)
        sign_up_and_take_a_seat(page, unreachable_model_server, username="no-model")
        for _ in range(60):  # Round 1's openings are written in the scenario: no model call until the talks
            action, _status, version = panels(page)
            if action == "partner":
                break
            if action == "advance":
                page.click("[data-auto-advance]")
            wait_for_new_panels(page, version)
        page.check("input[name=starter][value=partner]")  # the AI partner speaks first: a model call
        page.click("text=Start the talk")
        card = page.locator("#stream .failure")
        expect(card).to_be_visible(timeout=60_000)
        expect(card.locator("h2")).to_have_text("The model server could not be reached")
        expect(card).to_contain_text("MERCURY_MODEL_API_BASE")  # what to do, naming the setting
        waiting = page.locator("#waiting")
        expect(waiting).to_have_class(re.compile(r"\bstopped\b"))
        expect(waiting).to_contain_text("turn failed")
        assert page.locator(".spinner").count() == 0
        screenshot(page, ARTIFACTS / "failure-card-phone.png")
        browser.close()
