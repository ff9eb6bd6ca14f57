"""The written debrief never contradicts itself nor the game (issue #66): over whole offline games from several
seats, seeds and student bots, every claim it makes is checked against the game's records (votes, ballots,
stance changes), and against the review's summary card, which counts from the same facts."""

from __future__ import annotations

import re

import pytest

from simulations.kinds.negotiation.games import scenario_of_version
from simulations.kinds.negotiation.review_page import at_a_glance
from simulations.models import Event, Game, TranscriptEntry, Vote
from tests.helpers import played

pytestmark = [pytest.mark.django_db, pytest.mark.content]

SEATS = ["BRA", "CAN", "CHN", "EU", "TZA", "USA", "AMAP", "MFF", "WCPA"]
GAMES = [
    (SEATS[(2 * n) % 9], bot, seed) for n, seed in enumerate(range(1, 7)) for bot in ("passive", "advocate")
]
_ISSUE = re.compile(r"^### Issue (\d+): .*$", re.M)


def _sections(text: str) -> dict[int, str]:
    """Issue number -> that issue's section of the debrief."""
    out = {}
    for match in _ISSUE.finditer(text):
        rest = text[match.end() :]
        out[int(match.group(1))] = rest.split("\n### ", 1)[0]
    return out


def _names_in(listing: str) -> set[str]:
    parts = re.split(r", | and ", listing)
    return {p.strip().removeprefix("the ").strip() for p in parts if p.strip()}


@pytest.mark.parametrize(("role", "bot", "seed"), GAMES)
def test_the_written_debrief_agrees_with_the_game(role: str, bot: str, seed: int) -> None:
    game = played(role, human=bot, seed=seed)
    game = Game.objects.get(pk=game.pk)
    text = game.state["summary"]
    assert text, "the offline debrief was written"
    scenario = scenario_of_version(game.scenario)
    votes = {int(v.issue): v for v in Vote.objects.filter(game=game)}
    total = len(votes)

    # No false precision: the pressure model's numbers are never quoted.
    assert "%" not in text and "of the way" not in text.replace("part of the way", "")

    # The overview's count of aims met is the count of issues whose section says the aim was met.
    sections = _sections(text)
    assert sorted(sections) == sorted(votes)
    met = [n for n, body in sections.items() if "Your aim was met." in body]
    if met:
        assert f"Your aim was adopted on {len(met)} of {total} issue" in text
    else:
        assert f"None of your aims was adopted on the {total} issue" in text
    if "Every aim was met" in text:
        assert len(met) == total
    assert at_a_glance(game)["aims_met"] == len(met)

    # The committee's decisions, and each issue's proposal, outcome and who voted no, as recorded.
    adopted = sum(1 for v in votes.values() if v.adopted)
    assert f"The committee adopted {adopted} of {total} proposal" in text
    for number, vote in votes.items():
        body = sections[number]
        assert f"The chair proposed {vote.proposal} (" in body
        if vote.adopted:
            assert "it was adopted unanimously" in body and "voted no" not in body.split("\n")[1]
        else:
            said = re.search(r"it was rejected: (.+?) voted no\.", body)
            assert said, body
            no = {
                "you" if r == role else scenario.display_name(r) for r, b in vote.ballots.items() if b == "no"
            }
            assert _names_in(said.group(1)) == no, (said.group(1), no)
        wanted = re.search(r"You wanted (\S+) \(", body)
        assert wanted, body
        aim_met = wanted.group(1) == vote.proposal and vote.adopted
        assert ("Your aim was met." in body) == aim_met, body

    # "Your influence" says nothing moved exactly when no stance change names a student's message as its cause.
    own = set(
        TranscriptEntry.objects.filter(game=game, speaker=role, kind__in=("message", "speech")).values_list(
            "seq", flat=True
        )
    )
    causes = {
        c["cause_seq"]
        for changes in Event.objects.filter(game=game).values_list("stance_changes", flat=True)
        for c in changes
        if c["field"] in ("acceptable", "preferred")
    }
    assert ("None of your messages changed a delegation's position." in text) == (not own & causes)
