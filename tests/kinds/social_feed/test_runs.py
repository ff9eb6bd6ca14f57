"""Social-feed runs on the platform: set up from the page, played by the driver a block of rounds per committed
step, paused and resumed from the page, interrupted between any two blocks and resumed to the identical run,
refused choices that are not the guards' candidates, downloads, and the export imported back."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from simulations import faults
from simulations.engine.errors import InvalidMove
from simulations.kinds import get_kind
from simulations.kinds.social_feed import machine
from simulations.kinds.social_feed.config import SCENARIO_ROOT
from simulations.kinds.social_feed.entities import AgentState
from simulations.kinds.social_feed.export import decision_log
from simulations.kinds.social_feed.games import state_of
from simulations.kinds.social_feed.headless import play_headless
from simulations.kinds.social_feed.offline import OfflineReasoner
from simulations.kinds.social_feed.turns import Recording
from simulations.models import Game, ScenarioVersion
from simulations.services.content.scenarios import store_scenario
from simulations.services.ledger.turns import create_game
from simulations.services.play.drive import Outcome, drive_game

pytestmark = pytest.mark.django_db(transaction=True)
SMALL = {"agents": 30, "max_rounds": 12, "checkpoint_frequency": 3, "started_at": "2026-11-24T00:00:00+00:00"}


@pytest.fixture
def town() -> ScenarioVersion:
    kind = get_kind("social_feed")
    [source] = kind.scenarios.read(SCENARIO_ROOT / "town-square.yaml")
    return store_scenario(kind=kind, source=source, origin="tests")[0]


def new_run(version: ScenarioVersion, seed: int = 4, **options: object) -> Game:
    return create_game(scenario_version=version, seed=seed, options=SMALL | options)


def test_a_run_plays_a_block_of_rounds_per_committed_step_to_the_end(town: ScenarioVersion) -> None:
    game = play_headless(new_run(town))
    st = state_of(game)
    assert st.status is machine.Status.FINISHED and st.round_number == 12 and len(st.history) == 12
    assert list(game.events.values_list("name", flat=True)) == ["RUN_STARTED"] + ["ROUNDS_PLAYED"] * 4
    assert game.checkpoints.count() == 5  # the start and one per block of 3 rounds
    decisions = [json.loads(line) for line in decision_log(game).splitlines()]  # stored compactly, read back
    assert len(decisions) == sum(r.decisions for r in st.history) and decisions[0]["round"] == 0
    assert [d["round"] for d in decisions] == sorted(d["round"] for d in decisions)


@pytest.mark.parametrize("nth", [1, 2, 3, 4])
def test_a_run_interrupted_between_blocks_resumes_to_the_identical_run(
    town: ScenarioVersion, nth: int
) -> None:
    whole = play_headless(new_run(town))
    game = new_run(town)
    faults.arm("before_model_call", nth, raise_instead=True)
    try:
        with pytest.raises(faults.InjectedFault):
            play_headless(game)
    finally:
        faults.disarm()
    game.refresh_from_db()
    assert state_of(game).round_number == 3 * (nth - 1)
    finished = play_headless(game)
    assert state_of(finished).history == state_of(whole).history
    assert state_of(finished).simulation["posts"] == state_of(whole).simulation["posts"]


def test_a_choice_the_guards_did_not_offer_is_refused(town: ScenarioVersion) -> None:
    scenario = get_kind("social_feed").scenarios.parse(town.document)
    st = state_of(new_run(town))
    for _ in range(5):  # play until a block holds a reasoner's choice
        block: dict[str, Any] = {"rounds": machine.block_size(st), "at": "t"}
        rec = Recording(OfflineReasoner(st.seed))
        machine.play(scenario, st, block["rounds"], rec)
        if rec.choices:
            break
        st = machine.apply(scenario, st, "ROUNDS_PLAYED", block | {"choices": []}).state
    bad = rec.choices[0].model_copy(update={"target": AgentState.RESTING})
    with pytest.raises(InvalidMove, match="did not offer"):
        machine.apply(scenario, st, "ROUNDS_PLAYED", block | {"choices": [bad.model_dump(mode="json")]})
    with pytest.raises(InvalidMove, match="has no choice"):
        machine.apply(scenario, st, "ROUNDS_PLAYED", block | {"choices": []})


def test_set_up_pause_resume_results_and_downloads_from_the_pages(town: ScenarioVersion) -> None:
    client = Client()
    client.force_login(User.objects.create_user("teacher", password="a-long-test-passphrase-42"))
    assert "Social feed" in client.get("/").content.decode()
    form = client.get(f"/social_feed/new/{town.pk}/").content.decode()
    assert "Generated agents" in form and "Town square" in form
    bad = client.post(
        f"/social_feed/new/{town.pk}/", {"agents": 10, "max_rounds": 0, "checkpoint_frequency": 1}
    )
    assert bad.status_code == 400 and not Game.objects.exists()
    response = client.post(f"/social_feed/new/{town.pk}/", {"agents": 20, "max_rounds": 6, "checkpoint_frequency": 2,
                                                            "reasoner_enabled": "on"})  # fmt: skip
    game = Game.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/games/{game.pk}/"
    assert drive_game(game_id=game.pk, stream=False, max_steps=1).outcome is Outcome.PAUSED
    game.refresh_from_db()
    page = client.get(f"/games/{game.pk}/").content.decode()
    assert "round 2 of 6" in page and 'class="band"' in page and "Pause" in page
    client.post(f"/games/{game.pk}/move/", {"event": "RUN_PAUSED", "version": str(game.version)})
    assert drive_game(game_id=game.pk, stream=False).outcome is Outcome.HUMAN  # paused: the driver stops
    page = client.get(f"/games/{game.pk}/").content.decode()
    assert "Paused" in page and "Resume the run" in page
    game.refresh_from_db()
    client.post(f"/games/{game.pk}/move/", {"event": "RUN_RESUMED", "version": str(game.version)})
    assert drive_game(game_id=game.pk, stream=False).outcome is Outcome.DONE
    results = client.get(f"/games/{game.pk}/review/").content.decode()
    assert "Results" in results and "6 of 6 rounds" in results
    log = client.get(f"/games/{game.pk}/export.decisions.jsonl").content.decode().splitlines()
    assert log and all(json.loads(line)["agent_id"] for line in log)
    rows = list(csv.reader(io.StringIO(client.get(f"/games/{game.pk}/export.metrics.csv").content.decode())))
    assert rows[0][:2] == ["round", "IDLE"] and [r[0] for r in rows[1:]] == ["1", "2", "3", "4", "5", "6"]
    cp = json.loads(client.get(f"/games/{game.pk}/export.checkpoint.json").content)
    assert cp["version"] == "1.0" and cp["round_number"] == 6
    assert client.get(f"/games/{game.pk}/export.nonsense.txt").status_code == 404


def test_the_export_imports_back_to_the_same_run(town: ScenarioVersion) -> None:
    from simulations.services.files.export import export_game
    from simulations.services.files.import_game import import_game

    game = play_headless(new_run(town, seed=9))
    doc = json.loads(json.dumps(export_game(game=game)))
    copy = import_game(data=doc)
    assert state_of(copy).history == state_of(game).history
    assert state_of(copy).simulation == state_of(game).simulation


def test_an_admins_rehearsal_plays_a_draft_run_to_the_end(town: ScenarioVersion) -> None:
    from simulations.services.files.scenario_drafts import clone, rehearse

    rehearsal = rehearse(clone(town, user=None))
    assert rehearsal.finished and rehearsal.game is not None and not rehearsal.problem
    st = state_of(rehearsal.game)
    assert st.status is machine.Status.FINISHED and st.round_number == 10  # a rehearsal plays ten rounds
    assert rehearsal.game.scenario.slug == "town-square--rehearsal" and not rehearsal.game.scenario.listed
