"""The seed's engine on a small scenario: each source of open transitions, fork blocking, the accumulated prompt's
order, both terminal states, and (Hypothesis) that no blocked or unavailable state is ever entered."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulations.engine.errors import IllegalEvent, InvalidMove
from simulations.kinds.roleplay import graph, machine
from simulations.kinds.roleplay.document import Status
from simulations.kinds.roleplay.scenario import RoleplayScenario, validate_scenario

from .tiny import tiny


@pytest.fixture
def s() -> RoleplayScenario:
    return validate_scenario(tiny())


def keys(s: RoleplayScenario, visited: list[str], blocked: list[str] = []) -> list[str]:  # noqa: B006
    return [o.key for o in graph.available(s, visited, blocked)]


def test_at_the_start_only_initial_states_and_the_terminals_are_open(s: RoleplayScenario) -> None:
    assert keys(s, ["START"]) == ["INITIAL:Apology", "INITIAL:Question", "GLOBAL:SUCCESS", "GLOBAL:FAIL"]


def test_a_visited_state_opens_its_transitions_and_leaves_the_initial_list(s: RoleplayScenario) -> None:
    assert keys(s, ["START", "Apology"]) == [
        "INITIAL:Question", "Apology:Remake", "Apology:Excuse", "GLOBAL:SUCCESS", "GLOBAL:FAIL",
    ]  # fmt: skip


def test_a_reached_terminal_is_no_longer_offered(s: RoleplayScenario) -> None:
    assert "GLOBAL:FAIL" not in keys(s, ["START", "FAIL"])


def test_a_fork_taken_blocks_its_fork_siblings_for_good(s: RoleplayScenario) -> None:
    options = graph.available(s, ["START", "Apology"], [])
    remake = next(o for o in options if o.target == "Remake")
    visited, blocked = graph.enter(s, ["START", "Apology"], [], remake)
    assert visited == ["START", "Apology", "Remake"] and blocked == ["Excuse"]
    assert "Excuse" not in [o.target for o in graph.available(s, visited, blocked)]
    assert graph.state_marks(s, visited, blocked)["Excuse"] == "blocked"


def test_a_parallel_transition_blocks_nothing(s: RoleplayScenario) -> None:
    doc = tiny()
    doc["states"]["CalmBranch"]["Apology"]["transitions"]["Remake"]["type"] = "parallel"
    p = validate_scenario(doc)
    remake = next(o for o in graph.available(p, ["START", "Apology"], []) if o.target == "Remake")
    assert graph.enter(p, ["START", "Apology"], [], remake)[1] == []


def test_ties_go_fail_then_success_then_deeper_then_initial(s: RoleplayScenario) -> None:
    order = [o.key for o in graph.by_priority(graph.available(s, ["START", "Apology"], []))]
    assert order == ["GLOBAL:FAIL", "GLOBAL:SUCCESS", "Apology:Remake", "Apology:Excuse", "INITIAL:Question"]


def test_the_prompt_accumulates_character_negprompt_then_visited_states_in_visit_order(
    s: RoleplayScenario,
) -> None:
    prompt = graph.accumulated_prompt(s, ["START", "Question", "Apology"], username="Sam")
    parts = [s.character, s.negprompt, s.spec("Question").addprompt, s.spec("Apology").addprompt]
    positions = [prompt.index(p) for p in parts]
    assert positions == sorted(positions)
    assert prompt.endswith(graph.GUIDELINES.replace("{botname}", "Ada").replace("{username}", "Sam"))
    assert "{username}" not in prompt and "Remake" not in prompt


def play(s: RoleplayScenario, *moves: tuple[str, dict[str, object]]) -> machine.RoleplayState:
    state = machine.start(s, seed=3, username="Sam").state
    for event, payload in moves:
        state = machine.apply(s, state, event, payload).state
    return state


def said(text: str) -> tuple[str, dict[str, object]]:
    return ("STUDENT_SPOKE", {"text": text})


def judged(target: str = "") -> tuple[str, dict[str, object]]:
    return ("TRANSITION_JUDGED", {"is_transition": bool(target), "to_state": target, "explanation": "test"})


REPLY: tuple[str, dict[str, object]] = ("CHARACTER_REPLIED", {"text": "Hm."})


@pytest.mark.parametrize("terminal", ["SUCCESS", "FAIL"])
def test_either_terminal_state_ends_the_conversation_after_the_characters_last_words(
    s: RoleplayScenario, terminal: str
) -> None:
    state = play(s, said("x"), judged(terminal))
    assert state.status is Status.CHARACTER_TURN and state.outcome == terminal
    prompt = graph.accumulated_prompt(s, state.visited, username="Sam")
    assert prompt.count(s.tstates[terminal].addprompt) == 1  # type: ignore[index]
    state = machine.apply(s, state, *REPLY).state
    assert state.status is Status.ENDED and machine.next_step(state).done
    with pytest.raises(IllegalEvent):
        machine.apply(s, state, *said("one more"))


def test_a_judge_naming_a_state_that_is_not_open_is_refused_and_changes_nothing(s: RoleplayScenario) -> None:
    state = play(s, said("x"))
    for target in ("Remake", "Nowhere", "START"):
        with pytest.raises(InvalidMove, match="not open"):
            machine.apply(s, state, *judged(target))
    assert state.visited == ["START"] and state.status is Status.JUDGING


def test_leaving_ends_in_fail_with_the_reason(s: RoleplayScenario) -> None:
    state = play(s, ("STUDENT_LEFT", {}), REPLY)
    assert state.outcome == "FAIL" and state.status is Status.ENDED
    assert "ended the conversation" in state.judgments[-1].explanation


def test_the_student_cannot_speak_while_the_judge_or_the_character_has_the_turn(s: RoleplayScenario) -> None:
    state = play(s, said("x"))
    with pytest.raises(IllegalEvent):
        machine.apply(s, state, *said("again"))
    with pytest.raises(InvalidMove):
        machine.apply(s, play(s), "STUDENT_SPOKE", {"text": ""})


# --- the property: whatever a judge says, the graph decides --------------------------------------------------

TARGETS = ["Apology", "Remake", "Excuse", "Question", "SUCCESS", "FAIL", "START", "Nowhere", ""]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(TARGETS), max_size=12))
def test_no_blocked_or_unavailable_state_is_ever_entered(answers: list[str]) -> None:
    s = validate_scenario(tiny())
    state = machine.start(s, seed=1, username="Sam").state
    for target in answers:
        if state.status is Status.ENDED:
            break
        state = machine.apply(s, state, *said("x")).state
        open_now = {o.target for o in graph.available(s, state.visited, state.blocked)}
        blocked_before = set(state.blocked)
        try:
            state = machine.apply(s, state, *judged(target)).state
        except InvalidMove:
            assert target and target not in open_now  # refused exactly when the target was not open
            state = machine.apply(s, state, *judged()).state
        else:
            if target:
                assert target in open_now and target not in blocked_before
        assert not set(state.blocked) & set(state.visited)
        assert len(state.visited) == len(set(state.visited))
        state = machine.apply(s, state, *REPLY).state
