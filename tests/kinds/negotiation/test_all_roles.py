"""A bot plays a whole game for each of the nine seats, passive and advocate (oTree-style bot tests)."""

from __future__ import annotations

import pytest

from simulations.models import Game, ModelCall, TranscriptEntry, Vote
from tests.helpers import played

# What whole games say and show, the same on any database: the embedded leg only (tests/conftest.py).
pytestmark = [pytest.mark.django_db, pytest.mark.content]
ROLES = ["BRA", "CAN", "CHN", "EU", "TZA", "USA", "AMAP", "MFF", "WCPA"]
SEED = 8
outcomes: dict[tuple[str, str], tuple[str | None, ...]] = {}


@pytest.mark.parametrize("human", ["passive", "advocate"])
@pytest.mark.parametrize("role", ROLES)
def test_bot_plays_a_whole_game(role: str, human: str) -> None:
    game = played(role, human, seed=SEED)
    assert game.phase == "REVIEW" and game.status == Game.Status.FINISHED
    votes = list(Vote.objects.filter(game=game).order_by("issue"))
    assert [v.issue for v in votes] == ["1", "2", "3", "4"]
    human_lines = TranscriptEntry.objects.filter(game=game, speaker=role, kind__in=["message", "speech"])
    if human == "advocate":
        assert human_lines.filter(kind="speech").count() >= 4  # speaks first on every issue
        assert human_lines.filter(kind="message").count() == 12  # two full talks
    else:
        assert not human_lines.filter(kind="speech").exists()
    assert not ModelCall.objects.filter(game=game, status="error").exists()
    outcomes[(role, human)] = tuple(v.proposal if v.adopted else None for v in votes)  # what was adopted


def test_the_student_changes_outcomes() -> None:
    """Runs after the sweep above (same module): what the student does decides what is adopted, for most seats
    (a seat whose every preference passes without it has nothing left to change)."""
    if len(outcomes) < 2 * len(ROLES):
        pytest.skip("needs the whole sweep of this module")
    changed = [r for r in ROLES if outcomes[(r, "passive")] != outcomes[(r, "advocate")]]
    assert len(changed) >= 5, changed
    for role in ROLES:  # passive play does not fail everything
        assert any(outcomes[(role, "passive")]), (role, outcomes[(role, "passive")])
