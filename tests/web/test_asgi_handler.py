"""HTTP through the ASGI application the servers run (mercury/asgi.py): the middleware chain and the view run in
one thread, handed over by the event loop once per request, not once per middleware."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import SyncToAsync
from asgiref.testing import ApplicationCommunicator
from channels.testing import HttpCommunicator

from mercury.asgi import application

pytestmark = [pytest.mark.django_db(transaction=True)]
STATIC = Path(__file__).resolve().parents[2] / "static"


def _count_hops(monkeypatch: Any) -> list[str]:
    hops: list[str] = []
    original = SyncToAsync.__call__

    async def counted(self: SyncToAsync[Any, Any], *args: Any, **kwargs: Any) -> Any:
        hops.append(getattr(self.func, "__qualname__", repr(self.func)))
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(SyncToAsync, "__call__", counted)
    return hops


async def _request(method: str, path: str, body: bytes = b"", headers: Any = None) -> dict[str, Any]:
    base = [(b"host", b"localhost")]
    communicator = HttpCommunicator(application, method, path, body=body, headers=base + (headers or []))
    response = await communicator.get_response(timeout=10)
    await communicator.wait(timeout=10)  # the handler's end: the response's close and the body file's
    return response


async def test_a_page_crosses_to_its_thread_once_and_every_middleware_still_runs(monkeypatch: Any) -> None:
    hops = _count_hops(monkeypatch)
    response = await _request("GET", "/accounts/login/")
    assert response["status"] == 200
    headers = {k.decode().lower(): v.decode() for k, v in response["headers"]}
    assert headers["content-security-policy"]  # mercury.csp (a sync-only middleware)
    assert headers["x-frame-options"] == "DENY"  # clickjacking
    assert headers["x-content-type-options"] == "nosniff"  # security
    assert "csrftoken=" in headers["set-cookie"]  # CSRF: the form's token
    assert "Vary" in {k.decode().title() for k, _ in response["headers"]}  # sessions / htmx
    # request_started's receivers, the chain with its view and the response's close (request_finished) in one hop
    # (Django's own handler made about fifteen: two per middleware, and one each for the two signals).
    assert len(hops) == 1, hops


async def test_a_requests_signals_run_once_each_in_its_thread_around_the_view(monkeypatch: Any) -> None:
    from django.core import signals

    seen: list[tuple[str, int]] = []

    def started(**_: Any) -> None:
        seen.append(("started", threading.get_ident()))

    def finished(**_: Any) -> None:
        seen.append(("finished", threading.get_ident()))

    signals.request_started.connect(started)
    signals.request_finished.connect(finished)
    try:
        response = await _request("GET", "/accounts/login/")
    finally:
        signals.request_started.disconnect(started)
        signals.request_finished.disconnect(finished)
    assert response["status"] == 200 and b"csrfmiddlewaretoken" in response["body"]
    assert [name for name, _ in seen] == ["started", "finished"]
    assert seen[0][1] == seen[1][1] != threading.get_ident()  # the request's thread, not the loop's


# WhiteNoise's file responses iterate synchronously: Django's ASGI handler warns and serves them in a thread.
@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume synchronous iterators")
async def test_a_streamed_response_is_closed_after_it_is_sent(monkeypatch: Any) -> None:
    """A static file is a streaming response (WhiteNoise's, over a file): its close (the file's, and
    request_finished) must wait until its last chunk is sent, as under Django's own handler."""
    from django.core import signals

    hops = _count_hops(monkeypatch)
    finished: list[bool] = []

    def on_finished(**_: Any) -> None:
        finished.append(True)

    signals.request_finished.connect(on_finished)
    scope = {
        "type": "http", "http_version": "1.1", "method": "GET", "path": "/static/mercury/app.css",
        "raw_path": b"/static/mercury/app.css", "query_string": b"", "root_path": "", "scheme": "http",
        "headers": [(b"host", b"localhost")], "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
    }  # fmt: skip
    communicator = ApplicationCommunicator(application, scope)
    try:
        await communicator.send_input({"type": "http.request", "body": b""})
        start = await communicator.receive_output(timeout=10)
        body, more = b"", True
        while more:  # channels' HttpCommunicator wants a body in each message; ASGI lets the last one omit it
            message = await communicator.receive_output(timeout=10)
            body, more = body + message.get("body", b""), message.get("more_body", False)
            if more:
                assert finished == []  # not closed while its content is still being sent
        await communicator.wait(timeout=10)
    finally:
        signals.request_finished.disconnect(on_finished)
    assert start["status"] == 200
    assert body == (STATIC / "mercury" / "app.css").read_bytes()
    assert finished == [True]
    # The chain with its view; Django reading the file's chunks (a sync iterator); the close once it is sent.
    assert hops == ["OneHopASGIHandler._respond", "list", "HttpResponseBase.close"], hops


async def test_a_refused_post_and_a_missing_page_get_their_answers(monkeypatch: Any) -> None:
    response = await _request(
        "POST",
        "/accounts/login/",
        b"username=a&password=b",
        [(b"content-type", b"application/x-www-form-urlencoded")],
    )
    assert response["status"] == 403  # no CSRF token: the CSRF middleware refuses it, inside the one thread
    response = await _request("GET", "/no-such-page/")
    assert response["status"] == 404


async def test_requests_one_after_another_reuse_a_thread_and_requests_at_once_each_have_their_own() -> None:
    """Django's handler starts and joins a thread per request; ours lends a kept one (mercury/asgi_handler.py).
    A request still has its thread to itself while it runs: two at once run in two threads."""
    import asyncio
    import threading

    from django.core.signals import request_started

    seen: list[int] = []
    together: list[threading.Barrier] = []

    def record(**_: Any) -> None:  # runs in the request's thread, as Django's own receivers do
        seen.append(threading.get_ident())
        for barrier in together:
            barrier.wait()  # both requests are inside at once, or this one fails after the barrier's timeout

    request_started.connect(record, weak=False)
    try:
        for _ in range(2):
            assert (await _request("GET", "/accounts/login/"))["status"] == 200
        assert seen[0] == seen[1]
        seen.clear()
        together.append(threading.Barrier(2, timeout=10))
        both = await asyncio.gather(_request("GET", "/accounts/login/"), _request("GET", "/accounts/login/"))
        assert [r["status"] for r in both] == [200, 200]
        assert len(set(seen)) == 2
    finally:
        request_started.disconnect(record)


def test_a_request_thread_still_running_its_view_is_not_lent_to_the_next_request() -> None:
    """A client that goes away leaves its view running (Django stops waiting, not the thread): the next request
    must not queue behind it."""
    import threading

    from mercury.asgi_handler import RequestThreads

    threads = RequestThreads(keep=4)
    busy, free = threads.take(), threads.take()
    release = threading.Event()
    running = busy.submit(release.wait, 10)
    free.submit(lambda: None).result()
    threads.give_back(busy)
    threads.give_back(free)
    assert threads.idle == 1 and threads.take() is free
    release.set()
    assert running.result(timeout=10)
    # As a request's own work would: wait until `free` has handed its connections back (queued by the give-back
    # above), else that job still counts as unfinished and `free` is let go as busy (a race on a loaded machine).
    free.submit(lambda: None).result(timeout=10)
    threads.give_back(free)
    again, new = threads.take(), threads.take()
    assert again is free and new is not busy
    for thread in (again, new):  # no idle thread left behind for the rest of the run
        thread.shutdown()


def test_a_kept_request_thread_holds_no_connection_between_requests() -> None:
    """A connection the request left open in its thread (Django keeps it where CONN_MAX_AGE > 0) goes back to the
    pool when the thread is given back, as a thread that ended held none: otherwise connections would stay open in
    idle threads (and a test database could not be dropped)."""
    from django.db import connections

    from mercury.asgi_handler import RequestThreads

    threads = RequestThreads(keep=4)
    thread = threads.take()

    def is_open() -> bool:
        return connections["default"].connection is not None

    def connect() -> None:  # in the thread: `connections` names each thread's own connections
        connections["default"].ensure_connection()

    try:
        thread.submit(connect).result(timeout=10)
        assert thread.submit(is_open).result(timeout=10)
        threads.give_back(thread)
        assert threads.take() is thread
        assert not thread.submit(is_open).result(timeout=10)
    finally:
        thread.submit(lambda: connections.close_all()).result(timeout=10)
        thread.shutdown()
