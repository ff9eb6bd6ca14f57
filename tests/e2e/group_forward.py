"""Run by `manage.py shell` on a browser test's server database (tests/e2e/test_group_browser.py): plays the class
group's game MERCURY_FORWARD_GAME with the negotiation's bots in every student's seat, until the seat
MERCURY_FORWARD_SEAT must move (or, with no seat given, to the end), as if its students had played that far."""

from __future__ import annotations

import os

from simulations.models import Game
from tests.helpers import play_group_until

game = Game.objects.select_related("scenario").get(pk=int(os.environ["MERCURY_FORWARD_GAME"]))
seat = os.environ.get("MERCURY_FORWARD_SEAT", "")
played = play_group_until(game, lambda state, step: bool(seat) and step.seat == seat)
print(played.phase)
