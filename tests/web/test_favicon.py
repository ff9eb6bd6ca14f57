"""The site's icon: every page links it, and a browser that asks for /favicon.ico anyway is sent to it (no 404)."""

from __future__ import annotations

import re

import pytest
from django.test import Client


@pytest.mark.django_db
def test_favicon_ico_leads_to_the_icon() -> None:
    response = Client().get("/favicon.ico")
    assert response.status_code == 302 and response["Location"].endswith("mercury/favicon.svg")
    icon = Client().get(response["Location"])
    body = b"".join(icon.streaming_content)  # type: ignore[attr-defined]
    assert icon.status_code == 200 and icon["Content-Type"].startswith("image/svg+xml") and b"<svg" in body


@pytest.mark.django_db
def test_every_page_links_the_icon() -> None:
    page = Client().get("/accounts/login/").content.decode()  # base.html, as every page
    link = re.search(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">', page)
    assert link and link.group(1).endswith("mercury/favicon.svg")
