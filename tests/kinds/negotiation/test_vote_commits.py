"""AI votes take no model call, so one commit casts a run of them (simulations/kinds/negotiation/platform.py:
`run`): each is still its own event by its own seat, and the student's vote, when it is their turn, is a commit of
its own between them."""

from __future__ import annotations

import pytest

from simulations.models import Checkpoint, Event, Game
from tests.helpers import played

pytestmark = pytest.mark.django_db

VOTE, HUMAN_VOTE = "AI_VOTE_COMMITTED", "HUMAN_VOTE_CAST"


def _commits(game: Game) -> list[list[tuple[str, str]]]:
    """Each committed step's events, (name, actor), in order."""
    events = list(Event.objects.filter(game=game).order_by("seq").values_list("seq", "name", "actor"))
    bounds = list(Checkpoint.objects.filter(game=game).order_by("seq").values_list("after_event", flat=True))
    commits, start = [], 0
    for end in bounds:
        commits.append([(name, actor) for seq, name, actor in events if start < seq <= end])
        start = end
    return commits


@pytest.mark.parametrize("role", ["EU", "AMAP"])  # a voting seat, and an NGO that does not vote
def test_a_run_of_ai_votes_is_one_commit_and_each_vote_keeps_its_seat(role: str) -> None:
    game = played(role, seed=3)
    commits = _commits(game)
    votes = [c for c in commits if c and c[0][0] == VOTE]
    assert votes, "the game held no vote"
    for commit in commits:
        names = [name for name, _ in commit]
        if (
            VOTE in names
        ):  # an AI vote starts it, the run follows unbroken (then what the machine does itself)
            assert names[0] == VOTE and HUMAN_VOTE not in names
            last = len(names) - names[::-1].index(VOTE)
            assert set(names[:last]) == {VOTE}
    # No commit ends on an AI vote that the next commit's AI vote follows: the run was not cut.
    for this, after in zip(commits, commits[1:], strict=False):
        assert not (this and after and this[-1][0] == VOTE and after[0][0] == VOTE)
    seats = [actor for c in votes for name, actor in c if name == VOTE]
    assert all(actor.startswith("ai:") and actor != "ai:" for actor in seats)
    assert len(seats) > len(votes)  # several seats' votes per commit
    human = [c for c in commits if c and c[0][0] == HUMAN_VOTE]
    assert bool(human) == (role == "EU")  # the student voted in commits of their own
