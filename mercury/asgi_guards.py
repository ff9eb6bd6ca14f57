"""ASGI guards in front of the application: a websocket handshake must come from the page's own origin, and an
HTTP request body larger than MERCURY_MAX_REQUEST_BYTES is refused before it is read (issue #17, finding 7)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

Scope = dict[str, Any]
DEFAULT_PORTS = {"http": "80", "https": "443"}


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin1"))
    return ""


def _origin(scheme: str, host: str, port: str) -> tuple[str, str, str]:
    return scheme, host.lower(), port or DEFAULT_PORTS.get(scheme, "")


def _page_scheme(scope: Scope) -> str:
    """The scheme of the page that opens this socket: wss is https; behind a TLS proxy that says so, too."""
    if scope.get("scheme") == "wss":
        return "https"
    proxy = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if (
        proxy
        and _header(scope, proxy[0].removeprefix("HTTP_").replace("_", "-").lower().encode()) == proxy[1]
    ):
        return "https"
    return "http"


def same_origin(scope: Scope) -> bool:
    """The Origin header names this server exactly (scheme, host and port, the host an allowed one), or one of
    MERCURY_CSRF_TRUSTED_ORIGINS. Without a Host header (never from a browser) the origin's host must be allowed
    and its port the scheme's default. Any other port of an allowed host is another site."""
    raw = _header(scope, b"origin")
    if not raw:
        return False
    parsed = urlsplit(raw)
    try:
        port = str(parsed.port or "")
    except ValueError:
        return False
    origin = _origin(parsed.scheme, parsed.hostname or "", port)
    trusted = {
        _origin(t.scheme, t.hostname or "", str(t.port or ""))
        for t in map(urlsplit, settings.CSRF_TRUSTED_ORIGINS)
    }
    if origin in trusted:
        return True
    if not validate_host(origin[1], settings.ALLOWED_HOSTS):
        return False
    host_header = _header(scope, b"host")
    if not host_header:
        return origin == _origin(origin[0], origin[1], "")
    host, host_port = split_domain_port(host_header)
    return origin == _origin(_page_scheme(scope), host, host_port)


class SameOriginValidator:
    """Refuses a websocket handshake whose Origin is not this server's own (see `same_origin`)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not same_origin(scope):
            return await WebsocketDenier()(scope, receive, send)
        return await self.app(scope, receive, send)


class BodySizeLimit:
    """HTTP requests whose body exceeds MERCURY_MAX_REQUEST_BYTES get 413 before the body is read: at once when
    Content-Length says so, otherwise as soon as the bytes received pass the limit (the application is then told
    the client went away, and reads no more)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> Any:
        limit = settings.MERCURY_MAX_REQUEST_BYTES
        if scope["type"] != "http" or not limit:
            return await self.app(scope, receive, send)
        declared = _header(scope, b"content-length")
        if declared.isdigit() and int(declared) > limit:
            return await _too_large(send)
        state = {"read": 0, "over": False, "started": False}

        async def counted_receive() -> dict[str, Any]:
            if state["over"]:
                return {"type": "http.disconnect"}
            message: dict[str, Any] = await receive()
            if message["type"] == "http.request":
                state["read"] += len(message.get("body", b""))
                if state["read"] > limit:
                    state["over"] = True
                    return {"type": "http.disconnect"}
            return message

        async def tracked_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        result = await self.app(scope, counted_receive, tracked_send)
        if state["over"] and not state["started"]:
            await _too_large(send)
        return result


TOO_LARGE = b"This request is too large."


async def _too_large(send: Any) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")],
        }
    )
    await send({"type": "http.response.body", "body": TOO_LARGE})
