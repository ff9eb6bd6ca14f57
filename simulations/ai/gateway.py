"""The one door to language models: litellm, with the offline provider registered, one deadline per call, retries.

What a call promises (measured against tests/realmodel/fake_openai.py):
- One deadline per attempt, `MERCURY_MODEL_TIMEOUT` seconds from the request to the last streamed word. The SDK's
  own time-out is per read (a trickling stream ran 19.6 s with a 3 s setting), so the attempt runs in a worker
  thread and this thread stops waiting when the deadline passes; a stall mid-stream is a time-out like any other.
  (The offline model runs in this thread and keeps the deadline between its words.)
- Exactly `MERCURY_MODEL_RETRIES` retries: the SDK's own retries are switched off (`max_retries=0`, else the OpenAI
  client retries 429/5xx/time-outs twice more by itself). Retries back off 0.5 s, 1 s, 2 s ... (at most 8 s); a 429
  waits what its Retry-After asks, at most one deadline. A turn therefore takes at most
  (retries + 1) x deadline + the back-offs.
- An answer is stored only when the model said it had finished (finish_reason "stop"): a `length` finish, a
  stream that ended without a finish reason and a dropped connection are retried, and on the last attempt the
  turn fails with cause "truncated" (nothing half-written is ever stored).
- Errors that a retry cannot mend (a refused key, an unknown model, a bad request, a missing key) fail at once,
  with the provider's own message and the setting to change.

litellm is imported lazily (its import costs over a second), so commands and tests that need no model stay fast.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings

from simulations import faults

from . import call_threads, tokens
from .model_spec import ModelSpec, default_spec, judge_spec

log = logging.getLogger("mercury.model")

# When the words being handed to `on_chunk` left the model (wall clock): set by `_attempt` in the calling thread
# around each relay, read by the relay that stamps frames with it (services/play/drive.py), so bench/load.py measures a
# frame's delay from the model's words, the hop from the call's thread to this one included.
_relaying = threading.local()


def words_left_model_at() -> float | None:
    """When the words now being relayed in this thread came from the model; None outside a relay."""
    return getattr(_relaying, "at", None)


BACKOFF_BASE, BACKOFF_MAX = 0.5, 8.0  # seconds: 0.5, 1, 2, 4, 8, 8 ...
NO_KEY = (
    "not-needed"  # sent to a server at MERCURY_MODEL_API_BASE when no key is set: local servers ignore it
)


@dataclass(frozen=True)
class Cause:
    """One kind of failure: the sentence the student reads, what to do, and whether another attempt can help."""

    reason: str
    advice: str  # may name settings: {model}, {base}, {key}, {kwargs}
    retryable: bool


CAUSES: dict[str, Cause] = {
    "timeout": Cause(
        "The model did not answer in time.",
        "If this keeps happening, ask your teacher to raise MERCURY_MODEL_TIMEOUT or use a faster model.", True,
    ),
    "rate_limited": Cause(
        "The model server is busy (rate limited).", "Wait a minute before trying again.", True
    ),
    "server_error": Cause(
        "The model server had an error.",
        "If this keeps happening, ask your teacher to check the model server.", True,
    ),
    "refused_connection": Cause(
        "The model server could not be reached.",
        "Ask your teacher to check that it is running and that {base} points to it.", True,
    ),
    "auth": Cause("The model server refused the key.", "Ask your teacher to set {key}.", False),
    "bad_request": Cause(
        "The model server rejected the request.", "Ask your teacher to check {kwargs} and {model}.", False
    ),
    "unknown_model": Cause(
        "The model server does not know this model.", "Ask your teacher to check {model} and {base}.", False
    ),
    "truncated": Cause(
        "The model's answer was cut off.",
        "If this keeps happening, ask your teacher to raise max_tokens in {kwargs} or check the network.", True,
    ),
    "empty": Cause("The model returned an empty message.", "", True),
    "unusable": Cause("The model's answer could not be used.", "", False),
}  # fmt: skip
AFTERWORD = "Nothing was lost: try the turn again."


class ModelFailure(Exception):
    """The model could not produce a usable turn; nothing was stored and the turn can be retried.

    `reason` is a constant sentence for the student, `cause` one of CAUSES' keys, `detail` the provider's own
    message (for the teacher and the stored call, never shown to the student)."""

    TIMEOUT = CAUSES["timeout"].reason
    RATE_LIMITED = CAUSES["rate_limited"].reason
    EMPTY = CAUSES["empty"].reason
    MALFORMED = CAUSES["unusable"].reason
    ERROR = "The model call failed."

    def __init__(self, reason: str, detail: str = "", *, cause: str = "", advice: str = "") -> None:
        by_reason = {c.reason: name for name, c in CAUSES.items()}
        self.reason, self.detail = reason, detail
        self.cause = cause or by_reason.get(reason, "error")
        self.advice = advice
        super().__init__(" ".join(part for part in (reason, advice, AFTERWORD) if part))

    @property
    def record(self) -> str:
        """What the stored call keeps: the cause and the provider's message, not the student's sentence."""
        return f"{self.cause}: {self.detail or self.reason}"[:300]

    @property
    def retryable(self) -> bool:
        cause = CAUSES.get(self.cause)
        return cause.retryable if cause else False


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    token_count_method: str
    latency_ms: int
    attempts: int = 1


def load_model_library() -> None:
    """Import litellm (and the offline provider) now: a long-running process that calls models does this at
    start-up, before freezing what it loaded out of the garbage collector's reach (mercury/startup.py)."""
    _litellm()


def _litellm() -> Any:
    import litellm

    from .offline import register

    register()
    quiet_streaming_logging(litellm)
    return litellm


def quiet_streaming_logging(litellm: Any) -> None:
    """Skip litellm's logging of each streamed chunk while nobody listens to it.

    For every chunk of a stream litellm hands a logging job to a thread pool, and each job runs a fresh event loop
    (`asyncio.run`) to call the success callbacks; Mercury registers none, so that work only costs CPU (about
    half a streamed game's server time). An application that adds litellm callbacks gets the logging back: this
    is decided on every call from litellm's own callback lists."""
    listening = any(
        getattr(litellm, name, None)
        for name in ("callbacks", "success_callback", "_async_success_callback", "input_callback")
    )
    litellm.disable_streaming_logging = not listening


def setting_names(spec: ModelSpec) -> dict[str, str]:
    """The settings a teacher changes for this spec (the playing model's, the judge's, or a listed model's)."""
    if spec == default_spec():
        prefix = "MERCURY_MODEL"
    elif settings.MERCURY_JUDGE_MODEL and spec == judge_spec():
        prefix = "MERCURY_JUDGE"
    else:
        return {
            "model": "the model's name in the admin model list", "base": "its server address",
            "key": "the key variable it names", "kwargs": "its extra arguments",
        }  # fmt: skip
    model = prefix if prefix == "MERCURY_MODEL" else "MERCURY_JUDGE_MODEL"
    return {
        "model": model,
        "base": f"{prefix}_API_BASE",
        "key": f"{prefix}_API_KEY",
        "kwargs": f"{prefix}_KWARGS",
    }


def failure(cause: str, detail: str, spec: ModelSpec) -> ModelFailure:
    kind = CAUSES[cause]
    return ModelFailure(
        kind.reason, detail[:500], cause=cause, advice=kind.advice.format(**setting_names(spec))
    )


def _hand_back_database_connection() -> None:
    """A model call takes seconds: meanwhile this thread's database connection goes back to the process's pool
    (mercury/db/pool.py) for other threads, so a server's connections follow its database work, not its open
    model calls (200 games streaming at once held 200 PostgreSQL connections, twice its default limit). Never
    inside a transaction (the model is called outside them; a test's own transaction is left alone)."""
    from django.db import connection

    if not connection.in_atomic_block:
        connection.close()


def complete(
    messages: list[dict[str, str]],
    *,
    spec: ModelSpec | None = None,
    on_chunk: Callable[[str], None] | None = None,
    response_format: Any = None,
    retries: int | None = None,
    on_restart: Callable[[], None] | None = None,
) -> Completion:
    """One finished answer from the model, streamed to `on_chunk` when given (else one plain call).

    `response_format` (a pydantic model or litellm's dict form) asks for structured output; it is passed only to
    non-streamed calls (the judge's), and only when given. `retries` overrides MERCURY_MODEL_RETRIES (check_model
    reports the first failure as it is). `on_restart` is called before a retry, so a page can drop the words of
    the attempt that failed. Raises ModelFailure naming its cause once the attempts are spent.
    """
    litellm = _litellm()
    spec = spec or default_spec()
    _hand_back_database_connection()
    attempts = (settings.MERCURY_MODEL_RETRIES if retries is None else retries) + 1
    deadline = float(settings.MERCURY_MODEL_TIMEOUT)
    for attempt in range(attempts):
        wait = 0.0
        if attempt and on_restart is not None:
            on_restart()
        try:
            result = _attempt(litellm, messages, spec, on_chunk, response_format, deadline)
            return replace(result, attempts=attempt + 1)
        except ModelFailure as exc:
            last = exc
        except Exception as exc:  # a provider error: classify it, then retry only what a retry can mend
            last, wait = _classify(litellm, exc, spec, deadline)
        log.warning("model call %s/%s failed: %s", attempt + 1, attempts, last.record)
        if not last.retryable or attempt + 1 == attempts:
            raise last
        time.sleep(max(wait, min(BACKOFF_MAX, BACKOFF_BASE * 2**attempt)))
    raise AssertionError("unreachable: the last attempt returns or raises")


def _classify(litellm: Any, exc: Exception, spec: ModelSpec, deadline: float) -> tuple[ModelFailure, float]:
    """A provider exception as a ModelFailure with its cause, and how long a 429 asks us to wait."""
    chain = _chain(exc)
    names = {type(e).__name__ for e in chain}
    text = str(exc)
    root = chain[-1]
    detail = text if root is exc else f"{text} ({type(root).__name__}: {root})"  # e.g. the refused connect
    if "ConnectionRefusedError" in names or "ConnectError" in names:
        return failure("refused_connection", detail, spec), 0.0
    if isinstance(exc, litellm.Timeout) or names & {"ReadTimeout", "TimeoutError", "ConnectTimeout"}:
        return failure("timeout", detail, spec), 0.0
    if isinstance(exc, litellm.RateLimitError):
        return failure("rate_limited", detail, spec), min(_retry_after(exc), deadline)
    if isinstance(exc, litellm.AuthenticationError | litellm.PermissionDeniedError) or (
        "Missing credentials" in text or "api_key client option must be set" in text
    ):
        return failure("auth", detail, spec), 0.0
    if isinstance(exc, litellm.NotFoundError) or "LLM Provider NOT provided" in text:
        return failure("unknown_model", detail, spec), 0.0
    if isinstance(exc, litellm.BadRequestError | litellm.UnprocessableEntityError):
        return failure("bad_request", detail, spec), 0.0
    if names & {"RemoteProtocolError", "ReadError"}:  # the connection dropped mid-answer
        return failure("truncated", detail, spec), 0.0
    if any("Stream ended before a finish_reason" in str(e) for e in chain):
        # The answer stopped with no finish reason: litellm 1.109 raises this (a MidStreamFallbackError, an
        # APIConnectionError) where earlier versions ended the stream and left us to see it cut.
        return failure("truncated", detail, spec), 0.0
    status = getattr(exc, "status_code", None)
    if isinstance(
        exc, litellm.APIConnectionError | litellm.ServiceUnavailableError | litellm.InternalServerError
    ) or (isinstance(status, int) and status >= 500):
        return failure("server_error", detail, spec), 0.0
    # Anything else is a fault of ours or of the arguments (e.g. a bad MERCURY_MODEL_KWARGS): retrying cannot help.
    return failure("bad_request", detail, spec), 0.0


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in out:
        out.append(current)
        current = current.__cause__ or current.__context__ or getattr(current, "original_exception", None)
    return out


def _retry_after(exc: Exception) -> float:
    """Seconds a 429 asks us to wait (Retry-After in seconds; 0 when absent or a date we do not parse)."""
    for headers in (getattr(exc, "litellm_response_headers", None), getattr(getattr(exc, "response", None), "headers", None)):  # fmt: skip
        if headers:
            try:
                return max(0.0, float(headers.get("retry-after", "")))
            except (TypeError, ValueError):
                continue
    return 0.0


def _call_kwargs(spec: ModelSpec) -> dict[str, Any]:
    """litellm arguments for this spec, with the SDK's own retries off (ours are the only ones)."""
    out = {"max_retries": 0, **spec.call_kwargs()}
    if spec.api_base and "api_key" not in out and not os.environ.get("OPENAI_API_KEY"):
        # The OpenAI client insists on some key even for a local server that needs none.
        out["api_key"] = NO_KEY
    return out


# --- one attempt, within one deadline ---------------------------------------------------------------------------


def _attempt(
    litellm: Any,
    messages: list[dict[str, str]],
    spec: ModelSpec,
    on_chunk: Callable[[str], None] | None,
    response_format: Any,
    deadline: float,
) -> Completion:
    """Run the call in a worker thread and read its results here until the deadline (the offline model: in this
    thread, `_offline_attempt`).

    The worker sends ("text", (str, when it left the model)), ("usage", obj), ("end", finish_reason) or
    ("error", exc). Chunks are relayed to `on_chunk` from this thread, so a callback that raises (a closed page)
    stops the turn here at once."""
    started = time.perf_counter()
    if spec.offline:
        return _offline_attempt(messages, spec, on_chunk, started, deadline)
    results: queue.Queue[tuple[str, Any]] = queue.Queue()
    stop = threading.Event()
    kwargs = _call_kwargs(spec) | {"model": spec.model, "messages": messages, "timeout": deadline}
    if on_chunk is None and response_format is not None:
        kwargs["response_format"] = response_format
    target = _stream_worker if on_chunk else _plain_worker
    # In a kept daemon thread: an abandoned call ends at its own read time-out (call_threads.py).
    call_threads.run(target, litellm, kwargs, results, stop)
    parts: list[str] = []
    usage: Any = None
    try:
        while True:
            left = started + deadline - time.perf_counter()
            try:
                kind, value = results.get(timeout=max(left, 0.0)) if left > 0 else results.get_nowait()
            except queue.Empty:
                raise failure(
                    "timeout",
                    f"no complete answer within {deadline:g} s ({len(parts)} chunks received)",
                    spec,
                ) from None
            if kind == "error":
                raise value
            if kind == "usage":
                usage = value
            elif kind == "text":
                piece, _relaying.at = value
                parts.append(piece)
                if on_chunk is not None:
                    on_chunk(piece)
                    faults.point("mid_stream")
            else:  # "end": the answer is complete only if the model said why it stopped
                return _finish("".join(parts), value, usage, messages, spec, started)
    finally:
        _relaying.at = None
        stop.set()  # the worker stops reading at its next chunk and closes the stream


def _said(results: queue.Queue[tuple[str, Any]], piece: str) -> None:
    """A piece of the answer, with when it left the model (see `words_left_model_at`)."""
    results.put(("text", (piece, time.time())))


def _plain_worker(
    litellm: Any, kwargs: dict[str, Any], results: queue.Queue[tuple[str, Any]], stop: Any
) -> None:
    """Nobody watches the words arrive (headless play, the judge): one plain call."""
    try:
        response = litellm.completion(**kwargs)
        choice = response.choices[0] if response.choices else None
        _said(results, (choice.message.content or "") if choice else "")
        results.put(("usage", getattr(response, "usage", None)))
        results.put(("end", getattr(choice, "finish_reason", None)))
    except Exception as exc:
        results.put(("error", exc))


def _offline_attempt(
    messages: list[dict[str, str]],
    spec: ModelSpec,
    on_chunk: Callable[[str], None] | None,
    started: float,
    deadline: float,
) -> Completion:
    """The built-in offline model, in this thread and without litellm's wrapper (see simulations/ai/offline.py).

    A real model's call runs in a thread of its own only so that this one can stop waiting at the deadline. The
    offline model is this process's own code and cannot hang: its typing delay is the one wait, and it never
    sleeps past the deadline (`offline.answer`), so the deadline is kept here, between its words. A second
    thread would wake twice and cross a queue for every streamed word, a real share of a core under load."""
    from . import offline  # imports litellm: only when a model is called

    parts: list[str] = []
    try:
        for piece in offline.answer(messages, streamed=on_chunk is not None, until=started + deadline):
            parts.append(piece)
            if on_chunk is not None:
                _relaying.at = time.time()  # the words leave the model now
                on_chunk(piece)
                faults.point("mid_stream")
    except offline.OutOfTime:
        raise failure(
            "timeout", f"no complete answer within {deadline:g} s ({len(parts)} chunks received)", spec
        ) from None
    finally:
        _relaying.at = None
    text = "".join(parts)
    return _finish(text, "stop", offline.usage(messages, text), messages, spec, started)


def _stream_worker(
    litellm: Any, kwargs: dict[str, Any], results: queue.Queue[tuple[str, Any]], stop: Any
) -> None:
    stream = None
    try:
        stream = litellm.completion(**kwargs, stream=True, stream_options={"include_usage": True})
        finish = None
        for chunk in stream:
            if stop.is_set():
                return
            if getattr(chunk, "usage", None):
                results.put(("usage", chunk.usage))
            if not chunk.choices:
                continue
            if chunk.choices[0].finish_reason:
                finish = chunk.choices[0].finish_reason
            delta = chunk.choices[0].delta.content or ""
            if delta:
                _said(results, delta)
        # litellm reports "stop" on a stream that simply ended; what the provider itself said is kept here.
        results.put(("end", getattr(stream, "received_finish_reason", finish)))
    except Exception as exc:
        results.put(("error", exc))
    finally:
        close = getattr(getattr(stream, "completion_stream", None), "close", None)
        if stop.is_set() and callable(close):
            with contextlib.suppress(Exception):  # best effort on a connection we gave up on
                close()  # free the connection of an abandoned answer


def _finish(
    text: str, finish: str | None, usage: Any, messages: list[dict[str, str]], spec: ModelSpec, started: float
) -> Completion:
    if finish in ("length", "content_filter"):
        raise failure("truncated", f"finish_reason {finish} after {len(text)} characters", spec)
    if finish is None:
        raise failure(
            "truncated", f"the stream ended without a finish reason after {len(text)} characters", spec
        )
    text = text.strip()
    if not text:
        raise failure("empty", f"finish_reason {finish}, no text", spec)
    model = spec.model
    if usage and usage.prompt_tokens:
        prompt_tokens, completion_tokens = int(usage.prompt_tokens), int(usage.completion_tokens or 0)
        method = "offline:" + tokens.METHOD if spec.offline else "provider"
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
