"""The one door to language models: litellm, with the offline provider registered, timeouts and retries.

litellm is imported lazily (its import costs over a second), so commands and tests that need no model stay fast.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from simulations import faults

from . import tokens
from .model_spec import ModelSpec, default_spec


class ModelFailure(Exception):
    """The model could not produce a usable turn; nothing was stored and the turn can be retried."""

    TIMEOUT = "The model did not answer in time."
    RATE_LIMITED = "The model is rate limited."
    EMPTY = "The model returned an empty message."
    MALFORMED = "The model's answer could not be used."
    ERROR = "The model call failed."

    def __init__(self, reason: str, detail: str = "") -> None:
        self.reason, self.detail = reason, detail
        super().__init__(f"{reason} Nothing was stored; try the turn again.")


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    token_count_method: str
    latency_ms: int


def _litellm() -> Any:
    import litellm

    from .offline import register

    register()
    return litellm


def complete(
    messages: list[dict[str, str]],
    *,
    spec: ModelSpec | None = None,
    on_chunk: Callable[[str], None] | None = None,
    response_format: Any = None,
) -> Completion:
    """Stream a completion, relaying text chunks to `on_chunk`; retries transient faults with backoff.

    `response_format` (a pydantic model or litellm's dict form) asks for structured output; it is passed only to
    non-streamed calls (the judge's), and only when given.
    """
    litellm = _litellm()
    spec = spec or default_spec()
    attempts = settings.MERCURY_MODEL_RETRIES + 1
    last: ModelFailure | None = None
    transient = (
        litellm.Timeout, litellm.RateLimitError, litellm.APIConnectionError, litellm.InternalServerError,
        litellm.ServiceUnavailableError,
    )  # fmt: skip
    for attempt in range(attempts):
        try:
            return _stream_once(litellm, messages, spec, on_chunk, response_format)
        except transient as exc:
            reason = (
                ModelFailure.RATE_LIMITED if isinstance(exc, litellm.RateLimitError) else ModelFailure.TIMEOUT
            )
            if isinstance(exc, litellm.InternalServerError | litellm.ServiceUnavailableError):
                reason = ModelFailure.ERROR
            last = ModelFailure(reason, str(exc)[:200])
        except ModelFailure as exc:
            last = exc
        except Exception as exc:  # any other provider error (bad request, auth): retrying will not help
            raise ModelFailure(ModelFailure.ERROR, str(exc)[:200]) from exc
        if attempt + 1 < attempts:
            time.sleep(min(8.0, 0.5 * 2**attempt))
    assert last is not None
    raise last


def _stream_once(
    litellm: Any,
    messages: list[dict[str, str]],
    spec: ModelSpec,
    on_chunk: Callable[[str], None] | None,
    response_format: Any = None,
) -> Completion:
    started = time.perf_counter()
    model = spec.model
    if on_chunk is None:
        return _complete_once(litellm, messages, spec, started, response_format)
    stream = litellm.completion(
        **spec.call_kwargs(),
        model=model,
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
        timeout=settings.MERCURY_MODEL_TIMEOUT,
    )
    parts: list[str] = []
    usage = None
    for chunk in stream:
        if getattr(chunk, "usage", None):
            usage = chunk.usage
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta.content or ""
        if delta:
            parts.append(delta)
            on_chunk(delta)
            faults.point("mid_stream")
    return _finish("".join(parts), usage, messages, model, started)


def _complete_once(
    litellm: Any, messages: list[dict[str, str]], spec: ModelSpec, started: float, response_format: Any = None
) -> Completion:
    """Nobody watches the words arrive (headless play): one plain call, without streaming overhead."""
    extra = {"response_format": response_format} if response_format is not None else {}
    response = litellm.completion(
        **spec.call_kwargs(),
        **extra,
        model=spec.model,
        messages=messages,
        timeout=settings.MERCURY_MODEL_TIMEOUT,
    )
    text = response.choices[0].message.content or "" if response.choices else ""
    return _finish(text, getattr(response, "usage", None), messages, spec.model, started)


def _finish(text: str, usage: Any, messages: list[dict[str, str]], model: str, started: float) -> Completion:
    text = text.strip()
    if not text:
        raise ModelFailure(ModelFailure.EMPTY)
    if usage and usage.prompt_tokens:
        prompt_tokens, completion_tokens = int(usage.prompt_tokens), int(usage.completion_tokens or 0)
        method = "offline:" + tokens.METHOD if model.startswith("mercury-offline/") else "provider"
    else:
        prompt_tokens = sum(tokens.estimate_tokens(m["content"]) for m in messages)
        completion_tokens, method = tokens.estimate_tokens(text), tokens.METHOD
    return Completion(
        text=text,
        model=model,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        token_count_method=method,
        latency_ms=int((time.perf_counter() - started) * 1000),
    )
