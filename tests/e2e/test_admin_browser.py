"""End to end in a real browser: a scenario editor clones a version in Django admin, edits the draft (a schema
error first, shown beside the editor; then a brief in the forms editor), publishes it, and plays the new version
from the lobby. An admin edits a negotiation (186,000 characters of YAML) one section at a time, and the forms
editor one part at a time. axe-core finds nothing, of any impact, on every admin page an editor uses.

Same harness as the other browser tests (tests/e2e/browser.py); run apart with
`pytest -m browser tests/e2e/test_admin_browser.py`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser import ARTIFACTS, BROWSER_TEST, CHROMIUM, CHROMIUM_ARGS, screenshot, served

pytestmark = BROWSER_TEST
PASSWORD = "a-long-test-passphrase-42"
MAKE_EDITOR = (
    "from django.contrib.auth.models import Group, User; "
    f"u = User.objects.create_user('editor1', password='{PASSWORD}', is_staff=True); "
    "u.groups.add(Group.objects.get(name='Scenario editors'))"
)


MAKE_ADMIN = f"from django.contrib.auth.models import User; User.objects.create_superuser('admin1', password='{PASSWORD}')"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with served(tmp_path, scenarios="scenarios/deliberation", token_delay="0", shell=MAKE_EDITOR) as url:
        yield url


@pytest.fixture
def negotiation_server(tmp_path: Path) -> Iterator[str]:
    with served(tmp_path, scenarios="scenarios/mercury", token_delay="0", shell=MAKE_ADMIN) as url:
        yield url


def accessibility_violations(page: Any) -> list[str]:
    """Every axe-core finding on the page as it stands, whatever its impact: one line each (rule, impact, the
    first offending elements). The admin is held to none at all."""
    from axe_playwright_python.sync_playwright import Axe

    found = []
    for violation in Axe().run(page).response["violations"]:
        targets = [", ".join(node["target"]) for node in violation["nodes"][:3]]
        found.append(f"{violation['id']} ({violation['impact']}): {'; '.join(targets)}")
    return found


class AdminShots:
    """A screenshot `<prefix>-<name>.png` of each page and axe's findings on it; `assert_accessible()` fails on
    any."""

    def __init__(self, page: Any, prefix: str = "admin") -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        self.page, self.prefix = page, prefix
        self.found: dict[str, list[str]] = {}

    def __call__(self, name: str) -> None:
        screenshot(self.page, ARTIFACTS / f"{self.prefix}-{name}.png")
        self.found[name] = accessibility_violations(self.page)

    def assert_accessible(self) -> None:
        assert not any(self.found.values()), {k: v for k, v in self.found.items() if v}


def sign_in(page: Any, server: str, username: str) -> None:
    page.goto(f"{server}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")


def test_an_editor_publishes_a_draft_and_it_is_played_from_the_lobby(server: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(30_000)

        shot = AdminShots(page)
        sign_in(page, server, "editor1")

        # Clone the loaded version into a draft.
        page.goto(f"{server}/admin/simulations/scenarioversion/")
        page.check("input[name=_selected_action]")
        page.select_option("select[name=action]", "clone_versions")
        page.click("button[name=index]")
        expect(page.locator("ul.messagelist")).to_contain_text("Draft of code-review v1 created")

        page.goto(f"{server}/admin/simulations/scenariodraft/")
        shot("draft-list")
        page.click("table#result_list a:has-text('code-review')")
        yaml_text = page.locator("#id_text").input_value()  # the first section: the scenario's basics
        assert "title: Code review committee" in yaml_text

        # A schema error, in the personas' section, is shown beside the editor naming it, and nothing is saved.
        page.locator(".draft-sections").get_by_role("link", name="Personas").click()
        personas = page.locator("#id_text").input_value()
        page.fill("#id_text", personas.replace("confidence_threshold: 0.5", "confidence_threshold: 5", 1))
        page.click("input[name=_continue]")
        expect(page.locator(".field-text .errorlist")).to_contain_text("Personas — personas[")
        expect(page.locator(".field-text .errorlist")).to_contain_text("confidence_threshold")
        shot("error")

        page.locator(".draft-sections").get_by_role("link", name="Scenario basics").click()
        page.fill(
            "#id_text", yaml_text.replace("title: Code review committee", "title: Friday code review", 1)
        )
        page.click("input[name=_continue]")
        expect(page.locator("ul.messagelist")).to_contain_text("was changed successfully")
        expect(page.locator(".field-changes")).to_contain_text("+title: Friday code review")
        shot("draft")

        # The same draft in the forms editor: a persona's brief changed in its own field, on the personas' part.
        page.click("text=Edit briefs, options and stances in forms")
        expect(page.locator("h1")).to_contain_text("Edit code-review")
        page.locator("nav.scenario-parts").get_by_role("link", name="Personas").click()
        brief = page.get_by_label("Brief").first
        brief.fill("Reads every diff twice and asks for tests.")
        page.click("input[value='Save this part']")
        expect(page.locator("ul.messagelist")).to_contain_text("saved. Publish it for new games to use it.")
        expect(page.get_by_label("Brief").first).to_have_value("Reads every diff twice and asks for tests.")
        shot("forms")

        page.goto(f"{server}/admin/simulations/scenariodraft/")
        page.check("input[name=_selected_action]")
        page.select_option("select[name=action]", "publish_drafts")
        page.click("button[name=index]")
        expect(page.locator("ul.messagelist")).to_contain_text("published as code-review v2")
        shot("published")

        # The lobby offers the new version; a game of it plays to its verdict.
        page.goto(f"{server}/")
        expect(page.locator("body")).to_contain_text("Friday code review")
        page.check("input[name=scenario][value=code-review]")
        page.click("text=Start a new game")
        expect(page.locator("h1")).to_contain_text("Friday code review: table code for review")
        page.check("input[name=source][value=sample]")
        page.check("input[name=sample][value=clean]")
        page.click("text=Table the code")
        page.wait_for_selector("#panels[data-action=review]", timeout=60_000)
        expect(page.locator("#panels")).to_contain_text("Verdict: Approved")
        screenshot(page, ARTIFACTS / "admin-played.png")
        browser.close()
    shot.assert_accessible()


def test_an_admin_edits_a_negotiation_one_section_and_one_part_at_a_time(negotiation_server: str) -> None:
    """Issue #69: the draft's YAML one section at a time (a role typed into in seconds, saved, checked; an invalid
    edit named by its section), a search across the sections, the whole document still on offer; the forms
    editor one part at a time under a table of contents; rehearsal, publication, games and versions. axe finds
    nothing on any of these pages."""
    from playwright.sync_api import expect, sync_playwright

    server = negotiation_server
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(30_000)
        shot = AdminShots(page, "admin-negotiation")
        sign_in(page, server, "admin1")

        page.goto(f"{server}/admin/simulations/scenarioversion/")
        page.check("input[name=_selected_action]")
        page.select_option("select[name=action]", "clone_versions")
        page.click("button[name=index]")
        expect(page.locator("ul.messagelist")).to_contain_text("Draft of mercury v1 created")
        shot("versions")
        page.goto(f"{server}/admin/simulations/scenariodraft/")
        shot("drafts")

        # The draft opens on its basics, a few lines; every section is listed above the editor.
        page.click("table#result_list a:has-text('mercury')")
        area = page.locator("#id_text")
        expect(page.locator("label[for=id_text]")).to_have_text("Scenario basics (YAML):")
        assert "slug: mercury" in area.input_value() and "roles:" not in area.input_value()
        sections = page.locator("nav.draft-sections")
        # (The issues, long with their cues, are a section each, as the roles are.)
        for name in ("Scenario basics", "Chair", "Nature of the instrument (1)", "Artisanal and small-scale gold mining (4)",
                     "Offers", "Brazil (BRA)", "World Coal Power Association (WCPA)", "Edit the whole document"):  # fmt: skip
            expect(sections.get_by_role("link", name=name, exact=True)).to_be_visible()
        shot("basics")

        # One role's section: a text area of normal size, in a monospace font, typed into in seconds.
        sections.get_by_role("link", name="Brazil (BRA)").click()
        expect(page.locator("label[for=id_text]")).to_have_text("Roles: Brazil (BRA) (YAML):")
        text = area.input_value()
        assert text.startswith("id: BRA\nname: Brazil\n") and "id: CAN" not in text and len(text) < 25_000
        box = area.bounding_box()
        assert box is not None and box["height"] <= 0.75 * 900  # it scrolls inside, the page does not
        assert "mono" in area.evaluate("el => getComputedStyle(el).fontFamily").lower()
        started = time.monotonic()
        area.click()
        area.press("Control+Home")
        area.press("ArrowDown")
        area.press("End")
        area.press_sequentially(" (Federative Republic)")
        typed = time.monotonic() - started
        assert typed < 10, f"typing into a role's section took {typed:.1f} s"
        assert area.input_value().startswith("id: BRA\nname: Brazil (Federative Republic)\n")
        page.click("input[name=_continue]")
        expect(page.locator("ul.messagelist")).to_contain_text("was changed successfully")
        brazil = "Brazil (Federative Republic) (BRA)"  # its new name names its section now
        expect(page.locator("label[for=id_text]")).to_have_text(f"Roles: {brazil} (YAML):")  # still there
        expect(page.locator(".field-changes")).to_contain_text("+  name: Brazil (Federative Republic)")
        assert area.input_value() == text.replace("name: Brazil\n", "name: Brazil (Federative Republic)\n", 1)
        shot("role")

        # An invalid edit: the error names the section and the field; nothing is stored.
        area.fill(area.input_value().replace("influence: 0.8", "influence: 8", 1))
        page.click("input[name=_continue]")
        expect(page.locator(".errornote")).to_be_visible()
        expect(page.locator(".field-text .errorlist")).to_contain_text(
            f"Roles: {brazil} — roles[BRA].influence: Input should be less than or equal to 1"
        )
        shot("role-error")
        page.goto(page.url)  # the saved draft again: the earlier edit, not the refused one
        expect(page.locator(".field-changes")).not_to_contain_text("influence: 8")

        # A search across every section: counts beside each, and the section opened on its first match.
        page.fill("#draft-find", "garimpeiros")
        page.click("nav.draft-sections button:has-text('Find')")
        expect(page.locator(".draft-found")).to_contain_text("found")
        shot("find")
        sections.get_by_role("link", name=brazil).click()
        chosen = area.evaluate("el => el.value.slice(el.selectionStart, el.selectionEnd)")
        assert chosen.lower() == "garimpeiros"
        assert area.evaluate("el => el.scrollTop") > 0  # scrolled to it inside the text area
        shot("find-section")

        # The whole document is still there for those who want it.
        sections.get_by_role("link", name="Edit the whole document").click()
        expect(page.locator("label[for=id_text]")).to_have_text("Scenario (YAML):")
        assert "id: WCPA" in area.input_value()
        shot("whole")

        # The forms editor: a table of contents, one part's fields at a time.
        sections.get_by_role("link", name="Scenario basics").click()
        page.click("text=Edit briefs, options and stances in forms")
        toc = page.locator("nav.scenario-parts")
        for name in ("Scenario", "Issues", brazil, "Stances", "Chair"):
            expect(toc.get_by_role("link", name=name, exact=True)).to_be_visible()
        assert page.locator("form.scenario-fields").locator("input:visible, textarea, select").count() < 10
        shot("forms-first")
        toc.get_by_role("link", name=brazil).click()
        expect(page.locator("form.scenario-fields h2")).to_have_text(f"Delegations: {brazil}")
        assert page.locator("form.scenario-fields textarea").count() < 20
        assert page.evaluate("document.documentElement.scrollHeight") < 4_000
        page.get_by_label("Public brief").fill("Brazil speaks for the Amazon's artisanal miners.")
        page.click("input[value='Save this part']")
        expect(page.locator("ul.messagelist")).to_contain_text("saved. Publish it for new games to use it.")
        expect(page.get_by_label("Public brief")).to_have_value(
            "Brazil speaks for the Amazon's artisanal miners."
        )
        shot("forms-part")
        toc.get_by_role("link", name="Stances").click()
        expect(page.locator("table.scenario-grid")).to_be_visible()
        shot("forms-stances")
        page.goto(page.url.replace("/fields/?part=stances", "/preview/"))
        shot("preview")

        # Rehearsed and published; the rehearsal's game in the games admin.
        page.goto(f"{server}/admin/simulations/scenariodraft/")
        page.check("input[name=_selected_action]")
        page.select_option("select[name=action]", "rehearse_drafts")
        page.click("button[name=index]")
        expect(page.locator("ul.messagelist")).to_contain_text("rehearsed to the end", timeout=180_000)
        shot("rehearsed")
        page.check("input[name=_selected_action]")
        page.select_option("select[name=action]", "publish_drafts")
        page.click("button[name=index]")
        expect(page.locator("ul.messagelist")).to_contain_text("published as mercury v2")
        shot("published")
        page.goto(f"{server}/admin/simulations/game/")
        shot("games")
        page.locator("table#result_list tbody th a").first.click()
        expect(page.locator("h1")).to_contain_text("View game")
        shot("game")
        browser.close()
    shot.assert_accessible()
