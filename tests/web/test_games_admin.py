"""The games admin, read only: filters by kind and scenario, a link to each review, and the files a teacher takes
away for a class (every selected game's export, and the outcomes per issue as CSV)."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import pytest
from django.test import Client

from simulations.models import Game, Vote
from tests.helpers import played

pytestmark = pytest.mark.django_db
GAMES = "/admin/simulations/game/"


@pytest.fixture
def games() -> list[Game]:
    return [played("EU", "advocate", seed=2), played("TZA", "passive", seed=3)]


def test_filters_and_review_links(admin_client: Client, games: list[Game]) -> None:
    page = admin_client.get(GAMES, {"scenario__kind": "negotiation"}).content.decode()
    assert all(f'href="/games/{g.pk}/review/"' in page for g in games)
    assert "0 games" in admin_client.get(GAMES, {"scenario__kind": "deliberation"}).content.decode()
    page = admin_client.get(GAMES, {"human_role": "TZA"}).content.decode()
    assert (
        f'href="/games/{games[1].pk}/review/"' in page and f'href="/games/{games[0].pk}/review/"' not in page
    )


def test_outcomes_per_issue_as_csv(admin_client: Client, games: list[Game]) -> None:
    response = admin_client.post(
        GAMES, {"action": "download_outcomes", "_selected_action": [g.pk for g in games]}
    )
    assert response["Content-Disposition"] == 'attachment; filename="outcomes.csv"'
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    votes = list(Vote.objects.filter(game__in=games).order_by("game_id", "id"))
    assert len(rows) == len(votes) == 8  # four issues in each game
    for row, vote in zip(rows, votes, strict=True):
        assert (int(row["game"]), row["issue"], row["proposal"]) == (vote.game_id, vote.issue, vote.proposal)
        assert row["adopted"] == ("yes" if vote.adopted else "no")
        assert row["seat_ballot"] == vote.ballots[row["seat"]]
        assert int(row["yes"]) + int(row["no"]) == len(vote.ballots)


def test_exports_of_the_selected_games_zipped(admin_client: Client, games: list[Game]) -> None:
    response = admin_client.post(
        GAMES, {"action": "download_exports", "_selected_action": [g.pk for g in games]}
    )
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        assert sorted(archive.namelist()) == sorted(f"game-{g.pk}.json" for g in games)
        exported = json.loads(archive.read(f"game-{games[0].pk}.json"))
    assert exported["game"]["id"] == games[0].pk and exported["game"]["human_role"] == "EU"
