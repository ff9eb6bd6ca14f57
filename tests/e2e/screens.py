"""Screenshots for people reading a failed run (test-artifacts/): taken once the page has loaded, retried once.

A screenshot is evidence, not an assertion: Chromium sometimes refuses one while a navigation is still settling on
a loaded machine ("Unable to capture screenshot"), and that must not fail a test whose page is right."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


def screenshot(page: Any, path: Path) -> None:
    from playwright.sync_api import Error

    for attempt in (1, 2):
        try:
            page.wait_for_load_state("load")
            page.screenshot(path=str(path), full_page=False)
            return
        except Error as exc:
            if attempt == 2:
                print(f"screenshot {path.name} not taken: {exc.message.splitlines()[0]}", file=sys.stderr)
            else:
                page.wait_for_timeout(500)
