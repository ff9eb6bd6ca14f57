"""The built-in offline model, registered with litellm as the custom provider ``mercury-offline``.

Going through litellm (rather than calling the writer directly) means the offline path exercises exactly the code
a real model uses: streaming, usage accounting, timeouts and error mapping.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import litellm
from litellm.llms.custom_llm import CustomLLM
from litellm.types.utils import GenericStreamingChunk, ModelResponse

from simulations.kinds import all_kinds

from . import tokens

PROVIDER = "mercury-offline"
_CHUNK = re.compile(r"\S+\s*")


def token_delay() -> float:
    from django.conf import settings

    return float(getattr(settings, "MERCURY_OFFLINE_TOKEN_DELAY", 0.0))


def call_latency() -> float:
    """Seconds before the first word (MERCURY_OFFLINE_CALL_LATENCY): a real model's time to answer, simulated."""
    from django.conf import settings

    return float(getattr(settings, "MERCURY_OFFLINE_CALL_LATENCY", 0.0))


def _usage(messages: list[dict[str, Any]], text: str) -> dict[str, int]:
    prompt = sum(tokens.estimate_tokens(str(m.get("content", ""))) for m in messages)
    completion = tokens.estimate_tokens(text)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def write(messages: list[dict[str, Any]]) -> str:
    """The answer of the kind whose prompt this is (each kind writes its own offline replies)."""
    for kind in all_kinds():
        text = kind.offline_reply(messages)
        if text is not None:
            return text
    raise ValueError("the offline model received a prompt no simulation kind wrote")


# Words per streamed chunk. With a typing delay the model "types" word by word. Without one (benchmarks, tests,
# a class that wants answers at once) every word of a turn reaches the page in the same frame anyway, and each
# chunk costs litellm a handful of objects on its way through the stream (about a sixth of a game's server CPU
# at one word a chunk), so the words go out a few at a time.
WORDS_PER_CHUNK_TYPING, WORDS_PER_CHUNK_AT_ONCE = 1, 4


def _chunks(messages: list[dict[str, Any]], words_per_chunk: int = 1) -> Iterator[GenericStreamingChunk]:
    text = write(messages)
    words = _CHUNK.findall(text)
    pieces = ["".join(words[i : i + words_per_chunk]) for i in range(0, len(words), words_per_chunk)]
    for n, piece in enumerate(pieces):
        last = n == len(pieces) - 1
        yield GenericStreamingChunk(
            text=piece,
            is_finished=last,
            finish_reason="stop" if last else "",
            usage=_usage(messages, text) if last else None,  # type: ignore[typeddict-item]
            index=0,
            tool_use=None,
        )


class OfflineLLM(CustomLLM):
    def completion(self, *args: Any, **kwargs: Any) -> ModelResponse:
        messages = kwargs["messages"]
        if latency := call_latency():
            time.sleep(latency)
        text = write(messages)
        response: ModelResponse = kwargs["model_response"]
        response.choices[0].message.content = text  # type: ignore[union-attr]
        response.model = f"{PROVIDER}/default"
        usage = _usage(messages, text)
        response.usage = litellm.Usage(  # type: ignore[attr-defined]
            prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"],
            total_tokens=usage["total_tokens"],
        )  # fmt: skip
        return response

    async def acompletion(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return self.completion(*args, **kwargs)

    def streaming(self, *args: Any, **kwargs: Any) -> Iterator[GenericStreamingChunk]:
        delay = token_delay()
        size = WORDS_PER_CHUNK_TYPING if delay else WORDS_PER_CHUNK_AT_ONCE
        if latency := call_latency():
            time.sleep(latency)
        for chunk in _chunks(kwargs["messages"], size):
            if delay:
                time.sleep(delay)
            yield chunk

    async def astreaming(self, *args: Any, **kwargs: Any) -> AsyncIterator[GenericStreamingChunk]:  # type: ignore[override]
        import asyncio

        delay = token_delay()
        size = WORDS_PER_CHUNK_TYPING if delay else WORDS_PER_CHUNK_AT_ONCE
        if latency := call_latency():
            await asyncio.sleep(latency)
        for chunk in _chunks(kwargs["messages"], size):
            if delay:
                await asyncio.sleep(delay)
            yield chunk


_HANDLER: Any = None


def register() -> None:
    """Make sure litellm knows the provider (checked on every call: a test or an embedding application may
    replace litellm's provider list after the first registration)."""
    global _HANDLER
    if any(p.get("provider") == PROVIDER for p in litellm.custom_provider_map):
        return
    _HANDLER = _HANDLER or OfflineLLM()
    litellm.custom_provider_map = [
        *litellm.custom_provider_map,
        {"provider": PROVIDER, "custom_handler": _HANDLER},
    ]
    litellm.suppress_debug_info = True
