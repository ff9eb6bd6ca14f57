"""Crash safety for Message Lab: the process driving a panel is killed (SIGKILL) before a model call of a parallel
stage, inside a commit's transaction and after a commit; each resumed panel ends with exactly the report,
state and transcript of the uninterrupted one, and no output is asked for twice."""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest
from django.db import connections

from simulations import faults
from simulations.kinds import get_kind
from simulations.kinds.message_lab.games import state_of
from simulations.kinds.message_lab.headless import play_headless
from simulations.kinds.message_lab.report import render_report
from simulations.kinds.message_lab.scenario import load_default_scenario
from simulations.models import Game, ModelCall, ScenarioVersion
from simulations.services.content.scenarios import store_scenario
from simulations.services.ledger.turns import create_game

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not hasattr(os, "fork"), reason="the driver is killed in a forked child"),
    pytest.mark.skipif(bool(os.environ.get("DATABASE_URL")), reason="SQLite only: once a run"),
]
OPTIONS = {"rounds": 2, "gates": [1]}
# (point, nth hit): a creation call in flight, a critique commit half-written, a refinement committed, round 2.
KILLS = [("before_model_call", 3), ("inside_commit", 8), ("after_commit", 15), ("after_commit", 27)]


def _version() -> ScenarioVersion:
    kind = get_kind("message_lab")
    source = kind.scenarios.source_of(load_default_scenario().model_dump(mode="json"))
    return store_scenario(kind=kind, source=source, origin="tests")[0]


def _result(game: Game) -> dict[str, Any]:
    game.refresh_from_db()
    st = state_of(game)
    from simulations.services.content.scenarios import parsed_scenario

    return {
        "state": game.state, "report": render_report(parsed_scenario(game.scenario), st),
        "transcript": list(game.entries.order_by("seq").values_list("seq", "speaker", "kind", "text")),
        "calls": ModelCall.objects.filter(game=game, status="ok").count(),
    }  # fmt: skip


def _killed_child(game_id: int, point: str, nth: int) -> int:
    """Fork a driver with `point` armed; return the signal that ended it."""
    connections.close_all()  # the child opens its own connection to the same database file
    pid = os.fork()
    if pid == 0:  # the child: play until the armed point kills it
        try:
            faults.arm(point, nth)
            play_headless(Game.objects.get(pk=game_id))
        finally:
            os._exit(0)  # not killed: the parent's assertion says so
    _, status = os.waitpid(pid, 0)
    return os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0


@pytest.mark.parametrize(("point", "nth"), KILLS)
def test_a_killed_driver_resumes_to_the_same_report(point: str, nth: int) -> None:
    version = _version()
    reference = _result(play_headless(create_game(scenario_version=version, seed=21, options=OPTIONS)))
    game = create_game(scenario_version=version, seed=21, options=OPTIONS)
    assert _killed_child(game.pk, point, nth) == signal.SIGKILL
    game.refresh_from_db()
    assert state_of(game).verdict is None  # it died part-way
    assert _result(play_headless(game)) == reference
