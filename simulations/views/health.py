"""`/healthz`: can this process serve a game? The database answers, the channel layer carries a message (Redis when
configured, so a page on another process would get its frames), and queued drives are being picked up by workers.

200 with every check "ok", else 503 naming what failed, for a load balancer or a monitor. It reveals no data and
needs no sign-in; it does one query on the task queue and one round trip on the channel layer.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult, get_date_max

LAYER_TIMEOUT = 2.0


def _database() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return {"ok": True, "engine": connection.vendor}
    except DatabaseError as exc:
        return {"ok": False, "error": f"database unreachable ({type(exc).__name__})"}


async def _round_trip() -> None:
    layer = get_channel_layer()
    assert layer is not None
    channel = await layer.new_channel()
    await layer.send(channel, {"type": "health.ping"})
    await asyncio.wait_for(layer.receive(channel), timeout=LAYER_TIMEOUT)


def _channel_layer() -> dict[str, Any]:
    started = time.perf_counter()
    try:
        async_to_sync(_round_trip)()
    except Exception as exc:  # noqa: BLE001 - any failure of the layer is the finding
        return {"ok": False, "error": f"channel layer failed ({type(exc).__name__})"}
    backend = type(get_channel_layer()).__name__
    return {"ok": True, "backend": backend, "ms": round((time.perf_counter() - started) * 1000, 1)}


def _workers() -> dict[str, Any]:
    """Queued drives due for longer than MERCURY_HEALTH_QUEUE_SECONDS mean no worker is taking them."""
    try:
        ready = DBTaskResult.objects.filter(status=TaskResultStatus.READY).values_list(
            "enqueued_at", "run_after"
        )
        now, never = timezone.now(), get_date_max()
        waits = [(now - (enqueued if run_after == never else run_after)).total_seconds()
                 for enqueued, run_after in ready if run_after == never or run_after <= now]  # fmt: skip
    except DatabaseError:
        return {"ok": False, "error": "task queue unreadable"}
    oldest = max(waits, default=0.0)
    limit = settings.MERCURY_HEALTH_QUEUE_SECONDS
    report: dict[str, Any] = {
        "mode": settings.MERCURY_WORKERS,
        "queued": len(waits),
        "oldest_wait_s": round(oldest),
    }
    if oldest > limit:
        return report | {
            "ok": False,
            "error": f"a queued drive has waited {oldest:.0f} s: are the workers running?",
        }
    return report | {"ok": True}


@never_cache
@require_GET
def health(request: HttpRequest) -> JsonResponse:
    checks = {"database": _database(), "channel_layer": _channel_layer(), "workers": _workers()}
    ok = all(check["ok"] for check in checks.values())
    return JsonResponse({"ok": ok, "checks": checks}, status=200 if ok else 503)
