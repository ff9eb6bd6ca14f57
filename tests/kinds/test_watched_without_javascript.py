"""A game started from its kind's set-up form and watched without JavaScript (no websocket: plain page loads)
reaches its end: the set-up queues the background drive, and the page reloads itself while the AI plays (a
refresh inside <noscript>), never while the person has the floor. Real parts: django-tasks' database queue, the
embedded worker threads, the offline model."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from simulations.driving.embedded import start_embedded_workers
from simulations.models import Game, ScenarioVersion
from simulations.services.content.scenarios import load_scenarios, parsed_scenario

pytestmark = [pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]
REFRESH = re.compile(r'<noscript><meta http-equiv="refresh" content="(\d+)"></noscript>')


def _set_up(kind: str, version: ScenarioVersion) -> dict[str, Any]:
    """The set-up form of a game the AI plays to its end alone, kept small."""
    scenario = parsed_scenario(version)
    if kind == "deliberation":
        return {"source": "sample", "sample": scenario.samples[0].id, "seat": ""}
    if kind == "message_lab":
        d = scenario.defaults
        return {"brief": scenario.briefs[0].id, "rounds": 1, "participants": d.participants,
                "moderator": d.moderator or "", "evaluator": d.evaluator or "", "parallel": 1}  # fmt: skip
    return {"agents": 5, "max_rounds": 3, "checkpoint_frequency": 1}  # the social feed


@pytest.mark.parametrize("kind", ["deliberation", "message_lab", "social_feed"])
def test_a_game_started_and_watched_without_javascript_reaches_its_end(kind: str) -> None:
    version = next(v for v, _ in load_scenarios(path=ROOT / "scenarios" / kind) if v.kind == kind)
    client = Client()
    client.force_login(User.objects.create_user("watcher", password="a-long-test-passphrase-42"))
    start_embedded_workers(count=1)  # the server's own worker; no page connects a websocket here
    started = client.post(f"/{kind}/new/{version.pk}/", _set_up(kind, version))
    assert started.status_code == 302, started.content.decode()[:500]
    url = started["Location"]
    refreshed, deadline = 0, time.monotonic() + 90
    while not Game.objects.get(pk=int(url.strip("/").split("/")[-1])).finished_at:
        assert time.monotonic() < deadline, f"the {kind} did not reach its end without a page driving it"
        page = client.get(url).content.decode()
        refreshed += bool(REFRESH.search(page))
        time.sleep(0.1)
    assert refreshed, "the page never reloaded itself while the AI played"
    assert not REFRESH.search(client.get(url).content.decode())  # the end: nothing more to watch


def test_the_page_never_reloads_itself_while_the_person_has_the_floor() -> None:
    version = next(v for v, _ in load_scenarios(path=ROOT / "scenarios" / "mercury"))
    client = Client()
    client.force_login(User.objects.create_user("student", password="a-long-test-passphrase-42"))
    opened = client.post("/games/new/", {"scenario": version.slug}, follow=True)
    assert opened.status_code == 200 and "Choose your delegation" in opened.content.decode()
    assert not REFRESH.search(opened.content.decode())  # the student chooses a seat: nothing to wait for
