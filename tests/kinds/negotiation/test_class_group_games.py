"""Several students in one negotiation (a class group's game), on the pure engine: each seat acts when the table
says so, Round 2's talks are taken one student at a time, a talk between two students is theirs alone, and a game
of one student plays as before."""

from __future__ import annotations

import pytest

from simulations.engine.errors import InvalidMove
from simulations.kinds.negotiation import machine
from simulations.kinds.negotiation.bots import Advocate, BySeat, Passive
from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import SCHEMA_VERSION
from tests.kinds.negotiation.driver import PureGame, new_pure_game

STUDENTS = ("USA", "CAN", "CHN")  # USA asks CAN first: a talk between two students


@pytest.fixture(scope="module")
def group(scenario: Scenario) -> PureGame:
    policies = BySeat([Advocate("USA"), Advocate("CAN"), Passive("CHN")])
    return new_pure_game(scenario, seed=3).play(policies)


def test_every_student_holds_their_seat_to_the_review(group: PureGame) -> None:
    state = group.state
    assert state.status == "REVIEW" and state.humans == list(STUDENTS)
    students = {o.actor for o in group.outcomes if o.actor.startswith("human")}
    assert students == {f"human:{seat}" for seat in STUDENTS} | {"human"}  # "human": the seats confirmed
    ai_seats = {o.actor.removeprefix("ai:") for o in group.outcomes if o.actor.startswith("ai:")}
    assert not ai_seats & set(STUDENTS)
    for issue in state.round3.issues:
        for voter in set(STUDENTS) & set(issue.vote_order):
            cast = [o for o in group.outcomes if o.event == "HUMAN_VOTE_CAST" and o.actor == f"human:{voter}"]
            assert len(cast) == len(state.round3.issues)


def test_each_student_chooses_their_own_talks_in_turn(group: PureGame) -> None:
    talkers = [group.state.talker_of(c) for c in group.state.round2.conversations]
    assert talkers == sorted(talkers, key=STUDENTS.index) and set(talkers) == set(STUDENTS)
    assert sum(o.event == "ROUND_2_NEXT_STUDENT" for o in group.outcomes) == len(STUDENTS) - 1
    for seat in STUDENTS:
        indices = [c.index for c in group.state.round2.conversations if group.state.talker_of(c) == seat]
        assert indices == list(range(len(indices))) and 1 <= len(indices) <= 2


def test_a_talk_between_two_students_is_theirs_alone(group: PureGame) -> None:
    convos = group.state.round2.conversations
    between = [c for c in convos if c.partner in STUDENTS]
    assert between, "no talk between two students was played"
    for convo in between:
        pair = sorted([str(group.state.talker_of(convo)), convo.partner])
        said = [e for e in group.entries if e.kind == "message" and e.speaker in pair and e.audience == pair]
        assert {e.speaker for e in said} == set(pair)  # both students wrote, nobody wrote for them
    messages = [e for e in group.entries if e.kind == "message"]
    assert all(len(e.audience) == 2 and e.speaker in e.audience for e in messages)
    by_ai = [o for o in group.outcomes if o.event == "AI_MESSAGE_COMMITTED"]
    assert all(o.actor.removeprefix("ai:") not in STUDENTS for o in by_ai)


def test_a_student_cannot_talk_with_themselves_or_again_with_who_chose_them(
    scenario: Scenario, group: PureGame
) -> None:
    choosing = [
        s for s in group.states if s.status == "ROUND_2_SELECT_CONVO_1" and s.round2_student == "CAN"
    ][0]
    for partner, reason in (("CAN", InvalidMove.BAD_PARTNER), ("USA", InvalidMove.SAME_PARTNER)):
        with pytest.raises(InvalidMove) as err:
            machine.apply(scenario, choosing, "CONVO_1_STARTED", {"partner": partner, "starter": "human"})
        assert err.value.reason == reason


def test_the_seats_are_the_platforms_to_set_and_must_be_seats(scenario: Scenario) -> None:
    game = new_pure_game(scenario, seed=1)
    for others in (["USA", "USA"], ["CAN"], ["JPN"]):
        with pytest.raises(InvalidMove):
            machine.apply(scenario, game.state, "ROLE_CONFIRMED", {"role": "CAN", "others": others})
    assert "others" not in machine.STUDENT_EVENTS["ROLE_CONFIRMED"]


def test_a_class_groups_game_resumes_anywhere_in_round_2(scenario: Scenario, group: PureGame) -> None:
    resumable = [s for s in group.states if s.status in machine.RESUMABLE and s.round2.conversations]
    assert resumable
    for state in resumable[:: max(1, len(resumable) // 12)]:
        restored = machine.resume(scenario, state.model_dump(mode="json"))
        assert restored.model_dump() == state.model_dump()


def test_a_game_stored_before_several_students_resumes_as_one_students(scenario: Scenario) -> None:
    game = new_pure_game(scenario, seed=2).play(Passive("BRA"), until="ROUND_2_CONVERSATION_ACTIVE")
    stored = game.state.model_dump(mode="json")
    stored.pop("co_players")
    stored["round2"].pop("student")
    for convo in stored["round2"]["conversations"]:
        convo.pop("talker")
    restored = machine.resume(scenario, {**stored, "schema_version": 2})
    assert restored.schema_version == SCHEMA_VERSION and restored.humans == ["BRA"]
    assert machine.next_step(scenario, restored) == machine.next_step(scenario, game.state)


def test_a_move_the_ai_stands_in_for_is_marked_as_the_stand_ins(scenario: Scenario, group: PureGame) -> None:
    voting = next(s for s in group.states if machine.next_step(scenario, s).events == ("HUMAN_VOTE_CAST",))
    voter = machine.next_voter(voting)
    outcome = machine.apply(scenario, voting, "HUMAN_VOTE_CAST", {"ballot": "yes", "stand_in": True})
    assert outcome.actor == f"stand-in:{voter}"
    (entry,) = [e for e in outcome.entries if e.kind == "vote"]
    assert entry.speaker == voter and entry.text.startswith(machine.STAND_IN_MARK)
    plain = machine.apply(scenario, voting, "HUMAN_VOTE_CAST", {"ballot": "yes"})
    assert plain.actor == f"human:{voter}" and not plain.entries[0].text.startswith(machine.STAND_IN_MARK)
    assert all("stand_in" not in fields for fields in machine.STUDENT_EVENTS.values())  # never from a form
