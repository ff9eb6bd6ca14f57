"""Two students in one negotiation, in a real Chromium (issue #67): a teacher opens a session of groups of two with
a turn limit; two students join with their names only; the teacher starts it and the room follows live; each
student's page shows their own seat, and a move one of them makes shows on the other's page without a reload.
Their bots then play them to the second student's turn (tests/e2e/group_forward.py, as if they had); that
student closes the tab, and after the limit the seat's AI stand-in plays the turn. Played to the end, both read
their reviews and the teacher's results list the game with both students."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.browser import (
    BROWSER_TEST,
    CHROMIUM,
    CHROMIUM_ARGS,
    MAKE_TEACHER,
    ROOT,
    TEACHER_PASSWORD,
    screenshot,
    served,
)

pytestmark = BROWSER_TEST
PASSWORD = TEACHER_PASSWORD
TURN_SECONDS = 20  # the form's least


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with served(tmp_path, scenarios="scenarios/mercury", token_delay="0", shell=MAKE_TEACHER) as url:
        yield url


def _forward(tmp_path: Path, game_id: int, seat: str = "") -> str:
    """The bots play the game on the server's database until `seat` must move (or to the end)."""
    env = os.environ | {
        "MERCURY_SQLITE_PATH": str(tmp_path / "e2e.sqlite3"), "MERCURY_OFFLINE_TOKEN_DELAY": "0",
        "DJANGO_SETTINGS_MODULE": "mercury.settings", "MERCURY_DEBUG": "true", "MERCURY_BROADCAST": "false",
        "MERCURY_FORWARD_GAME": str(game_id), "MERCURY_FORWARD_SEAT": seat,
    }  # fmt: skip
    env.pop("DATABASE_URL", None)
    script = f"exec(open({str(Path(__file__).with_name('group_forward.py'))!r}).read())"
    done = subprocess.run([sys.executable, str(ROOT / "manage.py"), "shell", "-c", script], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_two_students_share_a_negotiation_the_room_follows_and_a_closed_tab_is_stood_in_for(
    server: str, tmp_path: Path
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        teacher = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        teacher.set_default_timeout(30_000)
        teacher.goto(f"{server}/accounts/login/")
        teacher.fill("#id_username", "teacher1")
        teacher.fill("#id_password", PASSWORD)
        teacher.click("button[type=submit]")
        teacher.goto(f"{server}/classes/new/")
        teacher.fill("#title", "Pairs")
        teacher.fill("#max-students", "2")
        teacher.fill("#per-game", "2")
        teacher.fill("#turn-seconds", str(TURN_SECONDS))
        teacher.click("text=Open the session")
        expect(teacher.locator("h1")).to_have_text("Pairs")
        code = teacher.locator(".join-code code").inner_text()

        students = {}
        for name in ("Ada", "Bo"):
            page = browser.new_context().new_page()
            page.set_default_timeout(30_000)
            page.goto(f"{server}/join/{code}/")
            page.fill("#name", name)
            page.click("button:has-text('Join')")
            expect(page.get_by_role("status")).to_contain_text("You are in")
            expect(teacher.locator("#roster")).to_contain_text(f"{name} (name only)")  # live, no reload
            students[name] = page
        teacher.click("text=Start the session")
        seats = {}
        for name, page in students.items():
            page.get_by_role("button", name="Back to your game").click()
            expect(page.locator(".you strong")).not_to_be_empty()
            seats[name] = page.locator(".you strong").inner_text()
        assert seats["Ada"] != seats["Bo"]
        game_id = int(re.search(r"/games/(\d+)/", students["Ada"].url).group(1))  # type: ignore[union-attr]
        expect(teacher.locator("#roster")).to_contain_text(f"#{game_id}")

        # Round 1: either student presents the next opening; the other's page shows it without a reload.
        before = students["Bo"].locator("#transcript .entry").count()
        students["Ada"].locator("button[data-auto-advance]").click()
        expect(students["Bo"].locator("#transcript .entry")).not_to_have_count(before)

        # The bots play both seats to Bo's next turn; Bo closes the tab and the limit passes.
        bo_seat = _seat_id(tmp_path, game_id, "Bo")
        _forward(tmp_path, game_id, bo_seat)
        students["Bo"].close()
        students["Ada"].reload()
        expect(students["Ada"].locator("#transcript")).to_contain_text(
            "(AI stand-in)", timeout=(TURN_SECONDS + 40) * 1000
        )

        expect(teacher.locator("#roster")).to_contain_text("Hand to the AI")  # the room: each seat, live
        if os.environ.get(
            "MERCURY_SCREENSHOTS"
        ):  # README's picture of the room (MERCURY_SCREENSHOTS=docs/screenshots)
            screenshot(teacher, Path(os.environ["MERCURY_SCREENSHOTS"]) / "class-room-laptop.png")
        assert _forward(tmp_path, game_id) == "REVIEW"
        students["Ada"].goto(f"{server}/games/{game_id}/review/")
        expect(students["Ada"].locator("h1")).to_contain_text(f"Review · game #{game_id}")
        expect(students["Ada"].locator("body")).to_contain_text("(AI stand-in)")
        teacher.goto(f"{server}/classes/")
        teacher.click("a:has-text('Pairs')")
        teacher.click("text=The class's results")
        expect(teacher.locator("table.games")).to_contain_text("Ada (name only)")
        expect(teacher.locator("table.games")).to_contain_text("Bo (name only)")
        expect(teacher.locator("figure.chart")).to_contain_text("of 1")
        browser.close()


def _seat_id(tmp_path: Path, game_id: int, name: str) -> str:
    import sqlite3

    with sqlite3.connect(tmp_path / "e2e.sqlite3") as rows:
        (seat,) = rows.execute(
            "SELECT s.role FROM simulations_gameseat s JOIN auth_user u ON u.id = s.student_id "
            "WHERE s.game_id = ? AND u.first_name = ?",
            (game_id, name),
        ).fetchone()
    return str(seat)
