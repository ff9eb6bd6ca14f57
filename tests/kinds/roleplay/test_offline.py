"""The offline judge's reading of conditions (key words, AND/OR, states named, negation) and its character, and the
command line: `play --scenario cafe-barista --human quitter` plays a conversation to FAIL."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from simulations.kinds.roleplay import conditions, machine, offline
from simulations.kinds.roleplay.scenario import validate_scenario

from .conftest import store
from .tiny import tiny

STATES = {"Apology", "Remake", "Excuse", "Question"}


def holds(condition: str, message: str, visited: tuple[str, ...] = ("START",)) -> bool:
    return conditions.read(condition, message, visited=visited, state_names=STATES).holds


def test_half_the_key_words_by_stem_make_a_clause() -> None:
    assert holds("{username} apologizes for the mistake", "I apologise, that mistake was ours")
    assert holds("{username} apologizes for the mistake", "Sorry, my mistake.")  # 1 of 2 key words: half
    assert not holds("{username} proposes a structured analytical approach", "Let me think.")
    assert not holds("{username} asks", "I ask, I ask")  # only generic words: never holds


def test_and_needs_every_clause_and_or_any_alternative() -> None:
    cond = "{username} offers a refund AND apologizes OR blames the colleague"
    assert holds(cond, "Here is a refund, I apologize.")
    assert not holds(cond, "Here is a refund.")
    assert holds(cond, "That was my colleague's fault, he blames everyone.")


def test_a_clause_naming_states_checks_the_visited_ones() -> None:
    cond = "{username} has reached Remake AND Question AND wishes a good trip"
    assert not holds(cond, "Have a good trip!", ("START", "Remake"))
    assert holds(cond, "Have a good trip!", ("START", "Remake", "Question"))


def test_a_negated_key_word_does_not_count() -> None:
    assert not holds("{username} offers a refund", "I will not refund this.")
    assert holds("{username} offers a refund", "I will refund this.")


def test_the_offline_character_speaks_the_entered_states_line_and_presses_otherwise() -> None:
    s = validate_scenario(tiny())
    state = machine.start(s, seed=1, username="Sam").state
    state = machine.apply(s, state, "STUDENT_SPOKE", {"text": "Lovely weather."}).state
    verdict = offline.judge(s, state)
    assert verdict["is_transition"] is False and verdict["explanation"] == offline.NOTHING_MOVED
    state = machine.apply(s, state, "TRANSITION_JUDGED", verdict).state
    assert offline.reply(s, state) in offline.quotes(s.negprompt)
    state = machine.apply(s, state, "CHARACTER_REPLIED", {"text": "x"}).state
    state = machine.apply(s, state, "STUDENT_SPOKE", {"text": "I apologize for the mistake."}).state
    verdict = offline.judge(s, state)
    assert verdict["to_state"] == "Apology" and "“apologize" in str(verdict["explanation"])
    state = machine.apply(s, state, "TRANSITION_JUDGED", verdict).state
    assert offline.reply(s, state) == "Fine. It happens, I suppose."


@pytest.mark.django_db(transaction=True)
def test_play_runs_a_conversation_from_the_command_line() -> None:
    store("cafe-barista.json")
    out = StringIO()
    call_command(
        "play", "--scenario", "cafe-barista", "--human", "quitter", "--seed", "4", "--quiet", stdout=out
    )
    from simulations.models import Game

    game = Game.objects.get()
    assert game.phase == "ENDED" and game.state["visited"][-1] == "FAIL"
