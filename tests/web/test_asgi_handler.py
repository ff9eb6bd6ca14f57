"""HTTP through the ASGI application the servers run (mercury/asgi.py): the middleware chain and the view run in
one thread, handed over by the event loop once per request, not once per middleware."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import SyncToAsync
from channels.testing import HttpCommunicator

from mercury.asgi import application

pytestmark = [pytest.mark.django_db(transaction=True)]


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
    # request_started's receivers, the chain with its view, the response's close (request_finished): one hop each
    # (Django's own handler made about fifteen: two per middleware).
    assert len(hops) <= 3, hops


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
