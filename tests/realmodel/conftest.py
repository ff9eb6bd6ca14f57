from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from .fake_openai import FakeOpenAI

DEADLINE = 1.0  # MERCURY_MODEL_TIMEOUT in these tests: small, so faults past it stay fast
RETRIES = 1


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        _warm_up(server)
        yield server


def _warm_up(server: FakeOpenAI) -> None:
    """litellm's first call in a process imports the provider's modules (about a second here): pay it once,
    outside the deadlines under test. In a worker thread, as the gateway calls: litellm called on the main thread
    leaves an event loop set there, which pytest-asyncio's tests later drop unclosed (a ResourceWarning)."""
    from simulations.ai import gateway

    litellm = gateway._litellm()
    args = {"model": "openai/warm-up", "api_base": server.api_base, "api_key": "k", "max_retries": 0}

    def calls() -> None:
        litellm.completion(messages=[{"role": "user", "content": "hello"}], **args)
        for _ in litellm.completion(messages=[{"role": "user", "content": "hello"}], stream=True, **args):
            pass

    worker = threading.Thread(target=calls)
    worker.start()
    worker.join()


@pytest.fixture
def fake(fake_server: FakeOpenAI, settings: Any) -> FakeOpenAI:
    """The fake server as the configured model, with a clean script; the settings a teacher would set."""
    fake_server.reset()
    settings.MERCURY_MODEL = "openai/fake-delegate"
    settings.MERCURY_MODEL_API_BASE = fake_server.api_base
    settings.MERCURY_MODEL_API_KEY = "test-key"
    settings.MERCURY_MODEL_TIMEOUT = DEADLINE
    settings.MERCURY_MODEL_RETRIES = RETRIES
    return fake_server
