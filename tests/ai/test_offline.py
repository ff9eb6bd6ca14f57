"""The offline model through litellm, and model faults simulated with litellm's own mock_response."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from simulations.ai import gateway, prompts
from simulations.ai.offline import register
from simulations.bots import make_policy
from simulations.models import Checkpoint, Game, ModelCall, TranscriptEntry
from simulations.services.ai_turns import _entries, _recent_changes, play_ai_step
from simulations.services.play import play_game
from simulations.services.scenarios import scenario_of
from simulations.services.turns import create_game, state_of, step_of
from tests.helpers import mercury_version


def _game_at_first_ai_turn() -> Game:
    """A passive EU game whose first talk partner speaks first: the next step is an AI message."""
    game = create_game(scenario_version=mercury_version(), seed=12)
    policy = make_policy("passive", "EU")

    class Stop(Exception):
        pass

    def stop_at_ai(g: Game, what: str) -> None:
        if step_of(g).kind == "ai":
            raise Stop

    with pytest.raises(Stop):
        play_game(game_id=game.pk, policy=policy, on_progress=stop_at_ai)
    game.refresh_from_db()
    return game


@pytest.mark.django_db
def test_offline_model_streams_through_litellm_deterministically() -> None:
    import litellm

    register()
    game = _game_at_first_ai_turn()
    step = step_of(game)
    assert step.purpose == "talk"
    prompt = prompts.build_prompt(scenario_of(game.scenario), state_of(game), step, _entries(game), [])
    chunks: list[str] = []
    streamed = gateway.complete(prompt.messages, on_chunk=chunks.append)
    plain = gateway.complete(prompt.messages)
    assert len(chunks) > 10 and "".join(chunks).strip() == streamed.text == plain.text
    assert streamed.prompt_tokens == plain.prompt_tokens > 100
    assert streamed.token_count_method == "offline:estimate:wordpiece"
    # In character, not an echo: no facts block, not a copy of any prompt message, names a position.
    assert prompts.FACTS_OPEN not in streamed.text
    assert all(streamed.text not in m["content"] for m in prompt.messages)
    assert "our delegation supports" in streamed.text.lower()
    # Same seed, role and turn: same words. Another turn: other words.
    facts = dict(prompt.facts, turn=prompt.facts["turn"] + 1)
    other = prompts.Prompt([prompt.messages[0] | {"content": prompt.messages[0]["content"].replace(
        f'"turn": {prompt.facts["turn"]}', f'"turn": {facts["turn"]}')}, prompt.messages[1]], [], facts)  # fmt: skip
    assert gateway.complete(other.messages).text != streamed.text
    response = litellm.completion(model="mercury-offline/default", messages=prompt.messages)
    assert response.choices[0].message.content == plain.text
    assert _recent_changes(game, step.role) == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("timeout", "The model did not answer in time. Nothing was stored; try the turn again."),
        ("rate_limit", "The model is rate limited. Nothing was stored; try the turn again."),
        ("empty", "The model returned an empty message. Nothing was stored; try the turn again."),
    ],
)
def test_model_faults_leave_the_game_unchanged_and_resumable(
    fault: str, message: str, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    import litellm

    game = _game_at_first_ai_turn()
    mock: Any = {
        "timeout": litellm.Timeout(message="slow", model="gpt-4o-mini", llm_provider="openai"),
        "rate_limit": litellm.RateLimitError(message="busy", model="gpt-4o-mini", llm_provider="openai"),
        "empty": "   ",
    }[fault]
    settings.MERCURY_MODEL = "openai/gpt-4o-mini"
    original = litellm.completion
    monkeypatch.setattr(litellm, "completion", functools.partial(original, mock_response=mock))
    before = (game.version, TranscriptEntry.objects.count(), Checkpoint.objects.count(), game.state)
    with pytest.raises(gateway.ModelFailure) as err:
        play_ai_step(game=game, step=step_of(game))
    assert str(err.value) == message
    game.refresh_from_db()
    assert (game.version, TranscriptEntry.objects.count(), Checkpoint.objects.count(), game.state) == before
    failed = ModelCall.objects.get(game=game)
    assert failed.status == "error" and failed.role == step_of(game).role
    # The model recovers: the same turn is played and the game finishes.
    monkeypatch.setattr(litellm, "completion", original)
    settings.MERCURY_MODEL = "mercury-offline/default"
    finished = play_game(game_id=game.pk, policy=make_policy("passive", "EU"))
    assert finished.phase == "REVIEW"


@pytest.mark.django_db
def test_a_real_model_string_goes_through_litellm(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    """Any litellm model works: here an OpenAI model answered by litellm's mock_response (no network)."""
    import litellm

    settings.MERCURY_MODEL = "openai/gpt-4o-mini"
    monkeypatch.setattr(
        litellm, "completion",
        functools.partial(litellm.completion, mock_response="We can support 2.1 if financing is offered."),
    )  # fmt: skip
    game = _game_at_first_ai_turn()
    game = play_ai_step(game=game, step=step_of(game))
    last = TranscriptEntry.objects.filter(game=game, kind="message").order_by("-seq").first()
    assert last is not None and last.text == "We can support 2.1 if financing is offered."
    call = ModelCall.objects.get(game=game)
    assert (
        call.model == "openai/gpt-4o-mini" and call.status == "ok" and call.token_count_method == "provider"
    )
