"""The review and its printout in a real browser, at a laptop's 1280×800 and a phone's 390×844 (#69, "where students
and teachers look"):

- No picture cuts a name: every label of the stance charts and of the private-talks picture lies inside its
  picture's box and clear of the others, on screen and in print; the names are whole.
- The tables fit their card, or scroll inside it; the page never scrolls sideways. On a phone the summary and the
  vote table fit whole.
- "Print or save as PDF" gives a handout: at most six A4 pages (the summary, the pictures, the votes, the
  debrief); ticking "Include the full transcript" adds the transcript.
- The debrief streams rendered: every frame of the stream box shows headings and lists, never `###` or `- `.

One server for everything: before it starts, games are played headless on its database (a mercury game and a
plastics game to the end, two plastics games up to their debrief, which a page then watches being written).
Screenshots and PDFs go to test-artifacts/review-*. Run apart from the other tests (`pytest -m browser`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.browser import (
    ARTIFACTS,
    BROWSER_TEST,
    CHROMIUM,
    CHROMIUM_ARGS,
    screenshot,
    serious_accessibility_violations,
    served,
)

pytestmark = BROWSER_TEST

PASSWORD = "a-long-test-passphrase-42"
# Games 1 and 2 are played to the end; 3 and 4 stop before their debrief (the phone watches 3, the laptop 4).
PLAY = f"""
from django.core.management import call_command
from django.contrib.auth.models import User
from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.games import step_of
from simulations.kinds.negotiation.headless import play_game
from simulations.models import ScenarioVersion
from simulations.services.ledger.turns import create_game

call_command('load_scenario', 'scenarios/plastics', verbosity=0)
teacher = User.objects.create_user('teacher', password='{PASSWORD}')

class Stop(Exception):
    pass

def before_the_debrief(game, what):
    if step_of(game).purpose == 'summary':
        raise Stop

for slug, role, human, seed, whole in [('mercury', 'CAN', 'advocate', 7, True), ('plastics', 'FJI', 'advocate', 2, True),
                                       ('plastics', 'SAU', 'passive', 5, False), ('plastics', 'NOR', 'advocate', 9, False)]:
    version = ScenarioVersion.objects.filter(slug=slug).order_by('-version').first()
    game = create_game(scenario_version=version, seed=seed, owner=teacher)
    try:
        play_game(game_id=game.pk, policy=make_policy(human, role), on_progress=None if whole else before_the_debrief)
    except Stop:
        pass
"""
FINISHED = {1: "mercury", 2: "plastics"}
BEFORE_THE_DEBRIEF = {"phone": 3, "laptop": 4}
MAX_HANDOUT_PAGES = 6

# Every label of the review's pictures (the key's little marks aside): outside its picture's box, or overlapping
# another label of the same picture.
LABELS_OUT_OF_PLACE = """() => {
  const found = [];
  for (const svg of document.querySelectorAll(".review svg[viewBox]")) {
    if (svg.closest(".key-mark")) continue;
    const vb = svg.viewBox.baseVal;
    const boxes = [...svg.querySelectorAll("text")].map((t) => [t.textContent, t.getBBox()]);
    for (const [text, b] of boxes) {
      if (b.x < vb.x - 0.5 || b.y < vb.y - 0.5 || b.x + b.width > vb.x + vb.width + 0.5
          || b.y + b.height > vb.y + vb.height + 0.5) found.push(`cut: ${text}`);
    }
    boxes.forEach(([text, b], i) => boxes.slice(i + 1).forEach(([other, c]) => {
      if (b.x < c.x + c.width - 0.5 && c.x < b.x + b.width - 0.5 && b.y < c.y + c.height - 0.5
          && c.y < b.y + b.height - 0.5) found.push(`overlap: ${text} / ${other}`);
    }));
  }
  return found;
}"""
# Every table of the review that shows: does it fit its card, or scroll inside it?
TABLES = """() => [...document.querySelectorAll(".review table")].filter((t) => t.getClientRects().length).map((t) => {
  const card = t.closest(".card").getBoundingClientRect(), r = t.getBoundingClientRect();
  const scroller = t.closest(".table-scroll"), s = scroller && scroller.getBoundingClientRect();
  return { table: t.className, fits: r.left >= card.left - 0.5 && r.right <= card.right + 0.5,
           scrolls: !!s && s.left >= card.left - 0.5 && s.right <= card.right + 0.5
                    && scroller.scrollWidth > scroller.clientWidth };
})"""
# The names the pictures draw: a stance chart's row label (its lines joined) and a seat's label in the talks.
NAMES = """() => ({
  rows: [...document.querySelectorAll(".stance-chart svg")].map((svg) => {
    const names = []; let last = null;
    for (const t of svg.querySelectorAll("text.row-label")) {
      const y = t.getAttribute("y");
      if (last && Number(y) - Number(last.y) < 16) last.name += " " + t.textContent; else names.push(last = { y, name: t.textContent });
      last.y = y;
    }
    return names.map((n) => n.name);
  }),
  seats: [...document.querySelectorAll(".network g.seat")].map((g) => [g.querySelector("title").textContent,
    [...g.querySelectorAll("tspan")].map((s) => s.textContent).join(" ")]),
})"""


def _pages(pdf: bytes) -> int:
    """A4 pages in a PDF from Chromium (each page is a `/Type /Page` object; the tree's root is `/Pages`)."""
    return len(re.findall(rb"/Type\s*/Page(?![a-z])", pdf))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("server")
    with served(folder, scenarios="scenarios/mercury", token_delay="0.01", shell=PLAY) as url:
        yield url


def _log_in(page: Any, server: str) -> None:
    page.goto(f"{server}/accounts/login/")
    page.fill("#id_username", "teacher")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{server}/")


@pytest.mark.parametrize("screen", [(390, 844), (1280, 800)], ids=["phone", "laptop"])
def test_the_review_fits_the_screen_and_prints_as_a_handout(server: str, screen: tuple[int, int]) -> None:
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    width, height = screen
    device = "phone" if width < 800 else "laptop"
    problems: dict[str, Any] = {}
    pages: dict[str, int] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.set_default_timeout(30_000)
        # Anything the Content-Security-Policy stopped (an inline style or script), htmx's aside: it tries to add
        # a <style> of its own for its indicators on every page (base.html's htmx-config does not turn that off).
        refused: list[str] = []
        page.on(
            "console",
            lambda m: (
                refused.append(f"{m.location['url']}: {m.text}")
                if "Content Security Policy" in m.text and "/static/vendor/htmx" not in m.location["url"]
                else None
            ),
        )
        _log_in(page, server)
        for game_id, slug in FINISHED.items():
            page.goto(f"{server}/games/{game_id}/review/")
            expect(page.locator("h1")).to_contain_text("Review")
            page.click("details.usage-per-seat summary")  # its table too must fit or scroll
            screenshot(page, ARTIFACTS / f"review-{device}-{slug}.png", full_page=True)
            problems[f"{slug} axe"] = serious_accessibility_violations(page)
            # 1. Names: whole, inside their picture, clear of each other; in print too.
            problems[f"{slug} labels"] = page.evaluate(LABELS_OUT_OF_PLACE)
            names = page.evaluate(NAMES)
            voters = page.locator(".vote-matrix tbody th[scope=row]").all_inner_texts()[:-1]  # then "Result"
            assert names["rows"] and all(rows == voters for rows in names["rows"]), (names["rows"], voters)
            assert names["seats"] and all(title == drawn for title, drawn in names["seats"]), names["seats"]
            # 3. Tables: inside their card; on a phone the summary and the votes whole.
            tables = page.evaluate(TABLES)
            assert len(tables) == 3, tables
            problems[f"{slug} tables"] = [t for t in tables if not (t["fits"] or t["scrolls"])]
            if device == "phone":
                whole = ("glance-table", "vote-matrix")
                problems[f"{slug} tables"] += [
                    t for t in tables if t["table"].endswith(whole) and not t["fits"]
                ]
            problems[f"{slug} sideways"] = page.evaluate("document.scrollingElement.scrollWidth > innerWidth")
            # 5. The printout: the handout, then with the transcript.
            handout = page.pdf(format="A4")
            (ARTIFACTS / f"review-{device}-{slug}-handout.pdf").write_bytes(handout)
            page.check("#print-transcript")  # the visible choice, no script of the page's own involved
            full = page.pdf(format="A4")
            (ARTIFACTS / f"review-{device}-{slug}-with-transcript.pdf").write_bytes(full)
            pages[slug], pages[f"{slug} with transcript"] = _pages(handout), _pages(full)
            page.emulate_media(media="print")  # (after the PDFs: an emulated medium would be theirs too)
            problems[f"{slug} labels in print"] = page.evaluate(LABELS_OUT_OF_PLACE)
            page.emulate_media(media="null")
        browser.close()
    problems["refused by the CSP"] = refused
    assert not any(problems.values()), {k: v for k, v in problems.items() if v}
    for slug in FINISHED.values():
        assert 1 <= pages[slug] <= MAX_HANDOUT_PAGES, pages
        assert pages[f"{slug} with transcript"] > pages[slug] + 5, pages  # the transcript is many pages long


@pytest.mark.parametrize("screen", [(390, 844), (1280, 800)], ids=["phone", "laptop"])
def test_the_debrief_streams_rendered(server: str, screen: tuple[int, int]) -> None:
    from playwright.sync_api import expect, sync_playwright

    width, height = screen
    device = "phone" if width < 800 else "laptop"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.set_default_timeout(30_000)
        # Every state of the stream box, kept from the page's first moment (the words start as the socket opens).
        page.add_init_script(
            """window.streamed = [];
               new MutationObserver(() => {
                 const box = document.getElementById("stream");
                 if (box && box.innerHTML && box.innerHTML !== window.streamed.at(-1)) window.streamed.push(box.innerHTML);
               }).observe(document, { subtree: true, childList: true, characterData: true });"""
        )
        _log_in(page, server)
        page.goto(f"{server}/games/{BEFORE_THE_DEBRIEF[device]}/")
        page.wait_for_selector("#stream .debrief h3", timeout=60_000)
        screenshot(page, ARTIFACTS / f"review-{device}-debrief-streaming.png")
        expect(page.locator("#panels")).to_have_attribute("data-action", "review", timeout=120_000)
        frames = page.evaluate(
            """() => window.streamed.map((html) => {
                 const box = document.createElement("div"); box.innerHTML = html;
                 return { who: box.querySelector(".who")?.textContent || "",
                          blocks: [...box.querySelectorAll("p.text, .text > *, .text section > *, .text li")]
                                    .map((el) => [el.tagName, el.textContent]) };
               })"""
        )
        browser.close()
    written = [f for f in frames if f["who"].startswith("The debrief")]
    assert len(written) >= 5, len(frames)  # seen being written, a few words at a time
    assert any(tag == "H3" for f in written for tag, _ in f["blocks"])
    assert any(tag == "LI" for f in written for tag, _ in f["blocks"])
    marks = [
        text for f in written for _, text in f["blocks"] if re.match(r"\s*(#|[-*]\s)", text) or "**" in text
    ]
    assert not marks, marks[:3]
