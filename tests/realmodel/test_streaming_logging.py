"""litellm's per-chunk logging runs only when someone listens (simulations/ai/gateway.py), on the real-model
path (the OpenAI-compatible fake server): the words stream either way, and a callback an application adds still
gets every streamed call."""

from __future__ import annotations

import time
from typing import Any

import pytest

from simulations.ai import gateway

from .fake_openai import FakeOpenAI

MESSAGES = [
    {"role": "system", "content": "You are Canada's delegate."},
    {"role": "user", "content": "Speak."},
]


def streamed() -> tuple[gateway.Completion, list[str]]:
    chunks: list[str] = []
    return gateway.complete(MESSAGES, on_chunk=chunks.append), chunks


def test_with_no_callback_streaming_logging_is_off_and_the_words_still_stream(fake: FakeOpenAI) -> None:
    import litellm

    completion, chunks = streamed()
    assert litellm.disable_streaming_logging is True
    assert len(chunks) > 5 and "".join(chunks).strip() == completion.text


def test_a_callback_an_application_adds_gets_every_streamed_call(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    import litellm
    from litellm.integrations.custom_logger import CustomLogger

    logged: list[Any] = []

    class Recorder(CustomLogger):  # type: ignore[misc]
        def log_success_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
            logged.append(response_obj)

    monkeypatch.setattr(litellm, "callbacks", [Recorder()])
    completion, _ = streamed()
    assert litellm.disable_streaming_logging is False
    for _ in range(100):  # litellm logs from its thread pool, after the stream ends
        if any(
            getattr(r, "choices", None) and r.choices[0].message.content == completion.text for r in logged
        ):
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the callback did not get the streamed answer: {logged!r}")
