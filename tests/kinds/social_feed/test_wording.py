"""What a person reads of a social-feed run (presenters.py and the templates, export.markdown): every agent state,
run status and event in words, never its id; counts that agree with their number ("1 reshare"); both charts with
their axes titled in words and their keys coloured by SVG fills, never an inline style (the CSP blocks those)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from simulations.kinds import get_kind
from simulations.kinds.social_feed import presenters
from simulations.kinds.social_feed.config import SCENARIO_ROOT
from simulations.kinds.social_feed.entities import AgentState
from simulations.kinds.social_feed.headless import play_headless
from simulations.kinds.social_feed.machine import Event, Status
from simulations.models import ScenarioVersion
from simulations.services.content.scenarios import store_scenario
from simulations.services.ledger.turns import create_game
from tests.kinds.visible_text import names_in, visible

pytestmark = pytest.mark.django_db(transaction=True)
IDS = [*AgentState, *Status, *Event]  # the machine's own names: a person reads none of them
NOUNS = "posts?|likes?|repl(?:y|ies)|reshares?|agents?|rounds?|calls?|decisions?"


def ids_in(text: str) -> list[str]:
    return names_in(text, IDS)


def disagreeing_counts(text: str) -> list[str]:
    """ "1 reshares", "2 reply": a count whose noun does not agree with it."""
    found = re.findall(rf"(?<![\w.,])(\d+) ({NOUNS})\b", text)
    return [f"{n} {noun}" for n, noun in found if (n == "1") != (noun in presenters.NOUNS)]


@pytest.fixture
def town() -> ScenarioVersion:
    kind = get_kind("social_feed")
    [source] = kind.scenarios.read(SCENARIO_ROOT / "town-square.yaml")
    return store_scenario(kind=kind, source=source, origin="tests")[0]


@pytest.mark.parametrize(("n", "noun", "words"), [(0, "reshare", "0 reshares"), (1, "reshare", "1 reshare"),
                                                  (1, "reply", "1 reply"), (2, "reply", "2 replies"),
                                                  (1, "agent", "1 agent"), (1, "round", "1 round")])  # fmt: skip
def test_a_count_agrees_with_its_number(n: int, noun: str, words: str) -> None:
    assert presenters.count(n, noun) == words and not disagreeing_counts(words)


def test_every_state_and_status_has_its_words() -> None:
    assert set(presenters.STATE_WORDS) == set(AgentState) and set(presenters.STATUS_WORDS) == set(Status)
    assert not ids_in(" ".join([*presenters.STATE_WORDS.values(), *presenters.STATUS_WORDS.values()]))


def test_a_finished_run_reads_in_words_with_labelled_charts(town: ScenarioVersion) -> None:
    owner = User.objects.create_user("teacher", password="a-long-test-passphrase-42")
    game = play_headless(create_game(scenario_version=town, seed=4, owner=owner, options={
        "agents": 30, "max_rounds": 12, "checkpoint_frequency": 3, "started_at": "2026-11-24T00:00:00+00:00"}))  # fmt: skip
    client = Client()
    client.force_login(owner)
    page = client.get(f"/games/{game.pk}/").content.decode()
    review = client.get(f"/games/{game.pk}/review/").content.decode()
    markdown = client.get(f"/games/{game.pk}/export.md").content.decode()
    for name, html in (("page", page), ("review", review)):
        text = visible(html)
        assert not ids_in(text), (name, ids_in(text))
        assert not disagreeing_counts(text), (name, disagreeing_counts(text))
        assert 'data-state="ENGAGING_LIKE"' in html  # the ids stay for scripts and tests
        for chart in re.findall(r'<svg class="feed-chart.*?</svg>', html, re.S):
            titles = re.findall(r'class="axis-title [xy]-title"[^>]*>([^<]+)<', chart)
            assert titles[0] == "Round" and titles[1] in (
                "Agents (share)",
                "Count",
                "Actions in the round",
            ), titles
            assert re.search(r'class="tick y-tick"[^>]*>0%?<', chart)  # the y axis's scale is shown
        keys = re.findall(r'<ul class="legend">.*?</ul>', html, re.S)
        charts = 3 if name == "review" else 2  # the results add what the agents did in each round
        assert len(keys) == charts and all("style=" not in k for k in keys)
        assert all(re.search(r'<rect [^>]*fill="#[0-9a-f]{6}"', k) for k in keys)
        assert "style=" not in "".join(re.findall(r"<svg.*?</svg>", html, re.S))
    assert "Finished · round 12 of 12 · 36 agents" in visible(page)  # 30 generated and the 6 listed
    assert not ids_in(markdown) and not disagreeing_counts(markdown) and "finished" in markdown
