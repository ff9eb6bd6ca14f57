"""The review a teacher reads in a minute (#11): the summary card, the pictures and the folded transcript say what
the game's records say."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from simulations.kinds.negotiation import review_pictures
from simulations.kinds.negotiation.games import scenario_of_version, state_of
from simulations.models import Event, Game, TranscriptEntry
from tests.helpers import played

# What whole games say and show, the same on any database: the embedded leg only (tests/conftest.py).
pytestmark = [pytest.mark.django_db, pytest.mark.content]


def _review(game: Game, query: str = "") -> str:
    owner, _ = User.objects.get_or_create(username="reviewer")
    Game.objects.filter(pk=game.pk).update(owner=owner)
    client = Client()
    client.force_login(owner)
    response = client.get(f"/games/{game.pk}/review/{query}")
    assert response.status_code == 200
    return response.content.decode()


def test_the_summary_card_and_pictures_follow_the_records() -> None:
    game = played("CAN", human="advocate", seed=7)
    scenario, state = scenario_of_version(game.scenario), state_of(game)
    page = _review(game)
    glance = page.split('class="card glance"', 1)[1].split("</section>", 1)[0]
    rows = re.findall(r"<tr>\s*<th scope=\"row\">(\d)\. ", glance)
    assert rows == [str(n) for n in range(1, len(scenario.issues) + 1)]
    adopted = sum(1 for i in state.round3.issues if i.adopted)
    assert glance.count('<span class="yes">adopted</span>') == adopted
    assert page.count('<figure class="stance-chart" data-issue=') == len(scenario.issues)
    # The vote matrix holds every ballot cast.
    cast = sum(len(i.ballots) for i in state.round3.issues)
    assert len(re.findall(r'<td class="ballot (yes|no)">', page)) == cast
    # The transcript folds into Round 1, Round 2 and one part per issue.
    assert page.count('<details class="part">') == 2 + len(scenario.issues)
    # It prints only when asked: the box is ticked by the reader, or at once by `?transcript=1` (a link to share).
    assert '<input type="checkbox" id="print-transcript">' in page
    assert '<input type="checkbox" id="print-transcript" checked>' in _review(game, "?transcript=1")


def test_a_preference_change_is_drawn_where_it_happened() -> None:
    """Each issue's chart runs from the game's first event to the issue's vote: a change of preference before the
    vote starts a new colour where it happened; one after it is not drawn (it could not decide the ballot)."""
    game = played("EU", human="advocate", seed=11)  # China comes to prefer 1.1 before issue 1's vote
    scenario, state = scenario_of_version(game.scenario), state_of(game)
    events = [
        (seq, to, list(changes))
        for seq, to, changes in Event.objects.filter(game=game).order_by("seq").values_list("seq", "to_state", "stance_changes")
    ]  # fmt: skip
    charts = {c.issue_id: c for c in review_pictures.stance_charts(scenario, state, events)}
    votes = [
        seq
        for n, (seq, to, _) in enumerate(events)
        if to == "ISSUE_VOTE" and events[n - 1][1] != "ISSUE_VOTE"
    ]
    vote_of = {i.id: seq for i, seq in zip(scenario.issues, votes, strict=True)}
    preferred = [(seq, c) for seq, _, recorded in events for c in recorded if c["field"] == "preferred"]
    assert preferred
    for seq, change in preferred:
        chart, end = charts[change["issue"]], vote_of[change["issue"]]
        row = next(r for r in chart.rows if r.seat == change["role"])
        starts = {s.x: s.option for s in row.segments}
        x = round(chart.plot_left + (chart.plot_right - chart.plot_left) * seq / end, 2)
        assert starts.get(x) == (change["after"] if seq < end else None)
    for chart in charts.values():
        assert len(chart.rows) == len(scenario.countries)
        for row in chart.rows:
            assert row.segments[-1].option == row.preferred  # the last colour is the preference at the vote
            assert abs(sum(s.width for s in row.segments) - (chart.plot_right - chart.plot_left)) < 0.05


def test_names_are_wrapped_never_cut() -> None:
    """A name too long for its place wraps between words; only a word longer than a whole line is shortened."""
    lines = review_pictures.wrap("Arctic Monitoring and Assessment Programme", review_pictures.NET_LABEL)
    assert lines == ["Arctic Monitoring", "and Assessment", "Programme"]
    assert all(review_pictures.text_width(line) <= review_pictures.NET_LABEL for line in lines)
    assert review_pictures.wrap("Pneumonoultramicroscopicsilicovolcanoconiosis Council", 100) == [
        "Pneumonoultr…",
        "Council",
    ]


def test_the_talk_network_draws_the_students_talks_and_the_requests_left() -> None:
    game = played("CAN", human="advocate", seed=7)
    scenario, state = scenario_of_version(game.scenario), state_of(game)
    private = list(
        TranscriptEntry.objects.filter(game=game, visibility="private").values_list("speaker", "audience")
    )
    network = review_pictures.talk_network(scenario, state, [(s, list(a)) for s, a in private])
    talks = [e for e in network["edges"] if not e.declined]
    assert sorted(e.label.split(":")[0] for e in talks) == sorted(
        f"{scenario.display_name('CAN')} and {scenario.display_name(c.partner)}"
        if c.partner > "CAN" else f"{scenario.display_name(c.partner)} and {scenario.display_name('CAN')}"
        for c in state.round2.conversations
    )  # fmt: skip
    partners = {c.partner for c in state.round2.conversations}
    declined = [r for r in state.round2.requests if r not in partners]
    assert len([e for e in network["edges"] if e.declined]) == len(declined)
    assert sum(e.messages for e in talks) == sum(1 for s, _ in private if s != scenario.chair.id)
