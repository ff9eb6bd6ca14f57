"""The offline model (in the gateway, and through litellm as a registered provider), and model faults simulated
with litellm's own mock_response."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from simulations.ai import gateway
from simulations.ai.offline import register
from simulations.kinds.negotiation import prompts
from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.games import scenario_of_version, state_of, step_of
from simulations.kinds.negotiation.headless import play_game
from simulations.kinds.negotiation.human_turns import submit_human_event
from simulations.kinds.negotiation.turns import _recent_changes, play_ai_step, seen_entries
from simulations.models import Checkpoint, Game, ModelCall, TranscriptEntry
from simulations.services.ledger.turns import create_game
from tests.helpers import game_at_first_ai_turn, mercury_version, repin


def _game_at_first_ai_turn() -> Game:
    return game_at_first_ai_turn(seed=12)


@pytest.mark.django_db
def test_offline_model_streams_deterministically_and_litellm_answers_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import litellm

    register()
    via_litellm = litellm.completion

    def not_for_the_offline_model(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the gateway calls the offline model in-process, not through litellm")

    monkeypatch.setattr(litellm, "completion", not_for_the_offline_model)
    game = _game_at_first_ai_turn()
    step = step_of(game)
    assert step.purpose == "talk_open"
    prompt = prompts.build_prompt(
        scenario_of_version(game.scenario), state_of(game), step, seen_entries(game), []
    )
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
    turn = prompt.facts["turn"]
    system = prompt.messages[0]["content"].replace(f'"turn": {turn}', f'"turn": {turn + 1}')
    other_messages = [{"role": "system", "content": system}, prompt.messages[1]]
    assert gateway.complete(other_messages).text != streamed.text
    # The provider registered with litellm answers the same words, streamed or not, with the same token counts.
    response = via_litellm(model="mercury-offline/default", messages=prompt.messages)
    assert response.choices[0].message.content == plain.text
    assert response.usage.prompt_tokens == plain.prompt_tokens
    stream = via_litellm(model="mercury-offline/default", messages=prompt.messages, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "".join(chunks)
    assert _recent_changes(game, step.role, seen_entries(game)) == []


@pytest.mark.django_db
def test_the_offline_models_words_keep_their_schedule_when_the_caller_reads_late(settings: Any) -> None:
    """As a real model's server does, it sends each word when it is due, however late the caller reads: a caller
    busy for a while finds the words of that while waiting, and the answer ends when its typing time is over (a
    delay after each word read would add the caller's busy time to it, as it did for a busy worker)."""
    import time

    from simulations.ai import offline

    game = _game_at_first_ai_turn()
    prompt = prompts.build_prompt(
        scenario_of_version(game.scenario), state_of(game), step_of(game), seen_entries(game), []
    )
    delay = settings.MERCURY_OFFLINE_TOKEN_DELAY = (
        0.02  # long enough that a loaded machine's late sleeps are small
    )
    words = len(offline.pieces(offline.write(prompt.messages), offline.WORDS_PER_CHUNK_TYPING))
    assert words >= 40
    typing, busy = words * delay, words * delay / 2
    read_at: list[float] = []
    resumed = 0.0  # when the caller was done being busy (a loaded machine's sleep overshoots; measured, not assumed)
    started = time.perf_counter()
    for _piece in offline.answer(prompt.messages, streamed=True):
        read_at.append(time.perf_counter() - started)
        if len(read_at) == 1:
            time.sleep(busy)  # the caller is busy after the first word
            resumed = time.perf_counter() - started
    took = time.perf_counter() - started
    assert len(read_at) == words
    assert typing <= took < typing + busy / 2  # one word at a time after each read: typing + busy
    caught_up = [at for at in read_at[1:] if at < resumed + 3 * delay]
    assert len(caught_up) >= words / 4  # the words due while the caller was busy, read at once after it


@pytest.mark.django_db
def test_the_offline_model_answers_in_the_calling_thread_and_keeps_the_deadline_between_its_words(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It needs no thread of its own (a real model's call has one, for its deadline): its typing delay is its
    only wait, and that never runs past the deadline."""
    import threading
    import time

    from simulations.ai import offline

    game = _game_at_first_ai_turn()
    prompt = prompts.build_prompt(
        scenario_of_version(game.scenario), state_of(game), step_of(game), seen_entries(game), []
    )
    writers: set[str] = set()  # the threads the model wrote its answers in
    write = offline.write

    def written_where(messages: Any) -> str:
        writers.add(threading.current_thread().name)
        return write(messages)

    monkeypatch.setattr(offline, "write", written_where)
    settings.MERCURY_OFFLINE_TOKEN_DELAY = 0.001
    said = gateway.complete(prompt.messages, on_chunk=lambda _: None)
    assert writers == {threading.current_thread().name} and said.attempts == 1
    # 40 words a second against a deadline of a fifth of a second: the first attempt gives up at the deadline,
    # and so does the retry.
    settings.MERCURY_OFFLINE_TOKEN_DELAY, settings.MERCURY_MODEL_TIMEOUT = 0.025, 0.2
    words: list[str] = []
    started = time.perf_counter()
    with pytest.raises(gateway.ModelFailure) as err:
        gateway.complete(prompt.messages, on_chunk=words.append, retries=1)
    took = time.perf_counter() - started
    assert err.value.cause == "timeout" and "within 0.2 s" in err.value.detail
    assert 2 * 0.2 + gateway.BACKOFF_BASE <= took < 2 * 0.2 + gateway.BACKOFF_BASE + 0.5
    assert 8 <= len(words) <= 16  # seven or eight words an attempt, no more once the deadline passed
    # A call latency past the deadline: no word at all.
    settings.MERCURY_OFFLINE_CALL_LATENCY = 0.5
    with pytest.raises(gateway.ModelFailure) as err:
        gateway.complete(prompt.messages, on_chunk=words.append, retries=0)
    assert err.value.cause == "timeout" and "(0 chunks received)" in err.value.detail


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fault", "message", "cause"),
    [
        (
            "timeout",
            "The model did not answer in time. If this keeps happening, ask your teacher to raise "
            "MERCURY_MODEL_TIMEOUT or use a faster model. Nothing was lost: try the turn again.",
            "timeout",
        ),
        (
            "rate_limit",
            "The model server is busy (rate limited). Wait a minute before trying again. "
            "Nothing was lost: try the turn again.",
            "rate_limited",
        ),
        ("empty", "The model returned an empty message. Nothing was lost: try the turn again.", "empty"),
    ],
)
def test_model_faults_leave_the_game_unchanged_and_resumable(
    fault: str, message: str, cause: str, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    import litellm

    game = _game_at_first_ai_turn()
    mock: Any = {
        "timeout": litellm.Timeout(message="slow", model="gpt-4o-mini", llm_provider="openai"),
        "rate_limit": litellm.RateLimitError(message="busy", model="gpt-4o-mini", llm_provider="openai"),
        "empty": "   ",
    }[fault]
    settings.MERCURY_MODEL = "openai/gpt-4o-mini"
    game = repin(game)
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
    assert failed.model == "openai/gpt-4o-mini" and failed.prompt_tokens > 100  # its prompt was sent
    assert failed.error.startswith(f"{cause}: ")  # the real cause is kept, not the student's sentence
    # The model recovers: the same turn is played and the game finishes.
    monkeypatch.setattr(litellm, "completion", original)
    settings.MERCURY_MODEL = "mercury-offline/default"
    game = repin(game)
    finished = play_game(game_id=game.pk, policy=make_policy("passive", "EU"))
    assert finished.phase == "REVIEW"


def _scripted_model(monkeypatch: pytest.MonkeyPatch, speech: str, judge_answer: str) -> None:
    """A real model string answered by litellm's mock_response: one answer for turns, one for the judge."""
    import litellm

    original = litellm.completion

    def completion(*args: Any, **kwargs: Any) -> Any:
        is_judge = kwargs["messages"][0]["content"].startswith("You read one message")
        return original(*args, mock_response=judge_answer if is_judge else speech, **kwargs)

    monkeypatch.setattr(litellm, "completion", completion)


@pytest.mark.django_db
def test_a_real_model_string_goes_through_litellm_with_its_judge(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """Any litellm model works (here OpenAI's, answered by mock_response: no network); with a real model a judge
    call reads each committed message, and its validated reading moves stances."""
    settings.MERCURY_MODEL = "openai/gpt-4o-mini"
    text = "We can support 2.1 if financing is offered."
    _scripted_model(monkeypatch, text, '{"support": {"2": ["2.1"]}, "offers": ["financing"]}')
    game = _game_at_first_ai_turn()
    game = play_ai_step(game=game, step=step_of(game))
    last = TranscriptEntry.objects.filter(game=game, kind="message").order_by("-seq").first()
    assert last is not None and last.text == text
    turn, judge_call = ModelCall.objects.filter(game=game).order_by("seq")
    assert (
        turn.model == "openai/gpt-4o-mini" and turn.status == "ok" and turn.token_count_method == "provider"
    )
    assert judge_call.purpose == "judge" and judge_call.context == [last.seq]
    event = game.events.order_by("-seq").first()
    assert event is not None and event.payload["signals"]["offers"] == ["financing"]


@pytest.mark.django_db
@pytest.mark.parametrize("answer", ["not json at all", '{"support": {"9": ["9.9"]}}', '{"votes": "all yes"}'])
def test_an_invalid_judge_answer_falls_back_to_the_rules(
    answer: str, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.MERCURY_MODEL = "openai/gpt-4o-mini"
    _scripted_model(monkeypatch, "Our delegation supports 2.2, emissions out of scope.", answer)
    game = _game_at_first_ai_turn()
    game = play_ai_step(game=game, step=step_of(game))
    event = game.events.order_by("-seq").first()
    assert event is not None and event.payload["signals"] is None  # the engine read the text by its rules
    assert ModelCall.objects.filter(game=game, purpose="judge", status="ok").count() == 1


@pytest.mark.django_db
def test_the_token_budget_stops_model_calls_with_a_clear_message(settings: Any) -> None:
    settings.MERCURY_MAX_TOKENS_PER_GAME = 3000
    game = create_game(scenario_version=mercury_version(), seed=3)
    with pytest.raises(gateway.ModelFailure) as err:
        play_game(game_id=game.pk, policy=make_policy("advocate", "CAN"))
    assert str(err.value) == (
        "This game has used its model budget of 3000 tokens (MERCURY_MAX_TOKENS_PER_GAME). "
        "Nothing was stored; raise the limit to continue."
    )
    game.refresh_from_db()
    assert game.phase == "ROUND_2_CONVERSATION_ACTIVE"
    settings.MERCURY_MAX_TOKENS_PER_GAME = 0
    assert play_game(game_id=game.pk, policy=make_policy("advocate", "CAN")).phase == "REVIEW"


@pytest.mark.django_db
def test_a_model_speaking_for_others_is_cleaned_or_refused(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.MERCURY_MODEL = "openai/gpt-4o-mini"
    game = _game_at_first_ai_turn()
    step = step_of(game)
    partner = scenario_of_version(game.scenario).display_name(step.role or "")
    _scripted_model(
        monkeypatch,
        'Japan: The vote has passed.\n[12] Canada: We agree.\n{"event": "VOTE_COMPLETE"}',
        "{}",
    )
    with pytest.raises(gateway.ModelFailure, match="The model's answer could not be used. Nothing was lost"):
        play_ai_step(game=game, step=step)
    game.refresh_from_db()
    assert not TranscriptEntry.objects.filter(game=game, speaker=step.role, kind="message").exists()
    monkeypatch.undo()  # back to litellm's own completion before scripting the next answer
    _scripted_model(monkeypatch, f"{partner}: We support 2.1.\nChair: I declare 2.1 adopted.", "{}")
    game = play_ai_step(game=game, step=step)
    last = TranscriptEntry.objects.filter(game=game, kind="message").order_by("-seq").first()
    assert last is not None and last.text == "We support 2.1."


@pytest.mark.django_db
def test_over_long_model_output_is_cut_at_a_sentence(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    settings.MERCURY_MODEL = "openai/gpt-4o-mini"
    game = _game_at_first_ai_turn()
    rambling = " ".join(f"Point {n} of our position is that financing matters." for n in range(120))
    assert len(rambling) > 5000
    _scripted_model(monkeypatch, rambling, "{}")
    game = play_ai_step(game=game, step=step_of(game))
    last = TranscriptEntry.objects.filter(game=game, kind="message").order_by("-seq").first()
    assert last is not None and 1000 < len(last.text) <= 2000 and last.text.endswith("matters.")


@pytest.mark.django_db
def test_real_models_get_prose_without_the_offline_facts_block(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    sent: list[str] = []
    real = gateway.complete

    def recording(messages: list[dict[str, str]], **kwargs: Any) -> gateway.Completion:
        sent.append("\n".join(m["content"] for m in messages))
        return real(messages, **kwargs)

    monkeypatch.setattr(gateway, "complete", recording)
    game = _game_at_first_ai_turn()
    play_ai_step(game=game, step=step_of(game))
    assert prompts.FACTS_OPEN in sent[-1]  # the offline model writes from it
    settings.MERCURY_MODEL = "openai/gpt-4o-mini"
    _scripted_model(monkeypatch, "We support 2.1.", "{}")
    game = repin(game)
    game = submit_human_event(game=game, event="HUMAN_MESSAGE_SUBMITTED", payload={"text": "We hear you."})
    assert step_of(game).kind == "ai"
    play_ai_step(game=game, step=step_of(game))
    turn_prompt = [p for p in sent if "You read one message" not in p][-1]
    assert prompts.FACTS_OPEN not in turn_prompt and "Your current positions:" in turn_prompt
