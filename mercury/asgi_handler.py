"""Django's ASGI handler with the middleware chain and the view run together in one thread, a thread kept for
the next request.

Django's ASGI handler builds its middleware chain for async: each `MiddlewareMixin` middleware (security,
sessions, common, CSRF, authentication, messages, clickjacking) then runs its `process_request` and its
`process_response` through `sync_to_async`, a hop from the event loop to the request's thread and back, and a
sync-only middleware (WhiteNoise, our CSP header) hops the other way for everything inside it. Every view of this
project is synchronous (its work is the database's), so a move's post would cross between the loop and a thread
about fifteen times, each crossing waiting for the loop's turn among every page's frames. Here the chain is built
for sync, as under WSGI, and the loop hands the request to the request's thread once: `request_started`, the chain
with its view and the response's close (`request_finished`) run there together (`handle`).

Django gives each request a thread of its own (`ThreadSensitiveContext`): a new thread started for it and joined
after it, a cost paid on every request. Here a request still has a thread to itself
while it runs, as under a threaded WSGI server, but the thread waits for the next request instead of ending
(`RequestThreads`), and holds no database connection while it waits.

How the thread is lent: the request's `ThreadSensitiveContext` is entered here, before Django's own (which then
does nothing: only the outermost context counts), and the kept thread is registered as that context's thread in
asgiref's table, where asgiref would otherwise put a thread it starts at the request's first call. Every other
rule of asgiref's for choosing a thread applies as before. (asgiref 3.13's `ThreadSensitiveContext(executor=...)`
is not used: it also overrides the thread of a sync caller waiting on the loop. A connection left open in
asgiref's shared sync thread keeps PostgreSQL from dropping a test database, so the tests close it after each
test: tests/conftest.py.)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from asgiref.sync import SyncToAsync, ThreadSensitiveContext, sync_to_async
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.http import FileResponse, HttpRequest, HttpResponseBase
from django.urls import set_script_prefix

from mercury.db.pool import hand_back_connections

IDLE_REQUEST_THREADS = 16  # kept waiting for requests; more may run at once, and end after theirs


class RequestThread(ThreadPoolExecutor):
    """One thread for one request at a time, counting the calls it has not finished: a request whose client went
    away may leave its view running here after the handler has returned (Django cancels the waiting, not the
    thread), and the next request must not queue behind it."""

    def __init__(self) -> None:
        super().__init__(max_workers=1, thread_name_prefix="mercury-request")
        self.unfinished = 0
        self._count = threading.Lock()

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        with self._count:
            self.unfinished += 1
        future = super().submit(fn, *args, **kwargs)
        future.add_done_callback(self._finished)
        return future

    def _finished(self, _: Future[Any]) -> None:
        with self._count:
            self.unfinished -= 1


class RequestThreads:
    """Request threads, one lent to each request in flight and kept for the next one when it ends (up to `keep`
    idle; a thread still busy with its request's work ends after it instead). Per process: a forked child
    (gunicorn's workers) has none of its parent's threads."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._idle: list[RequestThread] = []
        self._pid = os.getpid()
        self._lock = threading.Lock()

    def take(self) -> RequestThread:
        with self._lock:
            if self._pid != os.getpid():
                self._idle, self._pid = [], os.getpid()
            if self._idle:
                return self._idle.pop()
        return RequestThread()

    def give_back(self, thread: RequestThread) -> None:
        # What the request left open goes back to the pool (mercury/db/pool.py) before the thread waits: a kept
        # thread must not hold a connection between requests, as an ended one held none (with CONN_MAX_AGE > 0
        # Django keeps a request's connection open at its end).
        busy = thread.unfinished > 0
        thread.submit(hand_back_connections)  # runs before anything the next request sends it
        with self._lock:
            if self._pid == os.getpid() and len(self._idle) < self.keep and not busy:
                self._idle.append(thread)
                return
        thread.shutdown(wait=False)

    @property
    def idle(self) -> int:
        return len(self._idle)


request_threads = RequestThreads(IDLE_REQUEST_THREADS)


class OneHopASGIHandler(ASGIHandler):
    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        context = ThreadSensitiveContext()
        async with context:
            if SyncToAsync.thread_sensitive_context.get(None) is not context:
                # Inside a caller's context: its thread, not ours.
                await super().__call__(scope, receive, send)
                return
            thread = request_threads.take()
            SyncToAsync.context_to_thread_executor[context] = thread
            try:
                await super().__call__(scope, receive, send)
            finally:
                # Out of asgiref's table before the context exits: asgiref shuts down the thread it finds there.
                SyncToAsync.context_to_thread_executor.pop(context, None)
                request_threads.give_back(thread)

    async def handle(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Django's `handle` (5.2) with a request's sync work in one crossing to its thread instead of three:
        `request_started`, the chain with its view, and the close of a response held in memory (which sends
        `request_finished`) run there together (`_respond`). A streaming response (a file, a static file) is
        closed after it is sent, as Django closes it. The rest is Django's: the body read, the answers to a
        request it cannot build, and the wait for the view given up when the client disconnects (then, as
        Django, `request_finished` is sent from here too: its receivers close connections and caches, and a
        second call of them does nothing)."""
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(get_script_prefix(scope))
        request, error_response = self.create_request(scope, body_file)
        if request is None:
            assert error_response is not None
            body_file.close()
            await signals.request_started.asend(sender=self.__class__, scope=scope)
            await self.send_response(error_response, send)
            await sync_to_async(error_response.close)()
            return

        async def process_request() -> HttpResponseBase:
            response = await sync_to_async(self._respond, thread_sensitive=True)(scope, request)
            with contextlib.suppress(asyncio.CancelledError):  # the client left while it was sent
                await self.send_response(response, send)
            return response

        # As Django's: the disconnect listener first, so that it is looked at (and cancelled) first.
        listener = asyncio.create_task(self.listen_for_disconnect(receive))
        responder = asyncio.create_task(process_request())
        tasks: list[asyncio.Task[Any]] = [listener, responder]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            if task.done():
                try:
                    task.result()
                except RequestAborted:
                    pass
                except AssertionError:
                    body_file.close()
                    raise
            else:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        try:
            response = responder.result()
        except asyncio.CancelledError:
            await signals.request_finished.asend(sender=self.__class__)
        else:
            if response.streaming:
                await sync_to_async(response.close)()
        body_file.close()

    def _respond(self, scope: dict[str, Any], request: HttpRequest) -> HttpResponseBase:
        """In the request's thread: what Django's `handle` and `run_get_response` do around the view, and the
        close of a response whose content is in memory (sending it later reads only that content)."""
        signals.request_started.send(sender=self.__class__, scope=scope)
        response = self.get_response(request)
        response._handler_class = self.__class__  # type: ignore[attr-defined]
        if isinstance(response, FileResponse):
            response.block_size = self.chunk_size
        if not response.streaming:
            response.close()
        return response
