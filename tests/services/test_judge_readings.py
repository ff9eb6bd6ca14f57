"""Each message's judge reading in the export (mercury-game/2), and a model-judged game that imports again."""

from __future__ import annotations

from typing import Any

import pytest

from simulations.models import Game
from simulations.services.ai_turns import play_ai_step
from simulations.services.export import export_game
from simulations.services.human_turns import submit_human_event
from simulations.services.import_game import import_game
from simulations.services.turns import step_of
from tests.helpers import game_at_first_ai_turn, normalised, played, repin


@pytest.mark.django_db
def test_every_message_and_speech_has_its_reading_in_the_export() -> None:
    game = played("USA", "advocate", seed=4)
    data = export_game(game=game)
    assert data["format"] == "mercury-game/2"
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
    moved = [c for c in data["stance_changes"] if c["cause_seq"] == eu["seq"]]
    assert [(c["role"], c["after"]) for c in moved] == [("CHN", "1.1")]
    settings.MERCURY_MODEL = "mercury-offline/default"
    imported = import_game(data=data)
    assert normalised(imported) == normalised(game)
