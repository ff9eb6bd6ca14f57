"""Whole conversations through the driver, the offline judge and character and the ledger: the scripted students
(written by hand for each shipped scenario) reach SUCCESS and FAIL; the bots do too; an interruption resumes at the
last complete step to the same conversation; the export imports back to the same game."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from simulations import faults
from simulations.kinds import kind_of
from simulations.kinds.roleplay import bots
from simulations.kinds.roleplay.document import RoleplayState, Status
from simulations.kinds.roleplay.games import state_of
from simulations.kinds.roleplay.headless import play_headless
from simulations.kinds.roleplay.scenario import SCENARIO_ROOT, RoleplayScenario
from simulations.models import Game, ModelCall, ScenarioVersion

from .conftest import new_chat, store
from .scripts import SCRIPTS

FILES = sorted(p.name for p in SCENARIO_ROOT.glob("*.json"))


def scripted(lines: list[str]) -> Callable[[RoleplayScenario, RoleplayState], str]:
    def student(scenario: RoleplayScenario, state: RoleplayState) -> str:
        if state.turns >= len(lines):
            raise AssertionError(f"the script ran out at {state.visited} without an ending")
        return lines[state.turns]

    return student


def conversation(game: Game) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in state_of(game).messages]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("file", FILES)
@pytest.mark.parametrize("goal", ["success", "fail"])
def test_a_scripted_student_reaches_each_ending_of_each_scenario(file: str, goal: str) -> None:
    version = store(file)
    scenario = kind_of(new_chat(version)).scenarios.parse(version.document)
    lines = SCRIPTS[scenario.name][goal]
    game = play_headless(new_chat(version), bot=scripted(lines))
    state = state_of(game)
    assert state.status is Status.ENDED and state.outcome == goal.upper()
    assert state.turns == len(lines)  # the ending came with the script's last line, not before
    assert game.finished_at is not None
    # every character line after a transition is the entered state's own words; the last is the ending's
    assert state.messages[-1].role == "character"
    ending = scenario.tstates[goal.upper()].addprompt
    assert state.messages[-1].text in ending.replace("{username}", "Sam")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("bot", ["seeker", "quitter"])
def test_the_bots_reach_their_ending_in_every_scenario(bot: str) -> None:
    for file in FILES:
        game = play_headless(new_chat(store(file)), bot=bots.BOTS[bot])
        assert state_of(game).outcome == ("SUCCESS" if bot == "seeker" else "FAIL"), file


def test_the_same_seed_and_lines_replay_the_same_conversation(cafe: ScenarioVersion) -> None:
    one = play_headless(new_chat(cafe, seed=3), bot=bots.seeker)
    two = play_headless(new_chat(cafe, seed=3), bot=bots.seeker)
    assert conversation(one) == conversation(two)
    assert state_of(one).judgments == state_of(two).judgments


@pytest.mark.parametrize("nth", [1, 4, 9])
def test_an_interrupted_conversation_resumes_at_the_last_complete_step(
    cafe: ScenarioVersion, nth: int
) -> None:
    reference = play_headless(new_chat(cafe, seed=8), bot=bots.seeker)
    game = new_chat(cafe, seed=8)
    faults.arm("before_model_call", nth, raise_instead=True)
    try:
        with pytest.raises(faults.InjectedFault):
            play_headless(game, bot=bots.seeker)
    finally:
        faults.disarm()
    game.refresh_from_db()
    stopped = state_of(game)
    assert stopped.status in (Status.JUDGING, Status.CHARACTER_TURN)  # waiting for the call that never ran
    finished = play_headless(game, bot=bots.seeker)
    assert conversation(finished) == conversation(reference)
    ok = ModelCall.objects.filter(status="ok")
    assert ok.filter(game=finished).count() == ok.filter(game=reference).count()


def test_the_judge_is_recorded_but_only_the_character_is_spoken(cafe: ScenarioVersion) -> None:
    game = play_headless(new_chat(cafe), bot=bots.quitter)
    calls = list(ModelCall.objects.filter(game=game).order_by("pk").values_list("role", "purpose"))
    assert calls == [("judge", "transition"), ("character", "reply")]
    entries = list(game.entries.order_by("seq").values_list("kind", "speaker"))
    assert [k for k, _ in entries] == ["character", "student", "character"]
    assert entries[1][1] == "Sam" and entries[0][1] == "Dana"


def test_the_export_imports_back_to_the_same_conversation(cafe: ScenarioVersion) -> None:
    import json

    from simulations.services.files.export import export_game
    from simulations.services.files.import_game import import_game

    game = play_headless(new_chat(cafe, seed=12), bot=bots.seeker)
    doc = export_game(game=game)
    assert doc["roleplay"]["outcome"] == "SUCCESS"
    assert [j["to_state"] for j in doc["roleplay"]["judgments"] if j["is_transition"]][-1] == "SUCCESS"
    copy = import_game(data=json.loads(json.dumps(doc)))
    assert conversation(copy) == conversation(game)
    assert state_of(copy).visited == state_of(game).visited
