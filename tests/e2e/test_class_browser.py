"""A class session in a real Chromium (issue #67, first step): a teacher opens a session, a student joins with the
code and waits, the teacher starts it, the student's waiting page offers their game without a reload, and the
teacher's room lists the student's game without a reload. axe-core finds nothing serious on the class pages."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.browser import (
    BROWSER_TEST,
    CHROMIUM,
    CHROMIUM_ARGS,
    MAKE_TEACHER,
    TEACHER_PASSWORD,
    serious_accessibility_violations,
    served,
    sign_up,
)

pytestmark = BROWSER_TEST
PASSWORD = TEACHER_PASSWORD


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with served(tmp_path, scenarios="scenarios/mercury", token_delay="0", shell=MAKE_TEACHER) as url:
        yield url


def test_a_teacher_opens_a_session_a_student_joins_and_both_pages_follow_without_a_reload(
    server: str,
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        teacher = browser.new_context().new_page()
        teacher.set_default_timeout(30_000)
        teacher.goto(f"{server}/accounts/login/")
        teacher.fill("#id_username", "teacher1")
        teacher.fill("#id_password", PASSWORD)
        teacher.click("button[type=submit]")
        teacher.click("text=Class sessions")
        teacher.click("text=Open a new session")
        assert not serious_accessibility_violations(teacher)
        teacher.fill("#title", "Seminar B")
        teacher.click("text=Open the session")
        expect(teacher.locator("h1")).to_have_text("Seminar B")
        code = teacher.locator(".join-code code").inner_text()
        assert re.fullmatch(r"[A-Z2-9]{6}", code)
        expect(teacher.locator("#roster")).to_contain_text("Nobody has joined yet")

        student = browser.new_context().new_page()
        student.set_default_timeout(30_000)
        sign_up(student, server, username="ada")
        student.click("text=Join a class")
        assert not serious_accessibility_violations(student)
        student.fill("#code", code.lower())
        student.click("button:has-text('Join')")
        expect(student.get_by_role("status")).to_contain_text("You are in")
        assert not serious_accessibility_violations(student)

        expect(teacher.locator("#roster")).to_contain_text("ada")  # the room follows without a reload
        assert not serious_accessibility_violations(teacher)
        teacher.click("text=Start the session")
        student.get_by_role("button", name="Start your game").click()  # appears without a reload
        expect(student.locator("body")).to_contain_text("Choose your delegation")
        expect(teacher.locator("#roster")).to_contain_text("Choose your delegation")  # where the game stands
        browser.close()
