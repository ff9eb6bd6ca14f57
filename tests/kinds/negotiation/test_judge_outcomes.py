"""The model judge's calls: every outcome recorded (used / fallback and why / failed and its cause), structured
output where litellm says the provider supports it, costs where litellm knows the price, and no judge call for a
student's move that would be refused anyway. Real model strings answered by litellm's own `mock_response`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from simulations.engine.errors import InvalidMove
from simulations.kinds.negotiation import llm_judge, machine
from simulations.kinds.negotiation.games import step_of
from simulations.kinds.negotiation.human_turns import submit_human_event
from simulations.kinds.negotiation.turns import play_ai_step
from simulations.models import Game, ModelCall, TranscriptEntry
from simulations.services.ledger.turns import StaleTurn
from simulations.services.play.budget import BudgetExhausted
from tests.helpers import game_at_first_ai_turn

pytestmark = pytest.mark.django_db

JUDGE_PROMPT = "You read one message"
Answer = str | Exception


class Scripted:
    """litellm.completion answered by mock_response: `speech` for turns, `judge(text)` for judge calls; every
    call's keyword arguments are kept."""

    def __init__(self, speech: str, judge: Callable[[str], Answer]) -> None:
        self.speech, self.judge = speech, judge
        self.calls: list[dict[str, Any]] = []

    def judge_calls(self) -> list[dict[str, Any]]:
        return [c for c in self.calls if c["messages"][0]["content"].startswith(JUDGE_PROMPT)]


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Callable[[str, Callable[[str], Answer]], Scripted]:
    import litellm

    original = litellm.completion

    def install(speech: str, judge: Callable[[str], Answer]) -> Scripted:
        scripted = Scripted(speech, judge)

        def completion(*args: Any, **kwargs: Any) -> Any:
            scripted.calls.append(kwargs)
            content = kwargs["messages"][0]["content"]
            answer = scripted.judge(content) if content.startswith(JUDGE_PROMPT) else scripted.speech
            return original(*args, mock_response=answer, **kwargs)

        monkeypatch.setattr(litellm, "completion", completion)
        return scripted

    return install


def _real_game(settings: Any, model: str = "openai/gpt-4o-mini") -> Game:
    """A game started with a real model, at the student's first talk message (after the partner spoke)."""
    settings.MERCURY_MODEL = model
    game = game_at_first_ai_turn(seed=12)
    assert game.model == model
    return game


def _after_partner(game: Game) -> Game:
    game = play_ai_step(game=game, step=step_of(game))
    assert step_of(game).kind == "human" and "HUMAN_MESSAGE_SUBMITTED" in step_of(game).events
    return game


def _judge_rows(game: Game) -> list[ModelCall]:
    return list(ModelCall.objects.filter(game=game, purpose="judge").order_by("seq"))


def test_a_used_reading_is_recorded_as_used_with_the_schema_requested(settings: Any, script: Any) -> None:
    scripted = script("We can support 2.1 if financing is offered.", lambda _: '{"support": {"2": ["2.1"]}}')
    game = _after_partner(_real_game(settings))
    (row,) = _judge_rows(game)
    assert (row.status, row.outcome, row.outcome_reason, row.model) == (
        "ok",
        "used",
        "",
        "openai/gpt-4o-mini",
    )
    assert row.prompt_tokens > 0 and row.token_count_method == "provider"
    # litellm says gpt-4o-mini supports response schemas: the judge asked for the Signals schema.
    (sent,) = scripted.judge_calls()
    schema = sent["response_format"]["json_schema"]["schema"]
    assert set(schema["properties"]) == {"support", "oppose", "conditional", "offers", "asks", "trades"}
    event = game.events.order_by("-seq").first()
    assert event is not None and event.payload["signals"]["support"] == {"2": ["2.1"]}


def test_without_schema_support_the_judge_parses_the_text(settings: Any, script: Any) -> None:
    """A model litellm knows nothing about (e.g. a local server's): no response_format, the JSON in the text."""
    scripted = script("We support 2.1.", lambda _: 'Here you go: {"support": {"2": ["2.1"]}} done')
    game = _after_partner(_real_game(settings, model="openai/local-llama"))
    assert not llm_judge.supports_schema("openai/local-llama")
    (sent,) = scripted.judge_calls()
    assert "response_format" not in sent
    assert [(r.outcome, r.model) for r in _judge_rows(game)] == [("used", "openai/local-llama")]


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("I think they support emissions controls.", llm_judge.NO_JSON),
        ('{"support": {"2": ["2.1"]', llm_judge.NO_JSON),  # cut off: no closing brace
        ('{"support": {"2": ["2.1"]}, }', llm_judge.BAD_JSON),
        ('{"votes": "all yes"}', llm_judge.WRONG_SHAPE),
        ('{"support": {"9": ["9.9"]}}', llm_judge.UNKNOWN_IDS),
        ('{"support": {"2": ["1.1"]}}', llm_judge.UNKNOWN_IDS),  # an option under another issue
        ('{"offers": ["a-billion-dollars"]}', llm_judge.UNKNOWN_IDS),
    ],
)
def test_an_unusable_answer_is_recorded_as_a_fallback_with_why(
    answer: str, why: str, settings: Any, script: Any
) -> None:
    script("Our delegation supports 2.2, emissions out of scope.", lambda _: answer)
    game = _after_partner(_real_game(settings))
    (row,) = _judge_rows(game)
    assert (row.status, row.outcome) == ("ok", "fallback") and row.outcome_reason.startswith(why)
    assert row.completion_tokens > 0  # the answer was paid for, though not used
    event = game.events.order_by("-seq").first()
    assert event is not None and event.payload["signals"] is None  # the rules read the message


def test_a_failed_judge_call_is_recorded_with_its_cause_and_estimated_tokens(
    settings: Any, script: Any
) -> None:
    import litellm

    busy = litellm.RateLimitError(message="slow down", model="gpt-4o-mini", llm_provider="openai")
    script("Our delegation supports 2.2.", lambda _: busy)
    game = _after_partner(_real_game(settings))
    # The turn was committed (the rules judged it); the failed call is on record with what its prompt cost.
    last = TranscriptEntry.objects.filter(game=game).order_by("-seq").first()
    assert last is not None and last.text == "Our delegation supports 2.2."
    (row,) = _judge_rows(game)
    assert (row.status, row.outcome) == ("error", "failed")
    assert row.outcome_reason.startswith("rate_limited: ") and "slow down" in row.outcome_reason
    assert (
        row.prompt_tokens > 100
        and row.completion_tokens == 0
        and row.token_count_method.startswith("estimate")
    )
    assert row.cost_usd is None and row.context == [last.seq]


def test_costs_are_litellm_prices_where_known_and_none_offline(settings: Any, script: Any) -> None:
    import litellm

    script("We support 2.1.", lambda _: '{"support": {"2": ["2.1"]}}')
    game = _after_partner(_real_game(settings))
    price = litellm.model_cost["gpt-4o-mini"]
    rows = list(ModelCall.objects.filter(game=game))
    assert len(rows) == 2
    for row in rows:
        expected = (
            row.prompt_tokens * price["input_cost_per_token"]
            + row.completion_tokens * price["output_cost_per_token"]
        )
        assert row.cost_usd == pytest.approx(expected) and expected > 0
    # A model litellm has no price for, and the offline model: unknown, never zero.
    unpriced = _after_partner(_real_game(settings, model="openai/local-llama"))
    assert {r.cost_usd for r in ModelCall.objects.filter(game=unpriced)} == {None}
    settings.MERCURY_MODEL = "mercury-offline/default"
    offline = game_at_first_ai_turn(seed=12)
    offline = play_ai_step(game=offline, step=step_of(offline))
    assert ModelCall.objects.filter(game=offline).count() == 1
    assert {r.cost_usd for r in ModelCall.objects.filter(game=offline)} == {None}


# --- the student's message: cheap checks first -------------------------------------------------------------


def _submit(game: Game, text: str, **kwargs: Any) -> Game:
    return submit_human_event(game=game, event="HUMAN_MESSAGE_SUBMITTED", payload={"text": text}, **kwargs)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("x" * (machine.MAX_MESSAGE_CHARS + 1), InvalidMove.TEXT_TOO_LONG),
        ("   ", InvalidMove.EMPTY_TEXT),
        ("", InvalidMove.EMPTY_TEXT),
    ],
)
def test_a_message_the_engine_would_refuse_costs_no_judge_call(
    text: str, reason: str, settings: Any, script: Any
) -> None:
    scripted = script("We support 2.1.", lambda _: "{}")
    game = _after_partner(_real_game(settings))
    before = len(scripted.calls)
    with pytest.raises(InvalidMove) as refused:
        _submit(game, text)
    assert refused.value.reason == reason
    assert len(scripted.calls) == before and not _judge_rows(game)[1:]


def test_a_stale_or_repeated_message_costs_no_judge_call(settings: Any, script: Any) -> None:
    scripted = script("We support 2.1.", lambda _: '{"support": {"2": ["2.1"]}}')
    game = _after_partner(_real_game(settings))
    judged = len(scripted.judge_calls())
    with pytest.raises(StaleTurn):  # a form rendered before the partner's turn
        _submit(game, "We support 2.1 too.", expected_version=game.version - 1)
    assert len(scripted.judge_calls()) == judged
    game = _submit(game, "We support 2.1 too.", expected_version=game.version, idempotency_key="form-1")
    assert len(scripted.judge_calls()) == judged + 1
    game = play_ai_step(game=game, step=step_of(game))  # the partner answers: the student's turn again
    with pytest.raises(StaleTurn):  # the same form sent again (a double click), at the current version
        _submit(game, "We support 2.1 too.", expected_version=game.version, idempotency_key="form-1")
    assert len(scripted.judge_calls()) == judged + 2  # one for the partner's answer, none for the repeat


def test_the_students_judge_call_counts_against_the_budget(settings: Any, script: Any) -> None:
    scripted = script("We support 2.1.", lambda _: '{"support": {"2": ["2.1"]}}')
    game = _after_partner(_real_game(settings))
    used = sum(r.prompt_tokens + r.completion_tokens for r in ModelCall.objects.filter(game=game))
    settings.MERCURY_MAX_TOKENS_PER_GAME = used  # spent exactly
    before = len(scripted.calls)
    with pytest.raises(BudgetExhausted):
        _submit(game, "We support 2.1 too.")
    assert len(scripted.calls) == before
    settings.MERCURY_MAX_TOKENS_PER_GAME = used + 1
    _submit(game, "We support 2.1 too.")
    assert len(scripted.calls) == before + 1
