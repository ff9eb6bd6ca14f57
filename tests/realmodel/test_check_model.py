"""`manage.py check_model` against the fake server: what works, what does not, the server's words, the exit code."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from .fake_openai import FakeOpenAI, Fault, closed_port_base


def _check(*args: str) -> tuple[str, bool]:
    out = io.StringIO()
    try:
        call_command("check_model", *args, stdout=out)
    except CommandError:
        return out.getvalue(), False
    return out.getvalue(), True


def test_a_working_server_is_reported_ready(fake: FakeOpenAI) -> None:
    out, ok = _check()
    assert ok and "streamed call: OK" in out and "judge call: OK" in out and "The model is ready." in out
    assert [(s.kind, s.stream) for s in fake.requests()] == [("turn", True), ("judge", False)]


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (
            Fault("401"),
            ["streamed call: FAILED (auth)", "MERCURY_MODEL_API_KEY", "Incorrect API key provided"],
        ),
        (Fault("500"), ["streamed call: FAILED (server_error)", "The server had an error"]),
    ],
    ids=["401", "500"],
)
def test_a_failing_call_names_the_cause_the_servers_words_and_the_setting(
    fake: FakeOpenAI, fault: Fault, expected: list[str]
) -> None:
    fake.inject(fault)
    out, ok = _check()
    assert not ok and all(words in out for words in expected), out
    assert len(fake.requests("turn")) == 1  # no retry: the first failure is reported as it is


def test_an_unreachable_server_and_an_unusable_judge(fake: FakeOpenAI, settings: Any) -> None:
    settings.MERCURY_JUDGE_MODEL = "openai/fake-judge"
    settings.MERCURY_JUDGE_API_BASE = closed_port_base()
    out, ok = _check("--judge")
    assert not ok and "judge call: FAILED (refused_connection)" in out and "MERCURY_JUDGE_API_BASE" in out
    assert "Connection refused" in out and not fake.requests()  # --judge: the playing model is not called
    settings.MERCURY_JUDGE_API_BASE = fake.api_base
    fake.inject(Fault("judge_invalid", body="I think they support financing."), kind="judge")
    out, ok = _check("--judge")
    assert not ok and "judge by the rules" in out and "I think they support financing." in out


def test_the_offline_model_needs_no_judge_call(settings: Any) -> None:
    settings.MERCURY_MODEL = "mercury-offline/default"
    out, ok = _check()
    assert ok and "built in" in out and "judged by the rules" in out
