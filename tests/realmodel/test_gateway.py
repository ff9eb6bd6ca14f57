"""The gateway against a real HTTP server: one deadline per call, retries exactly as configured, each fault's cause.

Every figure here is measured through litellm and the OpenAI SDK over a socket, not mocked inside litellm.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from simulations.ai import gateway

from .conftest import DEADLINE, RETRIES
from .fake_openai import FakeOpenAI, Fault, closed_port_base

MESSAGES = [
    {"role": "system", "content": "You are Brazil's delegate."},
    {"role": "user", "content": "Speak."},
]
SLACK = 0.6  # seconds for thread start-up, litellm's own overhead and a busy machine
BACKOFF = gateway.BACKOFF_BASE  # the one back-off between two attempts when RETRIES == 1


def _call(stream: bool) -> tuple[gateway.Completion | gateway.ModelFailure, float, list[str]]:
    chunks: list[str] = []
    started = time.monotonic()
    try:
        result: gateway.Completion | gateway.ModelFailure = gateway.complete(
            MESSAGES, on_chunk=chunks.append if stream else None
        )
    except gateway.ModelFailure as exc:
        result = exc
    return result, time.monotonic() - started, chunks


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "plain"])
def test_a_clean_answer_is_whole_with_the_providers_usage(fake: FakeOpenAI, stream: bool) -> None:
    result, _, chunks = _call(stream)
    assert isinstance(result, gateway.Completion)
    assert result.text.endswith(".") and len(result.text.split()) > 10
    assert result.token_count_method == "provider" and result.completion_tokens == len(result.text.split())
    assert result.attempts == 1 and len(fake.requests()) == 1
    if stream:
        assert "".join(chunks).strip() == result.text and len(chunks) > 5
    seen = fake.requests()[0]
    assert seen.stream is stream and seen.model == "fake-delegate" and seen.authorization == "Bearer test-key"


# A fault injected on every attempt: the cause it must be reported as, and whether a retry is spent on it.
PERSISTENT = [
    ("429", Fault("429", status=429, retry_after=0.3), "rate_limited", True),
    ("500", Fault("500"), "server_error", True),
    ("slow first byte", Fault("slow", delay=5), "timeout", True),
    ("trickle", Fault("trickle", delay=0.3), "timeout", True),
    ("stall", Fault("stall", after_words=3), "timeout", True),
    ("cut", Fault("cut", after_words=3), "truncated", True),
    ("no finish reason", Fault("no_finish"), "truncated", True),
    ("length", Fault("length"), "truncated", True),
    ("empty", Fault("empty"), "empty", True),
    ("401", Fault("401"), "auth", False),
]
SLOW = ("slow", "trickle", "stall")  # each costs a deadline per attempt: tested once per mode, not twice


def _cases(persistent: bool) -> list[Any]:
    """Each fault in both modes, except: a plain JSON answer always has a finish reason; and the slow faults,
    which test_games meets plainly in its play-command game (persistent) and streamed in its streamed game."""
    out = []
    for label, fault, cause, retried in PERSISTENT:
        if not persistent and not retried:
            continue
        for stream in (True, False):
            covered = fault.kind in SLOW and stream is not persistent
            if covered or (not stream and fault.kind == "no_finish"):
                continue
            mode = "streamed" if stream else "plain"
            out.append(pytest.param(stream, fault, cause, retried, id=f"{label}-{mode}"))
    return out


@pytest.mark.parametrize(("stream", "fault", "cause", "retried"), _cases(persistent=True))
def test_a_persistent_fault_fails_with_its_cause_within_the_deadlines(
    fake: FakeOpenAI, stream: bool, fault: Fault, cause: str, retried: bool
) -> None:
    fake.inject(*[fault] * (RETRIES + 1))
    result, took, _ = _call(stream)
    assert isinstance(result, gateway.ModelFailure) and result.cause == cause
    attempts = RETRIES + 1 if retried else 1
    assert len(fake.requests()) == attempts  # exactly the configured retries: the SDK adds none of its own
    wait = (fault.retry_after or 0) + BACKOFF if retried else 0
    assert took <= attempts * DEADLINE + wait + SLACK
    assert result.record.startswith(f"{cause}: ") and result.detail  # the provider's cause is kept
    assert str(result).endswith(gateway.AFTERWORD) and result.reason in str(result)


@pytest.mark.parametrize(("stream", "fault", "cause", "retried"), _cases(persistent=False))
def test_a_passing_fault_is_retried_into_a_whole_answer(
    fake: FakeOpenAI, stream: bool, fault: Fault, cause: str, retried: bool
) -> None:
    fake.inject(fault)
    result, took, chunks = _call(stream)
    assert isinstance(result, gateway.Completion) and result.attempts == 2
    assert len(fake.requests()) == 2
    assert result.text.endswith(".") and "We would also like to add that" not in result.text
    assert took <= 2 * DEADLINE + (fault.retry_after or 0) + BACKOFF + SLACK


def test_429_waits_what_retry_after_asks_capped_at_one_deadline(fake: FakeOpenAI) -> None:
    fake.inject(Fault("429", retry_after=0.8))
    result, _, _ = _call(stream=False)
    assert isinstance(result, gateway.Completion)
    first, second = fake.requests()
    assert second.at - first.at >= 0.8
    fake.reset()
    fake.inject(Fault("429", retry_after=30))
    result, took, _ = _call(stream=False)
    assert (
        isinstance(result, gateway.Completion) and took < DEADLINE + SLACK
    )  # 30 s asked, one deadline waited


def test_retries_are_exactly_the_setting(fake: FakeOpenAI, settings: Any) -> None:
    """The OpenAI SDK retries a 500 twice by itself unless told not to: with 0 retries the server sees one call."""
    settings.MERCURY_MODEL_RETRIES = 0
    fake.inject(Fault("500"), Fault("500"), Fault("500"))
    result, _, _ = _call(stream=False)
    assert isinstance(result, gateway.ModelFailure) and len(fake.requests()) == 1
    settings.MERCURY_MODEL_RETRIES = 2
    fake.reset()
    fake.inject(Fault("500"), Fault("500"), Fault("500"), Fault("500"))
    result, _, _ = _call(stream=True)
    assert isinstance(result, gateway.ModelFailure) and len(fake.requests()) == 3


def test_a_trickle_is_stopped_at_the_deadline_not_at_the_sdks_per_read_time_out(
    fake: FakeOpenAI, settings: Any
) -> None:
    """The issue's case: words every 0.3 s, never more than a read time-out apart, for about 10 s in all."""
    settings.MERCURY_MODEL_RETRIES = 0
    settings.MERCURY_MODEL_TIMEOUT = 2.0
    fake.inject(Fault("trickle", delay=0.3))
    result, took, chunks = _call(stream=True)
    assert isinstance(result, gateway.ModelFailure) and result.cause == "timeout"
    assert 2.0 <= took <= 2.0 + SLACK and 3 <= len(chunks) <= 8  # some words arrived, then the deadline


def test_a_refused_connection_is_named_with_the_setting_to_check(fake: FakeOpenAI, settings: Any) -> None:
    settings.MERCURY_MODEL_API_BASE = closed_port_base()
    result, took, _ = _call(stream=True)
    assert isinstance(result, gateway.ModelFailure) and result.cause == "refused_connection"
    assert "MERCURY_MODEL_API_BASE" in str(result) and "Connection refused" in result.record
    assert took < BACKOFF + SLACK  # refused at once, one back-off, refused again


@pytest.mark.parametrize(
    ("change", "cause", "setting"),
    [
        ({"MERCURY_MODEL_API_BASE": "/nothing-here"}, "unknown_model", "MERCURY_MODEL"),  # 404
        ({"MERCURY_MODEL": "no-such-provider-model"}, "unknown_model", "MERCURY_MODEL"),
        ({"MERCURY_MODEL_KWARGS": {"temperature": "warm"}}, "bad_request", "MERCURY_MODEL_KWARGS"),
    ],
    ids=["404", "unknown provider", "bad kwargs"],
)
def test_errors_a_retry_cannot_mend_are_not_retried(
    fake: FakeOpenAI, settings: Any, change: dict[str, Any], cause: str, setting: str
) -> None:
    for name, value in change.items():
        if name == "MERCURY_MODEL_API_BASE":
            value = fake.api_base + value
        setattr(settings, name, value)
    result, took, _ = _call(stream=False)
    assert isinstance(result, gateway.ModelFailure), result
    assert result.cause == cause, result.record
    assert setting in str(result) and len(fake.requests()) <= 1 and took < SLACK


def test_a_missing_key_is_reported_as_such_and_a_local_server_needs_none(
    fake: FakeOpenAI, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings.MERCURY_MODEL_API_KEY = ""
    result, _, _ = _call(stream=True)  # a local server: no key set, none needed
    assert isinstance(result, gateway.Completion)
    assert fake.requests()[0].authorization == f"Bearer {gateway.NO_KEY}"
    settings.MERCURY_MODEL_API_BASE = ""  # a hosted model without its key
    result, took, _ = _call(stream=False)
    assert isinstance(result, gateway.ModelFailure) and result.cause == "auth"
    assert "MERCURY_MODEL_API_KEY" in str(result) and "credentials" in result.detail and took < SLACK


def test_the_judge_settings_are_named_for_a_judge_failure(fake: FakeOpenAI, settings: Any) -> None:
    from simulations.ai.model_spec import judge_spec

    settings.MERCURY_JUDGE_MODEL = "openai/fake-judge"
    settings.MERCURY_JUDGE_API_BASE = fake.api_base
    fake.inject(Fault("401"))
    with pytest.raises(gateway.ModelFailure) as err:
        gateway.complete(MESSAGES, spec=judge_spec())
    assert "MERCURY_JUDGE_API_KEY" in str(err.value) and fake.requests()[0].model == "fake-judge"
