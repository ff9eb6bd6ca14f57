"""Results that explain themselves (reading.py, presenters.py, export.rounds_csv, pages.rounds_csv): a finished
run's results page reads in words — charts titled and keyed in plain labels, no state id, counts agreeing with
their number — with a written reading of the run and the posts that spread most with who passed them on; each
round's numbers download as CSV from the kind's own URL, for whoever may read the run and nobody else."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from simulations.kinds import get_kind
from simulations.kinds.social_feed.config import SCENARIO_ROOT
from simulations.kinds.social_feed.entities import AgentState
from simulations.kinds.social_feed.games import state_of
from simulations.kinds.social_feed.headless import play_headless
from simulations.kinds.social_feed.machine import Event, Status
from simulations.kinds.social_feed.reading import per_round
from simulations.models import Game
from simulations.services.content.scenarios import store_scenario
from simulations.services.ledger.turns import create_game
from tests.kinds.visible_text import names_in, visible

pytestmark = pytest.mark.django_db(transaction=True)
IDS = [*AgentState, *Status, *Event]
NOUNS = r"posts?|likes?|repl(?:y|ies)|reshares?|agents?|rounds?|calls?|decisions?|actions?"
SINGULAR = {"post", "like", "reply", "reshare", "agent", "round", "call", "decision", "action"}


def disagreeing(text: str) -> list[str]:
    return [
        f"{n} {w}"
        for n, w in re.findall(rf"(?<![\w.,])(\d+) ({NOUNS})\b", text)
        if (n == "1") != (w in SINGULAR)
    ]


@pytest.fixture
def owner() -> User:
    return User.objects.create_user("owner", password="a-long-test-passphrase-42")


@pytest.fixture
def finished(owner: User) -> Game:
    kind = get_kind("social_feed")
    [source] = kind.scenarios.read(SCENARIO_ROOT / "town-square.yaml")
    version = store_scenario(kind=kind, source=source, origin="tests")[0]
    options = {"agents": 150, "max_rounds": 18, "checkpoint_frequency": 6, "ranking": "hot",
               "started_at": "2026-11-24T00:00:00+00:00"}  # fmt: skip
    return play_headless(create_game(scenario_version=version, seed=12, owner=owner, options=options))


def client_for(user: User | None) -> Client:
    c = Client()
    if user is not None:
        c.force_login(user)
    return c


def section(html: str, heading_id: str) -> str:
    found = re.search(rf'aria-labelledby="{heading_id}".*?</section>', html, re.S)
    assert found, heading_id
    return found.group(0)


def test_the_results_page_reads_in_words_and_explains_the_run(finished: Game, owner: User) -> None:
    html = client_for(owner).get(f"/games/{finished.pk}/review/").content.decode()
    text = visible(html)
    assert not names_in(text, IDS), names_in(
        text, IDS
    )  # no ENGAGING_LIKE, RESTING, ... anywhere a person reads
    assert not disagreeing(text), disagreeing(text)  # "1 reshare", never "1 reshares"
    for legend in re.findall(r'<ul class="legend">(.*?)</ul>', html, re.S):
        assert not names_in(visible(legend), IDS) and "_" not in visible(legend)
    charts = re.findall(r'<svg class="feed-chart (\w+)".*?</svg>', html, re.S)
    assert charts == ["states", "engagement", "activity"]
    for chart in re.findall(
        r'<svg class="feed-chart.*?</svg>', html, re.S
    ):  # every chart has both axes titled
        assert len(re.findall(r'class="axis-title [xy]-title"[^>]*>[A-Z][^<_]+<', chart)) == 2
    reading = visible(section(html, "reading-title"))
    assert "by engagement (hot)" in reading and "150" not in reading  # 150 generated + 6 listed: 156 agents
    assert "156 agents" in reading and "resting" in reading


def test_the_posts_that_spread_most_say_who_passed_them_on(finished: Game, owner: User) -> None:
    html = client_for(owner).get(f"/games/{finished.pk}/review/").content.decode()
    spread = section(html, "spread-title")
    posts = state_of(finished).simulation["posts"]
    names = {a["id"]: a["name"] for a in state_of(finished).simulation["agents"]}
    reshared: dict[str, list[str]] = {}
    for p in posts:
        if p["reshare_of"]:
            reshared.setdefault(p["reshare_of"], []).append(names[p["author"]])
    assert reshared, "the run reshared nothing"
    most = max(reshared, key=lambda pid: len(reshared[pid]))
    original = next(p for p in posts if p["id"] == most)
    shown = visible(spread)
    assert original["content"] in shown and "Passed on by " in shown
    assert reshared[most][0] in shown  # who passed it on, by name
    n = len(reshared[most])
    assert f"{n} reshare{'s' if n != 1 else ''}" in shown


def test_each_rounds_numbers_download_as_csv_for_who_may_read_the_run(finished: Game, owner: User) -> None:
    url = reverse("social_feed_rounds_csv", args=[finished.pk])
    assert (
        url in client_for(owner).get(f"/games/{finished.pk}/review/").content.decode()
    )  # linked from the results
    response = client_for(owner).get(url)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    header, body = rows[0], rows[1:]
    assert header[:6] == ["Round", "Likes", "Replies", "Reshares", "Posts of their own", "Agents who acted"]
    assert not names_in(" ".join(header), IDS) and "Resting" in header
    history = state_of(finished).history
    assert [int(r[0]) for r in body] == [h.round for h in history]
    # Each round's own numbers (not the running totals), which add up to the run's totals.
    assert (
        sum(int(r[1]) for r in body) == history[-1].likes
        and sum(int(r[3]) for r in body) == history[-1].reshares
    )
    assert [int(r[1]) for r in body] == [r.likes for r in per_round(history)]
    stranger = User.objects.create_user("stranger", password="a-long-test-passphrase-42")
    assert client_for(stranger).get(url).status_code in (403, 404)
    assert client_for(None).get(url).status_code in (302, 403, 404)
    assert (
        client_for(owner).get(reverse("social_feed_rounds_csv", args=[finished.pk + 999])).status_code == 404
    )
