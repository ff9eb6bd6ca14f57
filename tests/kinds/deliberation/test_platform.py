"""Deliberations played by the platform: stored, driven by the one driver, argued by the offline model through
litellm, and ending exactly as the pure loop (`engine_loop.play`) ends the same deliberation."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulations.kinds import Actor, kind_of
from simulations.kinds.deliberation import machine
from simulations.kinds.deliberation.amendments import sample_amendment
from simulations.kinds.deliberation.games import state_of
from simulations.kinds.deliberation.machine import Event
from simulations.kinds.deliberation.offline import AmendedCode, Move
from simulations.kinds.deliberation.scenario import DeliberationScenario
from simulations.kinds.deliberation.state import DeliberationState, Submission, Verdict
from simulations.kinds.deliberation.turns import submit_human_move
from simulations.models import Game, ModelCall, ScenarioVersion, TranscriptEntry
from simulations.services.content.scenarios import load_scenarios
from simulations.services.ledger.turns import create_game
from simulations.services.play.drive import Outcome, drive_game

from . import engine_loop

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[3]
SEED = 11


@pytest.fixture
def version() -> ScenarioVersion:
    ((stored, created),) = load_scenarios(path=ROOT / "scenarios" / "deliberation")
    assert created and stored.kind == "deliberation"
    return stored


def pure_run(sc: DeliberationScenario, sub: Submission, sample: str) -> DeliberationState:
    st = machine.new_deliberation(sc, seed=SEED, submission=sub, human_seat=None)
    return engine_loop.play(sc, st, amended=sample_amendment(sc, sample))


def drive_to_end(game: Game, max_steps: int | None = None) -> Game:
    drive = drive_game(game_id=game.pk, stream=False, max_steps=max_steps)
    assert drive.outcome in (Outcome.DONE, Outcome.PAUSED, Outcome.HUMAN), drive
    return Game.objects.get(pk=game.pk)


@pytest.mark.parametrize(
    ("sample", "verdict", "rounds"),
    [("secret", Verdict.APPROVED, 2), ("style", Verdict.REQUEST_CHANGES, 1), ("deadlock", Verdict.INCONCLUSIVE, 5),
     ("clean", Verdict.APPROVED, 1)],
)  # fmt: skip
def test_a_sample_plays_to_its_verdict_as_the_pure_loop_plays_it(
    version: ScenarioVersion,
    scenario: DeliberationScenario,
    checked: dict[str, Submission],
    sample: str,
    verdict: Verdict,
    rounds: int,
) -> None:
    game = create_game(scenario_version=version, seed=SEED, options={"sample": sample})
    game = drive_to_end(game)
    final = state_of(game)
    assert game.status == Game.Status.FINISHED and game.phase == "CONCLUSION"
    assert (final.verdict, final.round) == (verdict, rounds)
    expected = pure_run(scenario, checked[sample], sample)
    assert final.model_dump() == expected.model_dump()  # the same committee, word for word
    rows = list(TranscriptEntry.objects.filter(game=game).order_by("seq").values_list("speaker", "text"))
    assert rows == [(e.speaker, e.text) for e in expected.log]
    opinions = sum(len(r.ballots) for r in expected.rounds)
    calls = ModelCall.objects.filter(game=game)
    assert calls.filter(purpose="opinion", status="ok").count() == opinions  # every persona's turn, one call
    assert {c.model for c in calls} == {"mercury-offline/default"}


def test_a_deliberation_stopped_after_every_step_resumes_and_ends_the_same(version: ScenarioVersion) -> None:
    """Each drive plays one step and stops, as a worker killed between steps leaves it (nothing but committed steps
    is stored); the next drive resumes from the checkpoint. The result equals an uninterrupted run, row for row."""
    whole = drive_to_end(create_game(scenario_version=version, seed=SEED, options={"sample": "secret"}))
    game = create_game(scenario_version=version, seed=SEED, options={"sample": "secret"})
    stops = 0
    while game.status != Game.Status.FINISHED:
        game = drive_to_end(game, max_steps=1)
        stops += 1
    assert (
        stops == ModelCall.objects.filter(game=whole).count() + 1
    )  # every persona's turn, and the amendment
    assert game.state == whole.state

    def rows(g: Game) -> list[tuple[object, ...]]:
        return list(
            TranscriptEntry.objects.filter(game=g).order_by("seq").values_list("seq", "speaker", "text")
        )

    assert rows(game) == rows(whole)


def test_a_person_as_proposer_submits_amended_code_after_the_veto(
    version: ScenarioVersion, scenario: DeliberationScenario
) -> None:
    game = create_game(scenario_version=version, seed=SEED, options={"sample": "secret", "seat": "proposer"})
    game = drive_to_end(game)
    step = kind_of(game).next_step(game)
    assert step.actor is Actor.HUMAN and state_of(game).status.value == "VETO"
    sample = scenario.sample("secret")
    assert sample.amended is not None
    amended = AmendedCode(code=sample.amended, filename=sample.filename, label="my fix")
    game = submit_human_move(game=game, move=Move(Event.AMENDED_CODE_SUBMITTED, amended=amended))
    game = drive_to_end(game)
    final = state_of(game)
    assert (final.verdict, final.submission.version, final.submission.findings) == (Verdict.APPROVED, 2, [])


def test_start_refuses_code_the_tools_cannot_review(version: ScenarioVersion) -> None:
    from simulations.kinds.deliberation.checks import CheckError

    with pytest.raises(CheckError):
        create_game(
            scenario_version=version, seed=SEED, options={"code": b"\x00\x01binary", "source": "paste"}
        )
    assert not Game.objects.exists()


@pytest.mark.parametrize("sample", ["secret", "deadlock"])
def test_a_deliberation_exports_and_imports_back_the_same(version: ScenarioVersion, sample: str) -> None:
    import json

    from simulations.services.files.export import export_game, export_markdown
    from simulations.services.files.import_game import import_game

    game = drive_to_end(create_game(scenario_version=version, seed=SEED, options={"sample": sample}))
    data = json.loads(json.dumps(export_game(game=game)))  # as a file would hold it
    assert data["kind"] == "deliberation" and data["deliberation"]["verdict"] == state_of(game).verdict
    assert len(data["events"]) == state_of(game).event_seq and len(data["transcript"]) == len(
        state_of(game).log
    )
    copy = import_game(data=data)
    assert copy.pk != game.pk and copy.state == game.state
    again = export_game(game=copy)
    again["game"]["id"] = data["game"]["id"]
    assert json.loads(json.dumps(again)) == data
    report = export_markdown(game=copy)
    assert report.startswith("#") and str(state_of(game).verdict) in report


def test_an_import_refuses_a_file_whose_kind_is_not_its_scenarios(version: ScenarioVersion) -> None:
    from simulations.services.files.export import export_game
    from simulations.services.files.import_game import ExportImportError, import_game

    data = export_game(
        game=drive_to_end(create_game(scenario_version=version, seed=SEED, options={"sample": "clean"}))
    )
    with pytest.raises(ExportImportError, match="Invalid export"):
        import_game(
            data={**data, "kind": "negotiation"}
        )  # the negotiation's schema has no deliberation section
    from tests.helpers import mercury_version

    mercury = mercury_version()  # a valid deliberation file that names a negotiation's scenario version
    game = {
        **data["game"],
        "scenario": {**data["game"]["scenario"], "slug": mercury.slug, "version": mercury.version},
    }
    with pytest.raises(ExportImportError, match="Scenario content differs: mercury v1 here is a negotiation"):
        import_game(data={**data, "game": game})
