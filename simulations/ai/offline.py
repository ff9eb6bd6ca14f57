"""The built-in offline model: each kind writes its own replies from the prompt (`write`).

The gateway calls it in-process (`answer`), in the calling thread (a real model's call has a thread of its own, for
its deadline; this one keeps the deadline between its words), under the same retries and chunk relay as a real
model's call: litellm's wrapper is left out, since it builds an object per chunk and then rebuilds and prices the
whole response, which costs more CPU than the offline model's own writing. The litellm side of a real model is
tested against a real HTTP server (tests/realmodel/fake_openai.py).

The model is also registered with litellm as the custom provider ``mercury-offline``, so that
``litellm.completion(model="mercury-offline/default", ...)`` answers from a shell or another program as it does here.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict, dataclass
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


@dataclass(frozen=True)
class Usage:
    """Tokens of one call, estimated the way `tokens` estimates a real model's when it reports none."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


def usage(messages: list[dict[str, Any]], text: str) -> Usage:
    prompt = sum(tokens.estimate_tokens(str(m.get("content", ""))) for m in messages)
    completion = tokens.estimate_tokens(text)
    return Usage(prompt, completion, prompt + completion)


def write(messages: list[dict[str, Any]]) -> str:
    """The answer of the kind whose prompt this is (each kind writes its own offline replies)."""
    for kind in all_kinds():
        text = kind.offline_reply(messages)
        if text is not None:
            return text
    raise ValueError("the offline model received a prompt no simulation kind wrote")


# Words per streamed chunk. With a typing delay the model "types" word by word. Without one (benchmarks, tests,
# a class that wants answers at once) every word of a turn reaches the page in the same frame anyway, and each
# chunk costs the relay (the output screen, the channel layer) and litellm, where it is used, a handful of objects,
# so the words go out a few at a time.
WORDS_PER_CHUNK_TYPING, WORDS_PER_CHUNK_AT_ONCE = 1, 4


def pieces(text: str, words_per_chunk: int) -> list[str]:
    words = _CHUNK.findall(text)
    return ["".join(words[i : i + words_per_chunk]) for i in range(0, len(words), words_per_chunk)]


class OutOfTime(Exception):
    """The answer would not be complete by the caller's deadline (`answer`'s `until`)."""


def answer(messages: list[dict[str, Any]], *, streamed: bool, until: float | None = None) -> Iterator[str]:
    """The reply as a model sends it: after the call latency, streamed a word at a time with the typing delay
    (a few words a piece when there is none), or in one piece. `until`: a time.perf_counter() deadline; a wait
    that would end after it ends there instead, with OutOfTime (the gateway's time-out).

    The words keep their own schedule (the n-th one due n typing delays after the first), as a real model's do:
    its server sends them at its pace however busy the caller is, and a caller that reads late finds several
    waiting. Waiting a whole delay after each word instead, a busy worker's late wake-ups would add up and
    stretch an answer several times over."""
    if latency := call_latency():
        _wait(latency, until)
    text = write(messages)
    if not streamed:
        yield text
        return
    delay = token_delay()
    due = time.perf_counter()
    for piece in pieces(text, WORDS_PER_CHUNK_TYPING if delay else WORDS_PER_CHUNK_AT_ONCE):
        if delay:
            due += delay
            _wait(due - time.perf_counter(), until)
        yield piece


def _wait(seconds: float, until: float | None) -> None:
    """Sleep `seconds` (none if not positive: a word already due)."""
    if until is not None and time.perf_counter() + seconds > until:
        time.sleep(max(0.0, until - time.perf_counter()))
        raise OutOfTime()
    if seconds > 0:
        time.sleep(seconds)


def _chunks(messages: list[dict[str, Any]], words_per_chunk: int = 1) -> Iterator[GenericStreamingChunk]:
    text = write(messages)
    parts = pieces(text, words_per_chunk)
    for n, piece in enumerate(parts):
        last = n == len(parts) - 1
        yield GenericStreamingChunk(
            text=piece,
            is_finished=last,
            finish_reason="stop" if last else "",
            usage=asdict(usage(messages, text)) if last else None,  # type: ignore[typeddict-item]
            index=0,
            tool_use=None,
        )


def _chunk(text: str, counted: Usage | None = None) -> GenericStreamingChunk:
    """A piece of the answer; the last one (with `counted`) finishes it."""
    return GenericStreamingChunk(
        text=text,
        is_finished=counted is not None,
        finish_reason="stop" if counted is not None else "",
        usage=asdict(counted) if counted is not None else None,  # type: ignore[typeddict-item]
        index=0,
        tool_use=None,
    )


class OfflineLLM(CustomLLM):
    def completion(self, *args: Any, **kwargs: Any) -> ModelResponse:
        messages = kwargs["messages"]
        text = "".join(answer(messages, streamed=False))
        response: ModelResponse = kwargs["model_response"]
        response.choices[0].message.content = text  # type: ignore[union-attr]
        response.model = f"{PROVIDER}/default"
        counted = usage(messages, text)
        response.usage = litellm.Usage(  # type: ignore[attr-defined]
            prompt_tokens=counted.prompt_tokens, completion_tokens=counted.completion_tokens,
            total_tokens=counted.total_tokens,
        )  # fmt: skip
        return response

    async def acompletion(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return self.completion(*args, **kwargs)

    def streaming(self, *args: Any, **kwargs: Any) -> Iterator[GenericStreamingChunk]:
        """`answer`'s pieces as litellm chunks: each sent when the next arrives, the last with the usage."""
        messages, said, held = kwargs["messages"], "", None
        for piece in answer(messages, streamed=True):
            if held is not None:
                yield _chunk(held)
            said, held = said + piece, piece
        yield _chunk(held or "", usage(messages, said))

    async def astreaming(self, *args: Any, **kwargs: Any) -> AsyncIterator[GenericStreamingChunk]:  # type: ignore[override]
        import asyncio

        delay = token_delay()
        size = WORDS_PER_CHUNK_TYPING if delay else WORDS_PER_CHUNK_AT_ONCE
        if latency := call_latency():
            await asyncio.sleep(latency)
        loop = asyncio.get_running_loop()
        due = loop.time()
        for chunk in _chunks(kwargs["messages"], size):
            if delay:  # on the words' own schedule, as `answer`
                due += delay
                await asyncio.sleep(max(0.0, due - loop.time()))
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
