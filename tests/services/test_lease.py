from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from simulations.models import Game
from simulations.services.lease import acquire_lease, release_lease
from simulations.services.turns import create_game
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db


def test_a_lease_has_one_holder_until_it_lapses() -> None:
    game = create_game(scenario_version=mercury_version(), seed=1)
    assert acquire_lease(game_id=game.pk, holder="a")
    assert not acquire_lease(game_id=game.pk, holder="b")
    assert acquire_lease(game_id=game.pk, holder="a")  # renewal
    release_lease(game_id=game.pk, holder="b")  # not the holder: no effect
    assert not acquire_lease(game_id=game.pk, holder="b")
    Game.objects.filter(pk=game.pk).update(driver_until=timezone.now() - timedelta(seconds=1))  # a dies
    assert acquire_lease(game_id=game.pk, holder="b")
    release_lease(game_id=game.pk, holder="b")
    assert acquire_lease(game_id=game.pk, holder="c")
