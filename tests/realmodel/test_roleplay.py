"""Practice conversations on a real model's path: litellm over HTTP to the fake OpenAI-compatible server. The
judge's JSON is read however it is wrapped and checked against the open transitions: a target that is not open is
refused and logged (no transition); an answer that is not JSON twice fails the turn, commits nothing, and the
conversation goes on once the model answers properly."""

from __future__ import annotations

import json
import logging

import pytest

from simulations.ai.gateway import ModelFailure
from simulations.kinds.roleplay.document import Status
from simulations.kinds.roleplay.games import state_of
from simulations.kinds.roleplay.turns import say
from simulations.models import Game, ModelCall
from simulations.services.play.drive import Outcome, drive_game
from tests.kinds.roleplay.conftest import new_chat, store

from .fake_openai import FakeOpenAI, Fault

pytestmark = pytest.mark.django_db(transaction=True)


def _chat() -> Game:
    game = new_chat(store("cafe-barista.json"))
    return say(game, "I'm so sorry, that's our mistake.")


def verdict(**answer: object) -> Fault:
    return Fault(body=json.dumps(answer))


def test_the_judges_answer_moves_the_graph_and_the_character_speaks(fake: FakeOpenAI) -> None:
    answer = {"is_transition": True, "to_state": "AcknowledgeFeelings", "explanation": "They apologised."}
    fake.inject(Fault(body="Here is my decision:\n```json\n" + json.dumps(answer) + "\n```"))
    game = _chat()
    assert drive_game(game_id=game.pk, stream=False).outcome is Outcome.HUMAN
    st = state_of(Game.objects.get(pk=game.pk))
    assert (
        st.visited == ["START", "AcknowledgeFeelings"] and st.judgments[-1].explanation == "They apologised."
    )
    assert st.messages[-1].role == "character" and st.messages[-1].text  # the fake model's words
    roles = list(
        ModelCall.objects.filter(game=game, status="ok").order_by("pk").values_list("role", flat=True)
    )
    assert roles == ["judge", "character"]
    judge_prompt = fake.requests()[0].messages[0]["content"]
    assert "AcknowledgeFeelings:" in judge_prompt and "Be conservative" in judge_prompt
    assert "roleplay-facts" not in json.dumps(fake.requests()[0].messages)  # the offline facts stay offline


def test_a_target_that_is_not_open_is_refused_and_logged(
    fake: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    fake.inject(verdict(is_transition=True, to_state="UseCleanJug", explanation="Clean jug mentioned."))
    game = _chat()
    with caplog.at_level(logging.WARNING, logger="simulations.kinds.roleplay.prompts"):
        drive_game(game_id=game.pk, stream=False)
    st = state_of(Game.objects.get(pk=game.pk))
    assert st.visited == ["START"]  # UseCleanJug is only reached through CheckDairy
    assert st.judgments[-1].refused == "UseCleanJug" and not st.judgments[-1].is_transition
    assert "'UseCleanJug', which is not an open transition" in caplog.text


def test_an_answer_that_is_not_json_fails_the_turn_and_keeps_the_conversation(fake: FakeOpenAI) -> None:
    fake.inject(Fault(body="I think they apologised."), Fault(body="Yes."))
    game = _chat()
    drive = drive_game(game_id=game.pk, stream=False)
    assert drive.outcome is Outcome.FAILED and isinstance(drive.failure, ModelFailure)
    assert drive.failure.cause == "unusable" and "Nothing was lost" in str(drive.failure)
    st = state_of(Game.objects.get(pk=game.pk))
    assert st.status is Status.JUDGING and len(st.judgments) == 0  # nothing committed; the message is kept
    fake.inject(verdict(is_transition=False, to_state="", explanation="Nothing yet."))
    assert drive_game(game_id=game.pk, stream=False).outcome is Outcome.HUMAN
    assert state_of(Game.objects.get(pk=game.pk)).judgments[-1].explanation == "Nothing yet."
