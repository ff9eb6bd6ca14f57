"""Each message's judge reading in the export (simulation-export/3), and model-judged games that import again:
their readings travel in the events' payloads, so the import calls no model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from simulations.kinds.negotiation.games import step_of
from simulations.kinds.negotiation.human_turns import submit_human_event
from simulations.kinds.negotiation.turns import play_ai_step
from simulations.models import Game
from simulations.services.files.export import export_game
from simulations.services.files.import_game import ExportImportError, import_game
from tests.helpers import game_at_first_ai_turn, normalised, played, repin


@pytest.mark.django_db
def test_every_message_and_speech_has_its_reading_in_the_export() -> None:
    game = played("USA", "advocate", seed=4)
    data = export_game(game=game)
    assert data["format"] == "simulation-export/3"
    judged = [e for e in data["transcript"] if e["kind"] in ("message", "speech")]
    readings = data["judge_readings"]
    assert [r["seq"] for r in readings] == [e["seq"] for e in judged]
    events = {e["seq"]: e for e in data["events"]}
    by_seq = {e["seq"]: e for e in judged}
    for reading in readings:
        entry = by_seq[reading["seq"]]
        assert reading["speaker"] == entry["speaker"] and reading["source"] == "rules"
        assert events[reading["event_seq"]]["name"] in (
            "HUMAN_MESSAGE_SUBMITTED", "AI_MESSAGE_COMMITTED", "HUMAN_TURN_SPEAK", "AI_TURN_COMMITTED"
        )  # fmt: skip
        if entry["kind"] == "speech":  # in public debate only the issue under discussion is read
            assert {i["issue"] for i in reading["items"] if "issue" in i} <= {entry["issue"]}
    # The advocate's own speeches are read as backing its brief's options, credibly offering what it can.
    own = [r for r in readings if r["speaker"] == "USA"]
    assert any(i["kind"] == "support" for r in own for i in r["items"])
    assert any(
        i == {"kind": "offer", "offer": "financing", "credible": True} for r in own for i in r["items"]
    )


def _scripted_model(monkeypatch: pytest.MonkeyPatch, speech: str, judge_answer: str) -> None:
    import litellm

    original = litellm.completion

    def completion(*args: Any, **kwargs: Any) -> Any:
        is_judge = kwargs["messages"][0]["content"].startswith("You read one message")
        return original(*args, mock_response=judge_answer if is_judge else speech, **kwargs)

    monkeypatch.setattr(litellm, "completion", completion)


@pytest.mark.django_db
def test_a_model_judged_game_shows_why_a_stance_moved_and_imports(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """The model reads a polite line from the EU as an offer of financing: China's condition for 1.1 is met. The
    export says so, and because it holds the model's reading, the import replays the same game."""
    game = game_at_first_ai_turn(seed=3)  # the EU student; China opens the first talk
    settings.MERCURY_MODEL = "openai/gpt-4o-mini"
    game = repin(game)  # games keep the model they started with
    _scripted_model(monkeypatch, "Thank you for meeting us.", '{"offers": ["financing"]}')
    game = play_ai_step(game=game, step=step_of(game))
    game = submit_human_event(
        game=game, event="HUMAN_MESSAGE_SUBMITTED", payload={"text": "We value this exchange."}
    )
    data = export_game(game=Game.objects.get(pk=game.pk))
    china, eu = data["judge_readings"][-2:]
    assert (china["speaker"], china["source"]) == ("CHN", "llm")
    assert china["items"] == [{"kind": "offer", "offer": "financing", "credible": False}]
    assert (eu["speaker"], eu["source"]) == ("EU", "llm")
    assert eu["items"] == [{"kind": "offer", "offer": "financing", "credible": True}]
    moved = [c for c in data["negotiation"]["stance_changes"] if c["cause_seq"] == eu["seq"]]
    assert [(c["role"], c["after"]) for c in moved] == [("CHN", "1.1")]
    settings.MERCURY_MODEL = "mercury-offline/default"
    _no_model(monkeypatch)
    imported = import_game(data=data)
    assert normalised(imported) == normalised(game)
    assert _payload_signals(data, china["event_seq"]) == {**EMPTY_SIGNALS, "offers": ["financing"]}


def _payload_signals(data: dict[str, Any], event_seq: int) -> Any:
    return data["events"][event_seq - 1]["payload"]["signals"]


EMPTY_SIGNALS: dict[str, Any] = {
    "support": {},
    "oppose": {},
    "conditional": {},
    "offers": [],
    "asks": [],
    "trades": [],
}


def _no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on any model call fails the test: an import applies recorded readings, it never asks a model."""
    import litellm

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the import called a model")

    monkeypatch.setattr(litellm, "completion", refuse)


def _judge_by_model(monkeypatch: pytest.MonkeyPatch, answers: list[str]) -> list[str]:
    """The offline model plays every seat; judge prompts get `answers` in turn from litellm's mock_response (the
    real-model path through the gateway, minus the network). Returns the answers given, in order."""
    import litellm

    original, given = litellm.completion, list[str]()

    def completion(*args: Any, **kwargs: Any) -> Any:
        if not kwargs["messages"][0]["content"].startswith("You read one message"):
            return original(*args, **kwargs)
        given.append(answers[len(given) % len(answers)])
        return original(*args, mock_response=given[-1], **kwargs)

    monkeypatch.setattr(litellm, "completion", completion)
    return given


@pytest.mark.django_db
@pytest.mark.parametrize(("role", "human", "seed"), [("EU", "advocate", 3), ("TZA", "passive", 11)])
def test_a_whole_game_judged_by_a_real_model_round_trips(
    monkeypatch: pytest.MonkeyPatch, settings: Any, role: str, human: str, seed: int
) -> None:
    """A judge model (mocked through litellm) reads every message: some answers are used, some refused (the rules
    read those). The export carries each reading in its event's payload; the import applies them, calling no
    model, and the imported game exports to the same file."""
    settings.MERCURY_JUDGE_MODEL = "openai/gpt-4o-mini"
    answers = [
        '{"offers": ["financing"]}',
        "no reading, sorry",
        '{"support": {"1": ["1.1"]}, "asks": ["financing"]}',
    ]
    given = _judge_by_model(monkeypatch, answers)
    game = played(role, human, seed=seed)
    assert game.phase == "REVIEW" and game.judge_model == "openai/gpt-4o-mini"
    data = json.loads(json.dumps(export_game(game=game)))
    readings = data["judge_readings"]
    assert len(given) == len(readings) == data["judge_calls"]["calls"] > 0
    assert [r["source"] for r in readings] == ["fallback" if a == answers[1] else "llm" for a in given]
    for reading in readings:  # an accepted reading is in the payload; a refused one is recorded as null
        signals = _payload_signals(data, reading["event_seq"])
        assert (signals is None) == (reading["source"] == "fallback")
    settings.MERCURY_JUDGE_MODEL = ""
    _no_model(monkeypatch)
    game.delete()
    imported = import_game(data=data)
    again = json.loads(json.dumps(export_game(game=imported)))
    again["game"]["id"] = data["game"]["id"]
    assert again == data


@pytest.mark.django_db
def test_a_reading_naming_an_unknown_option_is_refused(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.MERCURY_JUDGE_MODEL = "openai/gpt-4o-mini"
    _judge_by_model(monkeypatch, ['{"support": {"1": ["1.1"]}}'])
    game = game_at_first_ai_turn(seed=3)
    game = play_ai_step(game=game, step=step_of(game))
    data = json.loads(json.dumps(export_game(game=Game.objects.get(pk=game.pk))))
    reading = data["judge_readings"][-1]
    assert reading["source"] == "llm" and reading["items"] == [
        {"kind": "support", "issue": "1", "option": "1.1"}
    ]
    _payload_signals(data, reading["event_seq"])["support"]["1"] = ["1.9"]  # no such option
    reading["items"][0]["option"] = "1.9"
    games = Game.objects.count()
    with pytest.raises(ExportImportError) as caught:
        import_game(data=data)
    assert Game.objects.count() == games
    event = data["events"][reading["event_seq"] - 1]
    assert str(caught.value).startswith(
        f"The imported game differs from the export: event {event['seq']} ({event['name']}): "
        f"judge_readings.{len(data['judge_readings']) - 1}.source is 'llm' in the export, 'fallback' once applied."
    )
