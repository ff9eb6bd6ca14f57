"""Finding 6: NUL bytes are refused cleanly (SQLite and PostgreSQL: CI runs this module on both), messages with
nothing visible are refused without using up the turn, and bidi overrides never reach the transcript."""

from __future__ import annotations

import html

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client

from simulations.engine.errors import InvalidMove
from simulations.kinds.negotiation.human_turns import submit_human_event
from simulations.models import Event, Game, TranscriptEntry
from simulations.services.policy.message_text import (
    CONTROL_CHARACTERS,
    FIELD_SENTENCES,
    LINE_BREAK,
    NO_VISIBLE_TEXT,
    ReadableTextField,
)
from simulations.services.policy.move_form import NulInForm
from simulations.services.policy.student_errors import for_student
from tests.helpers import game_in_private_talk

pytestmark = pytest.mark.django_db


def _in_private_talk() -> tuple[Client, Game]:
    owner = User.objects.create_user(f"in{User.objects.count()}", password="a-long-test-passphrase-42")
    client = Client()
    client.force_login(owner)
    return client, game_in_private_talk(client, owner)


def _say(client: Client, game: Game, text: str, **extra: str) -> tuple[int, str]:
    form = {"event": "HUMAN_MESSAGE_SUBMITTED", "text": text, "version": str(game.version), **extra}
    response = client.post(f"/games/{game.pk}/move/", form, HTTP_HX_REQUEST="true")
    return response.status_code, html.unescape(response.content.decode())


def _messages(game: Game) -> int:
    return Event.objects.filter(game=game, name="HUMAN_MESSAGE_SUBMITTED").count()


@pytest.mark.parametrize(
    ("text", "extra"),
    [("We support 2.1.\x00", {}), ("\x00", {}), ("We support 2.1.", {"idem": "ab\x00cd"})],
)
def test_a_nul_byte_anywhere_in_a_move_is_a_clear_400_and_the_turn_stays_open(
    text: str, extra: dict[str, str]
) -> None:
    client, game = _in_private_talk()
    status, body = _say(client, game, text, **extra)
    assert status == 400 and NulInForm.MESSAGE in body
    assert _messages(game) == 0
    status, _ = _say(client, game, "We support 2.1.")
    assert status == 200 and _messages(game) == 1


def test_control_characters_are_refused_by_the_service_too() -> None:
    _, game = _in_private_talk()
    for text in ("a\x00b", "a\x07b", "a\x1bb"):
        with pytest.raises(InvalidMove) as refused:
            submit_human_event(
                game=Game.objects.get(pk=game.pk), event="HUMAN_MESSAGE_SUBMITTED", payload={"text": text}
            )
        assert refused.value.reason == CONTROL_CHARACTERS
    assert _messages(game) == 0


@pytest.mark.parametrize(
    "invisible",
    [
        "\u200b", "\u200b\u200c\u200d\ufeff", " \u2060\u00a0\u3000 ", "\u202e\u202c", "\u200e\u200f", "\u180e",
        # fillers that are letters or symbols yet draw nothing, and a combining mark with no base
        "\u3164", "\u2800\u2800", "\u0301", "\u115f\u1160 \uffa0", "\ufe0f\u0301",
    ],
)  # fmt: skip
def test_a_message_with_nothing_visible_is_refused_without_using_up_the_turn(invisible: str) -> None:
    client, game = _in_private_talk()
    version = game.version
    status, body = _say(client, game, invisible)
    assert status == 400 and for_student(InvalidMove("", "", NO_VISIBLE_TEXT)) in body
    assert "nothing visible" in body
    game.refresh_from_db()
    assert game.version == version and _messages(game) == 0
    status, _ = _say(client, game, "Canada can support option 2.1.")
    assert status == 200 and _messages(game) == 1


def test_bidi_overrides_and_isolates_are_removed_before_storing() -> None:
    client, game = _in_private_talk()
    sent = "We support \u202eoption 2.1\u202c and \u2067not 2.3\u2069."
    status, _ = _say(client, game, sent)
    assert status == 200
    stored = TranscriptEntry.objects.filter(game=game, speaker="CAN", kind="message").get().text
    assert stored == "We support option 2.1 and not 2.3."
    assert Event.objects.get(game=game, name="HUMAN_MESSAGE_SUBMITTED").payload["text"] == stored


@pytest.mark.parametrize(
    ("field", "typed", "kept"),
    [
        (ReadableTextField(), "  We support 2.1.\r\n", "  We support 2.1.\n"),
        (ReadableTextField(required=False), " \t ", ""),
        (ReadableTextField(one_line=True, required=False), "   ", ""),
        (ReadableTextField(one_line=True), "  report.py ", "report.py"),
    ],
)
def test_the_shared_field_keeps_readable_text(field: ReadableTextField, typed: str, kept: str) -> None:
    assert field.clean(typed) == kept


@pytest.mark.parametrize(
    ("field", "typed", "reason"),
    [
        (ReadableTextField(), "a\x00b", CONTROL_CHARACTERS),
        (ReadableTextField(required=False), "\x1b[2J", CONTROL_CHARACTERS),
        (ReadableTextField(), "\u3164\u2800", NO_VISIBLE_TEXT),
        (ReadableTextField(one_line=True), "ok.py\n# heading", LINE_BREAK),
    ],
)
def test_the_shared_field_refuses_in_a_fields_words(
    field: ReadableTextField, typed: str, reason: str
) -> None:
    with pytest.raises(ValidationError) as refused:
        field.clean(typed)
    assert refused.value.messages == [FIELD_SENTENCES[reason]]
