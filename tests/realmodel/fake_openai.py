"""A small OpenAI-compatible chat server for tests: stdlib only, 127.0.0.1, a random port, scriptable faults.

`POST /v1/chat/completions` answers as the OpenAI API does: one JSON body, or (with `"stream": true`) SSE chunks
in a chunked HTTP/1.1 body ending with `data: [DONE]`, usage in a last chunk when `stream_options.include_usage`
is set. Answers are a pure function of the prompt, so a game that recovers from faults says what a clean game
with the same seed says. Faults are scripted per request kind ("turn" or "judge") and consumed in order.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JUDGE_MARK = "You read one message"  # the judge prompt's opening words (prompt_templates/judge)
REASONER_MARK = (
    "You decide what one member"  # the social feed's reasoner (simulations/kinds/social_feed/turns.py)
)

# Plausible delegation sentences; three of them make an answer, chosen by a hash of the prompt.
SENTENCES = (
    "Our delegation has listened carefully to what was said.",
    "We can support a phased approach if financing is offered to developing countries.",
    "We ask the others to say plainly which timeline they could accept.",
    "Artisanal mining communities need time and support, not only deadlines.",
    "A strong compliance committee would reassure us.",
    "We are open to trading our position on emissions for help with storage.",
    "Technical assistance matters as much as the date itself.",
    "We remain committed to a treaty that every region can implement.",
)
JUDGE_ANSWER = "{}"  # valid Signals: the message signals nothing the judge must act on


@dataclass
class Fault:
    """What the server does with one request. `kind` is one of FAULTS; the numbers tune it."""

    kind: str = "ok"
    status: int = 200
    retry_after: float | None = None
    delay: float = 0.0  # slow: seconds before the first byte; trickle: seconds between words
    after_words: int = 3  # stall/cut: words sent before stalling or dropping the connection
    body: str | None = None  # the answer's text instead of the usual one (e.g. a judge's invalid JSON)


FAULTS = (
    "ok", "429", "500", "401", "slow", "trickle", "stall", "cut", "no_finish", "length", "empty",
    "judge_invalid", "judge_out_of_range",
)  # fmt: skip


@dataclass
class Seen:
    kind: str
    fault: str
    stream: bool
    model: str
    authorization: str
    at: float
    messages: list[dict[str, Any]] = field(default_factory=list)  # what the model was sent


@dataclass
class Script:
    turn: deque[Fault] = field(default_factory=deque)
    judge: deque[Fault] = field(default_factory=deque)


def answer_for(messages: list[dict[str, Any]]) -> str:
    """Three sentences picked by a hash of the prompt: deterministic, and different from turn to turn; for the
    social feed's reasoner, the JSON choice it asks for (one of the options it lists, picked by the same hash)."""
    digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).digest()
    if any(str(m.get("content", "")).startswith(REASONER_MARK) for m in messages):
        options = re.findall(
            r'"([A-Z_]+)" \(', str(messages[-1].get("content", "")).rpartition("Options:")[2]
        )
        if options:
            choice = options[digest[0] % len(options)]
            return json.dumps({"choice": choice, "reason": "It fits what this member follows."})
    picks = [SENTENCES[b % len(SENTENCES)] for b in digest[:3]]
    return " ".join(dict.fromkeys(picks))  # no sentence twice


def is_judge(messages: list[dict[str, Any]]) -> bool:
    return any(str(m.get("content", "")).startswith(JUDGE_MARK) for m in messages)


class FakeOpenAI:
    """Start with `with FakeOpenAI() as server:`; `server.api_base` is what MERCURY_MODEL_API_BASE takes."""

    def __init__(self) -> None:
        self.script = Script()
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        self.closing = threading.Event()  # wakes stalled handlers when the server stops
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.fake = self  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def inject(self, *faults: Fault, kind: str = "turn") -> None:
        """The next requests of this kind get these faults, one each, in order; later ones are answered."""
        with self.lock:
            getattr(self.script, kind).extend(faults)

    def reset(self) -> None:
        with self.lock:
            self.script = Script()
            self.seen.clear()

    def requests(self, kind: str | None = None) -> list[Seen]:
        with self.lock:
            return [s for s in self.seen if kind is None or s.kind == kind]

    def next_fault(self, kind: str) -> Fault:
        with self.lock:
            queue: deque[Fault] = getattr(self.script, kind)
            return queue.popleft() if queue else Fault()


def closed_port_base() -> str:
    """An address where nothing listens: connecting to it is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


_WORDS = re.compile(r"\S+\s*")


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (a call abandoned at its deadline) is expected here, not an error to print."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # chunked streaming bodies, as real servers send them
    disable_nagle_algorithm = True  # small writes go out at once (else 40 ms delayed-ACK stalls per answer)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read `seen`
        pass

    @property
    def fake(self) -> FakeOpenAI:
        return self.server.fake  # type: ignore[attr-defined, no-any-return]

    def end_headers(self) -> None:
        # One request a connection: a kept-alive one stayed in litellm's client pool after the server stopped,
        # and its socket was reported unclosed when the test process exited.
        self.send_header("Connection", "close")
        super().end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length) or b"{}")
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._error(404, "not_found_error", f"no route {self.path}")
            return
        temperature = request.get("temperature", 1)
        if not isinstance(temperature, int | float) or not 0 <= temperature <= 2:
            self._error(400, "invalid_request_error", f"Invalid 'temperature': {temperature!r}.")
            return
        messages = request.get("messages", [])
        kind = "judge" if is_judge(messages) else "turn"
        fault = self.fake.next_fault(kind)
        stream = bool(request.get("stream"))
        with self.fake.lock:
            self.fake.seen.append(
                Seen(kind, fault.kind, stream, str(request.get("model", "")),
                     self.headers.get("Authorization", ""), time.monotonic(), messages)
            )  # fmt: skip
        if fault.kind == "429":
            headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
            self._error(429, "rate_limit_exceeded", "Rate limit reached for requests", headers)
            return
        if fault.kind == "500":
            self._error(500, "server_error", "The server had an error while processing your request.")
            return
        if fault.kind == "401":
            self._error(401, "invalid_api_key", "Incorrect API key provided: sk-wrong.")
            return
        if fault.kind == "slow" and self.fake.closing.wait(fault.delay):
            return
        text, finish = answer_for(messages), "stop"
        if kind == "judge":
            text = JUDGE_ANSWER
        if fault.body is not None:
            text = fault.body
        if fault.kind == "empty":
            text = ""
        if fault.kind == "length":
            text, finish = text + " We would also like to add that", "length"
        usage = {"prompt_tokens": 40 * len(messages), "completion_tokens": len(text.split())}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if not stream:
            self._whole(_completion(request, text, finish, usage), fault)
            return
        self._stream(request, text, finish, usage, fault)

    # --- bodies -----------------------------------------------------------------------------------------------

    def _json(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        self._json(status, {"error": {"message": message, "type": code, "code": code}}, headers)

    def _whole(self, body: dict[str, Any], fault: Fault) -> None:
        """A JSON answer; stall, trickle and cut apply to its body bytes as they do to a stream's words."""
        if fault.kind not in ("stall", "trickle", "cut"):
            self._json(200, body)
            return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        half = len(data) // 2
        if fault.kind == "trickle":
            for start in range(0, len(data), 16):
                if self.fake.closing.wait(fault.delay):
                    return
                self.wfile.write(data[start : start + 16])
                self.wfile.flush()
            return
        self.wfile.write(data[:half])
        self.wfile.flush()
        if fault.kind == "stall":
            self.fake.closing.wait(60)
        self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _event(self, payload: dict[str, Any] | str) -> None:
        body = payload if isinstance(payload, str) else json.dumps(payload)
        self._chunk(f"data: {body}\n\n".encode())

    def _stream(
        self, request: dict[str, Any], text: str, finish: str, usage: dict[str, int], fault: Fault
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        base = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": request["model"],
        }
        self._event(base | {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})
        for n, word in enumerate(_WORDS.findall(text)):
            if fault.kind in ("stall", "cut") and n == fault.after_words:
                if fault.kind == "stall":
                    self.fake.closing.wait(60)  # silence with the connection open
                # cut: drop the connection mid-body (no terminating chunk, no [DONE])
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            if fault.kind == "trickle" and self.fake.closing.wait(fault.delay):
                return
            self._event(base | {"choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]})
        if fault.kind == "no_finish":
            self._chunk(b"")  # a well-formed end of body, but no finish_reason and no [DONE]
            return
        self._event(base | {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        if (request.get("stream_options") or {}).get("include_usage"):
            self._event(base | {"choices": [], "usage": usage})
        self._event("[DONE]")
        self._chunk(b"")


def _completion(request: dict[str, Any], text: str, finish: str, usage: dict[str, int]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": request["model"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": usage,
    }
