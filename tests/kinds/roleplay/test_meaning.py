"""The offline judge's reading by meaning (meaning.py): cues found by stem and in order, negation aware, numbers in
any spelling; several steps from one message, each on words of its own, never ending in FAIL; the character's
answer to what the student did; the scenario's new fields validated (cues name clauses of their condition) while a
seed file without them still loads."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import ValidationError

from simulations.kinds.roleplay import graph, machine, meaning, offline
from simulations.kinds.roleplay.scenario import SCENARIO_ROOT, describe, load_file, validate_scenario

from .tiny import tiny


def met(cue: str, message: str) -> bool:
    return meaning.find(cue, meaning.read(message)) is not None


@pytest.mark.parametrize(
    ("cue", "message"),
    [
        ("money back", "I'll put your money back on the card."),
        ("make you a new", "Let me make you a brand new one."),  # up to GAP words between
        ("apologize", "I apologise for that."),  # British spelling
        ("refund", "No problem, I'll refund it."),  # "no problem" negates nothing
        ("86000", "I have an offer at $86,000."),
        ("86000", "They offered me 86k."),
        ("25% of 400000", "That's 25 percent of 400,000."),
        ("108 million & three years", "About $108m a year, so it pays back in three years."),
        ("not negotiable", "The date is not negotiable."),  # a cue that says the negation itself
        (
            "propose | our plan & ban | phase out",
            "Our plan is to phase it out.",
        ),  # one alternative of each part
    ],
)
def test_a_cue_is_found_by_stem_in_order_and_numbers_in_any_spelling(cue: str, message: str) -> None:
    assert met(cue, message)


@pytest.mark.parametrize(
    ("cue", "message"),
    [
        ("refund", "I won't refund you."),
        ("refund", "There will be no refund."),
        ("ahead of the queue", "I can't put you ahead of the queue."),
        ("money back", "Back to the money question."),  # order matters
        ("make you a new", "Make it. You a new one?"),  # within one sentence
        ("make you a new", "I could make, if you like, for you and everyone, a new one."),  # too far apart
        ("not negotiable", "The date is negotiable."),
        ("propose | our plan & ban | phase out", "What worries you about a phase out?"),  # a part is missing
        ("i want #", "I want to thank you."),
    ],
)
def test_a_cue_is_not_found_negated_out_of_order_or_apart(cue: str, message: str) -> None:
    assert not met(cue, message)


def test_a_negation_reaches_to_the_end_of_its_stretch_only() -> None:
    assert met("refund", "I can't change the milk, but I'll refund it.")
    assert met("refund", "Not ideal, I'll refund it.")


def cafe() -> Any:
    return load_file(SCENARIO_ROOT / "cafe-barista.json")[0]


def judged(text: str, *before: str) -> tuple[Any, Any]:
    s = cafe()
    state = machine.start(s, seed=1, username="Sam").state
    for line in (*before, text):
        state = machine.apply(s, state, "STUDENT_SPOKE", {"text": line}).state
        verdict = offline.judge(s, state)
        state = machine.apply(s, state, "TRANSITION_JUDGED", verdict).state
        state = machine.apply(s, state, "CHARACTER_REPLIED", {"text": offline.reply(s, state)}).state
    return verdict, state


def test_one_message_takes_every_step_it_makes_each_on_its_own_words() -> None:
    verdict, state = judged(
        "I'm so sorry, that was completely our fault. I'll make you a fresh one with oat, ahead of the queue."
    )
    steps = [j.to_state for j in state.judgments if j.is_transition]
    assert steps == ["AcknowledgeFeelings", "TakeOwnership", "OfferRemake", "PrioritizeOrder"]
    assert verdict["to_state"] == "AcknowledgeFeelings" and len(verdict["also"]) == 3
    assert all(j.turn == 1 for j in state.judgments)
    assert "SendToBackOfQueue" in state.blocked  # the fork taken along the way blocked its sibling
    # the character answers the steps it heard, each by its own line, a step the message went beyond by the deeper
    s = cafe()
    lines = [offline.quotes(s.spec(n).addprompt)[0] for n in ("TakeOwnership", "PrioritizeOrder")]
    assert state.messages[-1].text == " ".join(lines)


def test_a_phrase_that_met_one_step_does_not_meet_another() -> None:
    _, state = judged("That's our mistake.")  # TakeOwnership, open from the start
    steps = [j.to_state for j in state.judgments if j.is_transition]
    assert steps == ["TakeOwnership"]  # and not OfferGoodwill too, which it opens


def test_a_further_step_never_ends_the_conversation_in_fail() -> None:
    _, state = judged("You'll have to wait in line again, rules are rules.", "I'll make you a new one.")
    assert state.outcome == "" and state.visited[-1] == "SendToBackOfQueue"
    _, state = judged("Rules are rules.", "I'll make you a new one.", "Please wait in line again.")
    assert state.outcome == "FAIL"  # insisting after Dana has reacted does end it


def test_the_machine_refuses_a_further_step_that_is_not_open() -> None:
    s = cafe()
    state = machine.start(s, seed=1, username="Sam").state
    state = machine.apply(s, state, "STUDENT_SPOKE", {"text": "x"}).state
    with pytest.raises(machine.Refusal):
        machine.apply(s, state, "TRANSITION_JUDGED", {
            "is_transition": True, "to_state": "OfferRemake", "also": [{"to_state": "OfferGoodwill"}],
        })  # fmt: skip
    with pytest.raises(machine.Refusal):  # nothing follows an ending
        machine.apply(s, state, "TRANSITION_JUDGED", {
            "is_transition": True, "to_state": "FAIL", "also": [{"to_state": "OfferRemake"}],
        })  # fmt: skip
    ok = machine.apply(s, state, "TRANSITION_JUDGED", {
        "is_transition": True, "to_state": "OfferRemake", "also": [{"to_state": "PrioritizeOrder"}],
    }).state  # fmt: skip
    assert ok.visited == ["START", "OfferRemake", "PrioritizeOrder"] and ok.blocked == ["SendToBackOfQueue"]


@pytest.mark.parametrize(
    ("message", "intent"),
    [
        ("Can you tell me more?", "question"),
        ("What's the timeline", "question"),
        ("Great, I accept.", "accept"),
        ("I can't accept that.", "press"),
        ("I was thinking 88k.", "number"),
        ("How about we split the difference", "question"),
        ("We could split the difference.", "offer"),
        ("There's no way I can skip the queue.", "press"),
        ("Thanks for that.", "thanks"),
        ("That's ridiculous.", "rude"),
        ("Hmm.", "press"),
    ],
)
def test_the_character_reads_what_the_student_did(message: str, intent: str) -> None:
    assert offline.intent(message) == intent


def broken(change: Any) -> str:
    doc = copy.deepcopy(tiny())
    change(doc)
    with pytest.raises(ValidationError) as caught:
        validate_scenario(doc)
    return describe(caught.value)


def test_cues_must_name_a_clause_of_their_condition() -> None:
    apology = ("states", "CalmBranch", "Apology")

    def stray(d: dict[str, Any]) -> None:
        d["states"]["CalmBranch"]["Apology"]["cues"] = {"offers a refund": ["money back"]}

    assert f"{'.'.join(apology)}.cues.offers a refund: not a clause of the condition" in broken(stray)

    def empty(d: dict[str, Any]) -> None:
        d["states"]["CalmBranch"]["Apology"]["cues"] = {"apologizes for the mistake": []}

    assert "give at least one paraphrase" in broken(empty)

    def on_a_target(d: dict[str, Any]) -> None:
        d["states"]["CalmBranch"]["Remake"]["cues"] = {"x": ["y"]}

    assert "states.CalmBranch.Remake.cues: cues belong to a condition" in broken(on_a_target)

    def bad_voice(d: dict[str, Any]) -> None:
        d["voice"] = {"gossip": ["Did you hear?"]}

    assert "voice.gossip" in broken(bad_voice)

    def placeholder(d: dict[str, Any]) -> None:
        d["voice"] = {"press": ["Well, {customer}?"]}

    assert "voice.press.0: unknown placeholder {customer}" in broken(placeholder)


def test_a_seed_file_without_the_new_fields_loads_and_is_read_by_its_key_words() -> None:
    s = validate_scenario(tiny())
    assert s.voice == {} and s.plain_of("Apology") == "" and s.tstates["SUCCESS"].cues == {}  # type: ignore[index]
    state = machine.start(s, seed=1, username="Sam").state
    state = machine.apply(s, state, "STUDENT_SPOKE", {"text": "I apologize for the mistake."}).state
    assert offline.judge(s, state)["to_state"] == "Apology"


def test_every_shipped_scenario_speaks_plain_words_and_reads_every_condition_by_cues() -> None:
    from simulations.kinds.roleplay import conditions

    for path in sorted(SCENARIO_ROOT.glob("*.json")):
        s = load_file(path)[0]
        names = set(s.state_names())
        assert all(s.plain_of(n) for n in [*names, "SUCCESS", "FAIL"]), path.name
        assert set(s.voice) == {"question", "number", "offer", "accept", "thanks", "rude", "press"}, path.name
        options = graph.available(s, ["START"], [])  # the initial states and the endings
        options += [o for n in names for o in graph.available(s, ["START", n], []) if o.source == n]
        for option in options:
            keyed = {conditions.clause_key(k) for k in offline.cues_of(s, option)}
            assert set(conditions.word_clauses(option.condition, names)) <= keyed, (path.name, option.key)


def test_each_message_says_the_steps_it_reached_in_plain_words_and_leaving_is_no_messages_doing() -> None:
    from simulations.kinds.roleplay.presenters import context

    s = cafe()
    _, state = judged("I'm so sorry, that was our fault. I'll make you a fresh one with oat.")
    names = ("AcknowledgeFeelings", "TakeOwnership", "OfferRemake")
    [student] = [line for line in context(s, state)["lines"] if line["role"] == "student"]
    assert student["steps"] == [s.spec(n).plain for n in names]
    left = machine.apply(s, state, "STUDENT_LEFT", {}).state
    assert [line["steps"] for line in context(s, left)["lines"] if line["role"] == "student"] == [
        student["steps"]
    ]
