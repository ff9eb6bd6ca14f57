"""Several students in one negotiation (a class group's game), on the pure engine: each seat acts when the table
says so; in Round 2 every student's talks run side by side, a lane each, moved in any order; a talk between two
students is theirs alone, and so is a delegation's talk with each of two students at once; a game of one student
plays as before."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from simulations.engine.errors import IllegalEvent, InvalidMove
from simulations.engine.visibility import visible_to
from simulations.kinds.negotiation import machine, prompts
from simulations.kinds.negotiation.bots import Advocate, BySeat, Passive
from simulations.kinds.negotiation.machine import Step, TalkRefusal
from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import SCHEMA_VERSION
from tests.kinds.negotiation.driver import PureGame, new_pure_game, one_student_at_a_time

STUDENTS = ("USA", "CAN", "CHN")
POLICY = BySeat([Advocate("USA"), Advocate("CAN"), Passive("CHN")])


@pytest.fixture(scope="module")
def group(scenario: Scenario) -> PureGame:
    return new_pure_game(scenario, seed=3).play(POLICY)


def _round_2(scenario: Scenario, seed: int = 3) -> PureGame:
    """A group of three at the start of Round 2's side-by-side talks."""
    return new_pure_game(scenario, seed=seed).play(POLICY, until="ROUND_2_TALKS")


def _start(game: PureGame, seat: str, partner: str, event: str = "CONVO_1_STARTED") -> None:
    game.apply(event, {"partner": partner, "starter": "human", "seat": seat, "seen": game.state.event_seq})


def _steps(game: PureGame) -> list[Step]:
    """Every lane's step (the game's own step once no lane waits)."""
    step = machine.next_step(game.scenario, game.state)
    return list(step.lanes) or [step]


def _play_lanes(game: PureGame, pick: Callable[[list[Step]], Step], *, until: Callable[[], bool]) -> None:
    """Round 2's lanes moved one step at a time, the lane `pick` chooses among those waiting, the bots deciding."""
    for _ in range(500):
        if until():
            return
        game.step(POLICY, pick(_steps(game)))
    raise AssertionError("the lanes did not get there")


def _two_pairs(scenario: Scenario) -> PureGame:
    """The United States talking with Brazil (an AI), Canada with China (a student): two talks open at once."""
    game = _round_2(scenario)
    _start(game, "USA", "BRA")
    _start(game, "CAN", "CHN")
    return game


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


def test_round_2_opens_every_students_lane_at_once(scenario: Scenario) -> None:
    game = _round_2(scenario)
    assert [lane.seat for lane in game.state.round2.lanes] == list(STUDENTS)
    steps = _steps(game)
    assert [(s.kind, s.role, s.lane, s.purpose) for s in steps] == [
        ("human", seat, seat, "partner") for seat in STUDENTS
    ]
    assert all(
        machine.lane_step(game.state, seat) == step for seat, step in zip(STUDENTS, steps, strict=True)
    )
    opened = [o.event for o in game.outcomes if o.state.round2.lanes][:1]
    assert opened == ["ROUND_2_TALKS_OPENED"] and "ROUND_2_READY" not in {o.event for o in game.outcomes}


def test_two_pairs_talk_at_once_and_their_lanes_end_in_either_order(scenario: Scenario) -> None:
    """USA with an AI and CAN with CHN, moves interleaved at random; whichever pair ends first moves on to its
    next choice while the other still talks, and Round 2 ends when every lane is over."""
    firsts = set()
    for seed in range(6):
        game, draw = _two_pairs(scenario), random.Random(seed)
        ended: list[str] = []

        def pick(steps: list[Step], game: PureGame = game, draw: random.Random = draw) -> Step:
            return draw.choice([s for s in steps if s.kind != "system"] or steps)

        def both_ended(game: PureGame = game, ended: list[str] = ended) -> bool:
            for talk in game.state.round2.conversations[:2]:
                if talk.phase == "CLOSED" and talk.partner not in ended:
                    ended.append(talk.partner)
            return len(ended) == 2

        _play_lanes(game, pick, until=both_ended)
        firsts.add(ended[0])
        usa, can = game.state.round2.conversations[:2]
        for talk in (usa, can):
            assert (talk.human_turns, talk.partner_turns, talk.human_final, talk.partner_final) == (
                5,
                5,
                1,
                1,
            )
        said = [e for e in game.entries if e.kind == "message"]
        assert {tuple(e.audience) for e in said} >= {("BRA", "USA"), ("CAN", "CHN")}
        assert all(e.speaker in e.audience and len(e.audience) == 2 for e in said)
        # Interleaved: the two talks' messages alternate in the transcript, they were not played one after the other.
        pairs = [tuple(e.audience) for e in said if tuple(e.audience) in (("BRA", "USA"), ("CAN", "CHN"))]
        assert sum(a != b for a, b in zip(pairs, pairs[1:], strict=False)) > 4
        game.play(POLICY, until="ROUND_3_SETUP")
        assert all(lane.phase == "ROUND_2_WRAP_UP" for lane in game.state.round2.lanes)
        game.play(POLICY)
        assert game.state.status == "REVIEW"
    assert firsts == {"BRA", "CHN"}  # each pair ended first in some interleaving


def test_a_student_chosen_by_another_is_in_that_talk_and_chooses_their_own_after_it(
    scenario: Scenario,
) -> None:
    game = _two_pairs(scenario)
    china = game.state.lane("CHN")
    assert china is not None and china.joined == 1 and china.phase == "ROUND_2_SELECT_CONVO_1"
    assert machine.lane_step(game.state, "CHN") == machine.lane_step(game.state, "CAN")  # the talk's step
    assert machine.lane_step(game.state, "CHN").role == "CAN"  # type: ignore[union-attr]  # Canada writes first
    with pytest.raises(IllegalEvent):  # China's own choice waits until the talk ends
        _start(game, "CHN", "EU")
    with pytest.raises(InvalidMove) as wrong:  # nor may China write Canada's turn
        game.apply("HUMAN_MESSAGE_SUBMITTED", {"text": "Hello.", "seat": "CHN", "seen": game.state.event_seq})
    assert wrong.value.reason == InvalidMove.WRONG_ACTOR
    _play_lanes(
        game, lambda steps: next(s for s in steps if s.lane == "CAN"),
        until=lambda: game.state.lane("CAN").talk is None,  # type: ignore[union-attr]  # closed, and let go
    )  # fmt: skip
    china = game.state.lane("CHN")
    assert china is not None and china.joined is None and china.phase == "ROUND_2_SELECT_CONVO_1"
    step = machine.lane_step(game.state, "CHN")
    assert step is not None and (step.role, step.purpose) == ("CHN", "partner")
    assert step.events == ("CONVO_1_STARTED",)
    with pytest.raises(InvalidMove) as again:
        _start(game, "CHN", "CAN")
    assert again.value.reason == InvalidMove.SAME_PARTNER


def test_a_student_in_a_talk_cannot_be_chosen_and_is_told_so_in_words(scenario: Scenario) -> None:
    game = _two_pairs(scenario)
    _play_lanes(
        game, lambda steps: next(s for s in steps if s.lane == "USA"),
        until=lambda: game.state.lane("USA").phase == "ROUND_2_SELECT_CONVO_2",  # type: ignore[union-attr]
    )  # fmt: skip
    for busy in ("CAN", "CHN"):
        with pytest.raises(TalkRefusal) as refused:
            _start(game, "USA", busy, "CONVO_2_STARTED")
        assert refused.value.reason == TalkRefusal.PARTNER_BUSY
    assert "another private talk" in TalkRefusal.STUDENT_SENTENCES[TalkRefusal.PARTNER_BUSY]
    _start(game, "USA", "EU", "CONVO_2_STARTED")  # a delegation is never busy
    assert game.state.lane("USA").talk == 2  # type: ignore[union-attr]


def test_a_move_made_before_its_own_lane_moved_is_refused_other_lanes_do_not_count(
    scenario: Scenario,
) -> None:
    game = _two_pairs(scenario)
    drawn = game.state.event_seq  # the pages of all three are drawn here
    game.apply("HUMAN_MESSAGE_SUBMITTED", {"text": "We support 1.1.", "seat": "USA", "seen": drawn})
    # Canada's page was drawn before the United States moved: another lane, so Canada's message stands.
    game.apply("HUMAN_MESSAGE_SUBMITTED", {"text": "We support 2.1.", "seat": "CAN", "seen": drawn})
    # China now has the floor in that talk; a message China sent from a page drawn before Canada's is stale.
    with pytest.raises(TalkRefusal) as stale:
        game.apply("HUMAN_MESSAGE_SUBMITTED", {"text": "We agree.", "seat": "CHN", "seen": drawn})
    assert stale.value.reason == TalkRefusal.LANE_MOVED and stale.value.reason in TalkRefusal.TURN_REASONS
    game.apply("HUMAN_MESSAGE_SUBMITTED", {"text": "We agree.", "seat": "CHN", "seen": game.state.event_seq})
    with pytest.raises(TalkRefusal) as nameless:  # a lane's move names its seat
        game.apply("HUMAN_MESSAGE_SUBMITTED", {"text": "Hello."})
    assert nameless.value.reason == TalkRefusal.NO_LANE


def test_a_delegation_in_two_talks_at_once_answers_each_from_that_talk_alone(scenario: Scenario) -> None:
    """AMAP, chosen by two students at once, answers each from that talk's lines; the third student sees neither."""
    game = _round_2(scenario)
    _start(game, "USA", "AMAP")
    _start(game, "CAN", "AMAP")
    draw = random.Random(4)
    prompts_seen = 0
    while (
        game.state.round2.conversations[0].phase != "CLOSED"
        or game.state.round2.conversations[1].phase != "CLOSED"
    ):
        steps = [s for s in _steps(game) if s.lane in ("USA", "CAN") and s.purpose != "partner"]
        step = draw.choice(steps)
        if step.kind == "ai":
            seen = [
                prompts.SeenEntry(e.seq, e.speaker, e.kind, e.visibility, e.audience, e.text)
                for e in game.entries
            ]
            state = machine.focused(game.state, step.lane)
            prompt = prompts.build_prompt(scenario, state, step, seen, [])
            own = sorted([str(step.lane), "AMAP"])
            other = game.state.round2.conversations[1 if step.lane == "USA" else 0]
            talk_lines = {e.seq: e.audience for e in game.entries if e.visibility == "private"}
            held = [talk_lines[seq] for seq in prompt.context if seq in talk_lines]
            assert own in held or prompts_seen == 0
            # A talk still open: none of its words (a closed one is AMAP's memory).
            if other.phase != "CLOSED":
                assert held and all(audience == own for audience in held), "another open talk's words"
            prompts_seen += 1
        game.step(POLICY, step)
    assert prompts_seen >= 10
    talks = [e for e in game.entries if e.visibility == "private"]
    assert talks and not any(visible_to(e, "CHN") for e in talks)  # the third student sees neither talk


def test_a_class_groups_game_resumes_mid_round_2_with_two_lanes_open(scenario: Scenario) -> None:
    game = _two_pairs(scenario)
    draw = random.Random(2)
    _play_lanes(game, lambda steps: draw.choice(steps), until=lambda: game.state.event_seq >= 40)
    assert sum(lane.talk is not None for lane in game.state.round2.lanes) == 2  # two talks open
    stored = game.state.model_dump(mode="json")
    restored = machine.resume(scenario, stored)
    assert restored.model_dump() == game.state.model_dump()
    assert machine.next_step(scenario, restored) == machine.next_step(scenario, game.state)
    # The same moves from the restored state and from the uninterrupted one end in the same game.
    twin = PureGame(scenario, restored, list(game.entries))
    for played in (game, twin):
        again = random.Random(9)
        _play_lanes(played, again.choice, until=lambda p=played: p.state.status != "ROUND_2_TALKS")  # type: ignore[misc]
    assert twin.state.model_dump() == game.state.model_dump()
    assert [e.text for e in twin.entries] == [e.text for e in game.entries]


def test_resume_refuses_lanes_that_are_not_the_students(scenario: Scenario) -> None:
    stored = _two_pairs(scenario).state.model_dump(mode="json")
    stored["round2"]["lanes"] = stored["round2"]["lanes"][:2]
    with pytest.raises(Exception, match="lanes are not the students"):
        machine.resume(scenario, stored)


def test_a_game_of_one_student_has_no_lanes_and_takes_no_lane_fields(scenario: Scenario) -> None:
    game = new_pure_game(scenario, seed=2).play(Passive("BRA"), until="ROUND_2_CONVERSATION_ACTIVE")
    assert [o.event for o in game.outcomes if o.event.startswith("ROUND_2")] == ["ROUND_2_READY"]
    stored = game.state.model_dump(mode="json")
    assert "lanes" not in stored["round2"] and "focus" not in stored["round2"]  # stored exactly as before
    assert '"lanes"' not in game.state.model_dump_json()
    step = machine.next_step(scenario, game.state)
    assert step.lane is None and step.lanes == ()
    with pytest.raises(InvalidMove) as refused:
        machine.apply(scenario, game.state, step.events[0], {"text": "Hello.", "seat": "BRA"})
    assert refused.value.reason == InvalidMove.UNKNOWN_FIELD


def test_a_group_game_stored_before_lanes_takes_its_talks_in_turn(scenario: Scenario) -> None:
    game = one_student_at_a_time(scenario, seed=3)
    assert game.state.status == "REVIEW" and not game.state.round2.lanes
    talkers = [str(game.state.talker_of(c)) for c in game.state.round2.conversations]
    assert talkers == sorted(talkers) and set(talkers) == {"BRA", "TZA"}  # Brazil's talks, then Tanzania's
    assert sum(o.event == "ROUND_2_NEXT_STUDENT" for o in game.outcomes) == 1


def test_the_seats_are_the_platforms_to_set_and_must_be_seats(scenario: Scenario) -> None:
    game = new_pure_game(scenario, seed=1)
    for others in (["USA", "USA"], ["CAN"], ["JPN"]):
        with pytest.raises(InvalidMove):
            machine.apply(scenario, game.state, "ROLE_CONFIRMED", {"role": "CAN", "others": others})
    assert "others" not in machine.STUDENT_EVENTS["ROLE_CONFIRMED"]
    assert all({"seat", "seen"}.isdisjoint(fields) for fields in machine.STUDENT_EVENTS.values())


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


def test_a_stand_ins_move_in_a_lane_is_marked_and_moves_that_lane_only(scenario: Scenario) -> None:
    game = _two_pairs(scenario)
    lanes_before = {lane.seat: lane.since for lane in game.state.round2.lanes}
    payload = {"text": "We support 1.1.", "seat": "USA", "seen": game.state.event_seq, "stand_in": True}
    outcome = game.apply("HUMAN_MESSAGE_SUBMITTED", payload)
    assert outcome.actor == "stand-in:USA" and outcome.entries[0].text.startswith(machine.STAND_IN_MARK)
    moved = {lane.seat for lane in game.state.round2.lanes if lane.since != lanes_before[lane.seat]}
    assert moved == {"USA"}
