"""A page region is rendered again only when something it read has changed (services/pages/region_memo.py), and what it
reuses is always what a fresh render would give: checked at every committed step of whole games."""

from __future__ import annotations

from typing import Any

import pytest

from simulations.kinds.negotiation import presenters
from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.headless import play_game
from simulations.models import Game
from simulations.services.ledger.turns import create_game
from simulations.services.pages import region_memo
from simulations.services.pages.fragments import fragment, render_reading
from tests.helpers import mercury_version

OUTCOMES = "negotiation/_panel_outcomes.html"


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The templates region_memo really renders, in order."""
    region_memo.forget_all()
    made: list[str] = []

    def counted(template: str, context: Any) -> tuple[str, set[str]]:
        made.append(template)
        return render_reading(template, context)

    monkeypatch.setattr(region_memo, "render_reading", counted)
    return made


def _outcome(result: str) -> dict[str, Any]:
    return {
        "number": 1,
        "title": "Form",
        "result": result,
        "proposal": "1.1",
        "yes": 6,
        "no": 0,
        "against": [],
    }


def test_a_region_is_reused_while_what_it_read_is_equal_and_rendered_again_when_it_changed(
    renders: list[str],
) -> None:
    first = {"outcomes": [_outcome("open")], "region_oob": "", "unread": 1}
    html = region_memo.render_region(OUTCOMES, first, owner=1)
    assert "under debate" in html
    # Equal values in new objects, and a change to a name the template never reads: the same HTML, no render.
    again = {"outcomes": [_outcome("open")], "region_oob": "", "unread": 2}
    assert region_memo.render_region(OUTCOMES, again, owner=1) == html
    assert renders == [OUTCOMES]
    # What it read changed (deep inside a list): rendered again.
    changed = region_memo.render_region(OUTCOMES, again | {"outcomes": [_outcome("adopted")]}, owner=1)
    assert "<strong>adopted</strong>" in changed
    assert renders == [OUTCOMES, OUTCOMES]
    # Another game's render is its own.
    assert region_memo.render_region(OUTCOMES, first, owner=2) == html
    assert len(renders) == 3


def test_a_name_the_context_lacks_counts_as_read(renders: list[str]) -> None:
    """The slot is empty without outcomes; once they are there it must be drawn."""
    empty = region_memo.render_region(OUTCOMES, {"region_oob": ""}, owner=1)
    assert "<details" not in empty
    full = region_memo.render_region(OUTCOMES, {"region_oob": "", "outcomes": [_outcome("open")]}, owner=1)
    assert "<details" in full
    assert len(renders) == 2


@pytest.mark.django_db
def test_a_render_that_read_a_model_instance_is_not_kept(renders: list[str]) -> None:
    """A model compares by primary key: a region reading `game.status` must not be reused when only it changed."""
    game = create_game(scenario_version=mercury_version(), seed=1)
    context = presenters.game_context(game)
    template = "negotiation/_panel_actions.html"
    one = region_memo.render_region(template, context, owner=game.pk)
    two = region_memo.render_region(template, context, owner=game.pk)
    assert one == two
    assert renders == [template, template]


@pytest.mark.django_db
@pytest.mark.parametrize(("seed", "role", "human"), [(3, "USA", "advocate"), (8, "MFF", "passive")])
def test_every_kept_region_is_what_a_fresh_render_gives_at_every_step_of_a_game(
    seed: int, role: str, human: str
) -> None:
    region_memo.forget_all()
    game = create_game(scenario_version=mercury_version(), seed=seed)
    checked = {"steps": 0, "reused": 0}

    def compare(played: Game, _what: str) -> None:
        played = Game.objects.select_related("scenario").get(pk=played.pk)
        context = presenters.game_context(played)
        for name in presenters.PANEL_REGIONS:
            if name == "actions":
                continue
            template = f"negotiation/_panel_{name}.html"
            was = region_memo._kept.get(((played.pk, played.human_role), template))
            kept = presenters._marked_region(name, context)
            fresh = fragment(template, context | {"region_oob": presenters._OOB_MARK})
            assert kept == fresh, (played.version, name)
            # Every name a region reads is the game's context's own: none is left for a request to bring (the
            # user, the CSRF token), which the memo's renders, taking no request, would leave empty.
            read = {n for n, _ in region_memo._kept[((played.pk, played.human_role), template)][0]}
            assert read <= set(context) | {"region_oob"}, (name, read - set(context))
            checked["reused"] += (
                was is not None and region_memo._kept[((played.pk, played.human_role), template)] is was
            )
        checked["steps"] += 1

    play_game(game_id=game.pk, policy=make_policy(human, role), on_progress=compare)
    assert checked["steps"] > 100
    # Most regions are as they were at most steps: the memo is used, not bypassed.
    assert checked["reused"] > checked["steps"] * 3
