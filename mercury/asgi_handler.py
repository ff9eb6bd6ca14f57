"""Django's ASGI handler with the middleware chain and the view run together in one thread.

Django's ASGI handler builds its middleware chain for async: each `MiddlewareMixin` middleware (security,
sessions, common, CSRF, authentication, messages, clickjacking) then runs its `process_request` and its
`process_response` through `sync_to_async`, a hop from the event loop to the request's thread and back, and a
sync-only middleware (WhiteNoise, our CSP header) hops the other way for everything inside it. Every view of this
project is synchronous (its work is the database's), so a move's post crossed between the loop and a thread about
fifteen times, each crossing waiting for the loop's turn among every page's frames (bench/http_games.py with
py-spy --gil: about a tenth of the server's time at one game). Here the chain is built for sync, as under WSGI,
and the loop hands the request to the request's thread once; the view runs inside it. Django still sends
`request_started` and `request_finished` from the loop, and each request still has its own thread
(`ThreadSensitiveContext`), so database connections are per request as before.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpRequest, HttpResponseBase


class OneHopASGIHandler(ASGIHandler):
    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        # BaseHandler.get_response: the sync chain (an async view inside it runs through async_to_sync), the
        # request's closing with the response, and the log line of a 4xx/5xx response.
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)
