from __future__ import annotations

from django.apps import AppConfig


class SimulationsConfig(AppConfig):
    name = "simulations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The driving package serves the drive queue that kinds and services use (services/play/drive_queue.py).
        from simulations.driving.tasks import enqueue_drive
        from simulations.services.play.drive_queue import serve_queue

        serve_queue(enqueue_drive)
