"""The review's preference bars agree with every ballot (#69: Brazil's bar showed 2.2 to the end of the game with no
mark, yet Brazil voted YES on 2.1). Whole games of both scenarios, from several seeds and seats: for every country
and every issue, the chart's row ends, on the vote's line, in a mark that is the country's ballot on the proposal
and says whether the proposal was the option its bar shows there (its preference) or one it could accept (a
compromise); the page draws the same marks."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from simulations.kinds.negotiation import review_pictures
from simulations.kinds.negotiation.games import scenario_of_version, state_of
from simulations.models import Event, Game
from tests.helpers import played
from tests.kinds.negotiation.plastics import played_plastics

# What whole games say and show, the same on any database: the embedded leg only (tests/conftest.py).
pytestmark = [pytest.mark.django_db, pytest.mark.content]

GAMES = [
    ("mercury", "EU", "advocate", 11),  # China comes to prefer 1.1 before issue 1's vote
    ("mercury", "BRA", "passive", 3),  # Brazil, the student, votes NO on issue 4
    (
        "mercury",
        "AMAP",
        "advocate",
        4,
    ),  # an observer plays: every country is an AI seat; China votes NO on 2.1
    ("plastics", "FJI", "advocate", 2),  # Saudi Arabia prefers 1.3 and votes YES on 1.2
    ("plastics", "SAU", "passive", 5),  # every proposal rejected
    ("plastics", "GPIC", "passive", 3),
]
TEXTS = {"preferred": "YES, its preference", "compromise": "YES, a compromise", "no": "NO"}
FIGURE = re.compile(r'<figure class="stance-chart" data-issue="([^"]+)">(.*?)</figure>', re.S)
VOTE_LINE = re.compile(r'<line class="vote-line" x1="([\d.]+)"')
MARK = re.compile(
    r'<g class="ballot-mark (\w+) [\w-]*" data-seat="(\w+)" data-vote="(\w*)" data-option="([\d.]*)"'
    r' data-preferred="(yes|no)"><title>[^<]*</title><circle cx="([\d.]+)"'
)


def _review(game: Game) -> str:
    owner = User.objects.create_user("reviewer", password="pw-123456789")
    Game.objects.filter(pk=game.pk).update(owner=owner)
    client = Client()
    client.force_login(owner)
    response = client.get(f"/games/{game.pk}/review/")
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize(
    ("slug", "role", "human", "seed"), GAMES, ids=[f"{g[0]}-{g[1]}-{g[3]}" for g in GAMES]
)
def test_every_ballot_is_the_last_mark_of_its_row(slug: str, role: str, human: str, seed: int) -> None:
    game = played(role, human=human, seed=seed) if slug == "mercury" else played_plastics(role, human, seed)
    scenario, state = scenario_of_version(game.scenario), state_of(game)
    assert state.round3.issues and all(i.adopted is not None for i in state.round3.issues)
    events = [
        (seq, to, list(changes))
        for seq, to, changes in Event.objects.filter(game=game).order_by("seq").values_list("seq", "to_state", "stance_changes")
    ]  # fmt: skip
    withdrawn = {
        (c["role"], c["issue"], c["after"]) for _, _, cs in events for c in cs if c["field"] == "withdrawn"
    }
    charts = {c.issue_id: c for c in review_pictures.stance_charts(scenario, state, events)}
    drawn = {}
    for issue_id, svg in FIGURE.findall(_review(game)):
        (vote_line,) = VOTE_LINE.findall(svg)
        for shape, seat, vote, option, preferred, cx in MARK.findall(svg):
            assert cx == vote_line  # on the vote's line
            drawn[(issue_id, seat)] = (shape, vote, option, preferred == "yes")
    for issue in state.round3.issues:
        chart, proposal = charts[issue.issue_id], issue.proposal
        assert chart.vote is not None and chart.vote.x == chart.plot_right
        assert [r.seat for r in chart.rows] == scenario.countries
        for row in chart.rows:
            country, ballot = row.seat, row.ballot
            assert ballot is not None, (issue.issue_id, country)
            cast = issue.ballots.get(country, "") if country in scenario.voters else ""
            assert country not in scenario.voters or cast in ("yes", "no")
            assert (ballot.vote, ballot.option) == (cast, proposal), (issue.issue_id, country)
            # The last mark: where the bar ends, on the vote's line, after every other mark of the row.
            assert ballot.x == chart.plot_right and all(m.x < ballot.x for m in row.accepted)
            assert row.segments[-1].x + row.segments[-1].width == pytest.approx(ballot.x)
            # Its preference or a compromise: the colour the bar shows at the vote, and for an AI seat the
            # chair's count of who preferred the proposal when it was made.
            assert row.segments[-1].option == row.preferred
            assert ballot.preferred == (row.preferred == proposal)
            if country != state.human_role:
                assert ballot.preferred == (country in issue.supporters), (issue.issue_id, country)
                if cast == "yes":  # an AI seat says yes only to an option it can accept
                    acceptable = state.stances[country][issue.issue_id].acceptable
                    assert proposal in acceptable or (country, issue.issue_id, proposal) in withdrawn
            if cast:
                assert ballot.text == TEXTS[ballot.shape]
                assert ballot.shape == (
                    "no" if cast == "no" else "preferred" if ballot.preferred else "compromise"
                )
            assert drawn[(issue.issue_id, country)] == (ballot.shape, cast, proposal, ballot.preferred)
    assert len(drawn) == len(state.round3.issues) * len(scenario.countries)
