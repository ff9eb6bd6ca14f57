"""The student's earlier private talks, kept between renders: always what a fresh render shows, and only the
student's own talks."""

from __future__ import annotations

import pytest
from django.utils.html import escape

from simulations.kinds.negotiation import presenters
from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.games import scenario_of_version, state_of
from simulations.kinds.negotiation.headless import play_game
from simulations.models import Game, TranscriptEntry
from simulations.services.ledger.turns import create_game, games_with_scenario
from tests.helpers import mercury_version


@pytest.mark.django_db
def test_the_kept_dialog_is_a_fresh_render_at_every_step_and_shows_only_the_students_talks() -> None:
    game = create_game(scenario_version=mercury_version(), seed=7)
    shown: list[str] = []

    def check(played: Game, what: str) -> None:
        current = games_with_scenario().get(pk=played.pk)
        scenario, state = scenario_of_version(current.scenario), state_of(current)
        kept = presenters.earlier_talks(current, scenario, state)
        saved = dict(presenters._rendered_talks)
        presenters._rendered_talks.clear()
        try:
            assert presenters.earlier_talks(current, scenario, state) == kept
        finally:
            presenters._rendered_talks.clear()
            presenters._rendered_talks.update(saved)
        shown.append(kept)

    game = play_game(game_id=game.pk, policy=make_policy("advocate", "CAN"), on_progress=check)
    assert shown[0] == "" and "Your earlier private talks" in shown[-1]
    assert len(set(shown)) >= 3  # none, one talk closed, two: the kept dialog changed as talks closed
    private = TranscriptEntry.objects.filter(game=game, visibility="private")
    own = [e for e in private if "CAN" in e.audience]
    assert own and all(escape(e.text) in shown[-1] for e in own)
    assert all(escape(e.text) not in shown[-1] for e in private if "CAN" not in e.audience)
