"""End to end in a real browser: a scenario editor clones a version in Django admin, edits the draft (a schema
error first, shown beside the editor; then a brief in the forms editor), publishes it, and plays the new version
from the lobby.

Same harness as the other browser tests (tests/e2e/browser.py); run apart with
`pytest -m browser tests/e2e/test_admin_browser.py`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.browser import ARTIFACTS, BROWSER_TEST, CHROMIUM, CHROMIUM_ARGS, screenshot, served

pytestmark = BROWSER_TEST
PASSWORD = "a-long-test-passphrase-42"
MAKE_EDITOR = (
    "from django.contrib.auth.models import Group, User; "
    f"u = User.objects.create_user('editor1', password='{PASSWORD}', is_staff=True); "
    "u.groups.add(Group.objects.get(name='Scenario editors'))"
)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with served(tmp_path, scenarios="scenarios/deliberation", token_delay="0", shell=MAKE_EDITOR) as url:
        yield url


def test_an_editor_publishes_a_draft_and_it_is_played_from_the_lobby(server: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(30_000)

        def shot(name: str) -> None:
            screenshot(page, ARTIFACTS / f"admin-{name}.png")

        page.goto(f"{server}/admin/login/")
        page.fill("#id_username", "editor1")
        page.fill("#id_password", PASSWORD)
        page.click("input[type=submit]")

        # Clone the loaded version into a draft.
        page.goto(f"{server}/admin/simulations/scenarioversion/")
        page.check("input[name=_selected_action]")
        page.select_option("select[name=action]", "clone_versions")
        page.click("button[name=index]")
        expect(page.locator("ul.messagelist")).to_contain_text("Draft of code-review v1 created")

        page.goto(f"{server}/admin/simulations/scenariodraft/")
        page.click("table#result_list a:has-text('code-review')")
        yaml_text = page.locator("#id_text").input_value()
        assert "title: Code review committee" in yaml_text

        # A schema error is shown beside the editor, and nothing is saved.
        broken = yaml_text.replace("confidence_threshold: 0.5", "confidence_threshold: 5", 1)
        page.fill("#id_text", broken)
        page.click("input[name=_continue]")
        expect(page.locator("#id_text_error, .errorlist")).to_contain_text("confidence_threshold")
        shot("error")

        page.fill(
            "#id_text", yaml_text.replace("title: Code review committee", "title: Friday code review", 1)
        )
        page.click("input[name=_continue]")
        expect(page.locator("ul.messagelist")).to_contain_text("was changed successfully")
        expect(page.locator(".field-changes")).to_contain_text("+title: Friday code review")
        shot("draft")

        # The same draft in the forms editor: a persona's brief changed in its own field.
        page.click("text=Edit briefs, options and stances in forms")
        expect(page.locator("h1")).to_contain_text("Edit code-review")
        brief = page.get_by_label("Brief").first
        brief.fill("Reads every diff twice and asks for tests.")
        page.click("input[value='Save the draft']")
        expect(page.locator("ul.messagelist")).to_contain_text("saved. Publish it for new games to use it.")
        expect(page.get_by_label("Brief").first).to_have_value("Reads every diff twice and asks for tests.")
        shot("forms")

        page.goto(f"{server}/admin/simulations/scenariodraft/")
        page.check("input[name=_selected_action]")
        page.select_option("select[name=action]", "publish_drafts")
        page.click("button[name=index]")
        expect(page.locator("ul.messagelist")).to_contain_text("published as code-review v2")

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
        shot("played")
        browser.close()
