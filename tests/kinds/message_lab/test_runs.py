"""Whole Message Lab simulations through the platform: the real driver, ledger, checkpoints and the offline model
behind litellm. Parallel stages call concurrently yet commit in order; interruptions and failures resume to the
same result."""

from __future__ import annotations

from typing import Any

import pytest

from simulations import faults
from simulations.kinds import kind_of
from simulations.kinds.message_lab.games import state_of
from simulations.kinds.message_lab.headless import play_headless
from simulations.kinds.message_lab.machine import Event, next_step
from simulations.kinds.message_lab.state import SimulationStatus
from simulations.models import Event as EventRow
from simulations.models import Game, ModelCall, ScenarioVersion
from simulations.services.ledger.turns import commit_event
from simulations.services.play.drive import Outcome, drive_game

from .conftest import new_lab_game

SHORT = {"rounds": 3, "gates": [2]}


def _result(game: Game) -> dict[str, Any]:
    """What must replay identically: the state document and the ledger's transcript."""
    game.refresh_from_db()
    return {
        "state": game.state,
        "transcript": list(game.entries.order_by("seq").values_list("seq", "speaker", "kind", "text")),
    }


def test_six_rounds_and_two_gates_reach_output_ready_with_concurrent_calls(
    lab_version: ScenarioVersion, settings: Any
) -> None:
    settings.MERCURY_OFFLINE_CALL_LATENCY = 0.05  # each call takes a model's time to answer (simulated)
    game = play_headless(new_lab_game(lab_version, seed=5))
    st = state_of(game)
    assert st.status is SimulationStatus.OUTPUT_READY and game.status == Game.Status.FINISHED
    assert [g.status for g in st.gates] == ["decided", "decided"]
    names = list(EventRow.objects.filter(game=game).order_by("seq").values_list("name", flat=True))
    assert names.count(Event.GATE_OPENED.value) == 2 and names[-1] == Event.VERDICT_GIVEN.value
    eliminated = EventRow.objects.filter(game=game, name=Event.SYNTHESIS_SUBMITTED.value).first()
    assert eliminated and any(
        c["event"] == "concept_eliminated" and c["reason"] for c in eliminated.stance_changes
    )  # the changes column
    # Round 1's concepts were asked for together: their calls overlap in time (4 in flight at once).
    calls = list(ModelCall.objects.filter(game=game, purpose="concept").order_by("seq")[:5])
    spans = [(c.started_at.timestamp(), c.started_at.timestamp() + c.latency_ms / 1000) for c in calls]  # type: ignore[union-attr]
    overlapping = sum(1 for i, a in enumerate(spans) for b in spans[i + 1 :] if a[0] < b[1] and b[0] < a[1])
    assert overlapping >= 3, spans
    assert all(c.latency_ms >= 50 for c in calls)
    # ... yet they committed in the panel's order.
    assert [c.role for c in calls] == [p[:16] for p in st.config.participants]


@pytest.mark.parametrize("nth", [2, 9, 17, 30])  # mid-creation, mid-critique, mid-refinement, a later round
def test_an_interrupted_stage_resumes_to_the_same_result(lab_version: ScenarioVersion, nth: int) -> None:
    reference = play_headless(new_lab_game(lab_version, seed=9, **SHORT))
    game = new_lab_game(lab_version, seed=9, **SHORT)
    faults.arm("after_commit", nth, raise_instead=True)
    try:
        with pytest.raises(faults.InjectedFault):
            play_headless(game)
    finally:
        faults.disarm()
    game.refresh_from_db()
    assert not state_of(game).verdict  # it stopped part-way
    finished = play_headless(game)
    assert _result(finished) == _result(reference)
    ok = ModelCall.objects.filter(status="ok")
    assert ok.filter(game=finished).count() == ok.filter(game=reference).count()  # nothing asked for twice


def test_a_spent_budget_fails_with_its_reason_and_resumes(
    lab_version: ScenarioVersion, settings: Any
) -> None:
    reference = play_headless(new_lab_game(lab_version, seed=4, **SHORT))
    game = new_lab_game(lab_version, seed=4, **SHORT)
    settings.MERCURY_MAX_TOKENS_PER_GAME = 4000
    with pytest.raises(Exception, match="budget"):
        play_headless(game)
    game.refresh_from_db()
    st = state_of(game)
    assert st.status is SimulationStatus.FAILED and st.failure and "budget" in st.failure.reason
    assert kind_of(game).next_step(game).detail.event is Event.SIMULATION_RESUMED
    settings.MERCURY_MAX_TOKENS_PER_GAME = 0
    finished = play_headless(game, resume_failed=True)
    assert state_of(finished).status is SimulationStatus.OUTPUT_READY
    lines = [t[1:] for t in _result(finished)["transcript"] if t[2] != "note"]
    assert lines == [t[1:] for t in _result(reference)["transcript"]]  # the failure and resume notes aside


def test_an_open_gate_survives_a_restart_and_waits(lab_version: ScenarioVersion) -> None:
    game = new_lab_game(lab_version, seed=2, **SHORT)
    assert drive_game(game_id=game.pk, stream=False).outcome is Outcome.HUMAN
    game.refresh_from_db()
    st = state_of(game)
    assert st.status is SimulationStatus.PAUSED_AT_GATE and st.gate_after(2).status == "open"  # type: ignore[union-attr]
    version = game.version
    # A new driver (as after a restart) finds the gate open and plays nothing.
    drive = drive_game(game_id=game.pk, stream=False)
    assert (drive.outcome, drive.steps) == (Outcome.HUMAN, 0)
    game.refresh_from_db()
    assert game.version == version and next_step(state_of(game)).event is Event.GATE_DECIDED
    keep = [c.id for c in st.concepts if c.status.value == "PRESENTED"]
    commit_event(game_id=game.pk, expected_version=version, event=Event.GATE_DECIDED.value,
                 payload={"eliminate": keep[1:], "direction": "Say who made it"})  # fmt: skip
    finished = play_headless(game)
    final = state_of(finished)
    assert final.status is SimulationStatus.OUTPUT_READY
    assert "From the player: Say who made it" in final.rounds[2].focus
    assert all(final.concept(x).status.value == "ELIMINATED" for x in keep[1:])
