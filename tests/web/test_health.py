"""`/healthz`: 200 when the database, the channel layer and the workers are fine; 503 naming what is not."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult, get_date_max

pytestmark = pytest.mark.django_db


def test_healthy() -> None:
    response = Client().get("/healthz")
    body = response.json()
    assert response.status_code == 200 and body["ok"] is True
    assert body["checks"]["database"]["engine"] in ("sqlite", "postgresql")
    assert body["checks"]["channel_layer"]["ok"] and body["checks"]["workers"]["queued"] == 0
    assert response["Cache-Control"].startswith("max-age=0")


def test_a_drive_nobody_takes_makes_it_unhealthy() -> None:
    row = DBTaskResult.objects.create(
        args_kwargs={"args": [], "kwargs": {}}, task_path="simulations.tasks.drive", backend_name="default",
        run_after=get_date_max(),
    )  # fmt: skip
    DBTaskResult.objects.filter(pk=row.pk).update(enqueued_at=timezone.now() - timedelta(minutes=5))
    response = Client().get("/healthz")
    assert response.status_code == 503
    workers = response.json()["checks"]["workers"]
    assert workers["ok"] is False and "waited 300 s: are the workers running?" in workers["error"]


def test_an_unreachable_channel_layer_makes_it_unhealthy(settings: Any) -> None:
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "mercury.channel_layer.BatchedRedisChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:1"]},
        }
    }
    response = Client().get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"]["channel_layer"]["error"].startswith("channel layer failed")


def test_a_production_process_serves_collected_static_files(settings: Any, tmp_path: Any) -> None:
    from django.core.management import call_command

    settings.STATIC_ROOT = tmp_path
    settings.WHITENOISE_USE_FINDERS = settings.WHITENOISE_AUTOREFRESH = False  # as in production
    call_command("collectstatic", "--noinput", verbosity=0)
    response = Client().get("/static/mercury/app.css")
    assert response.status_code == 200 and b"{" in b"".join(response.streaming_content)  # type: ignore[attr-defined]
    assert Client().get("/static/mercury/nothing.css").status_code == 404
