from __future__ import annotations

from django.apps import AppConfig


class DeliberationConfig(AppConfig):
    """The deliberation kind as a Django app: its management command (deliberate)."""

    name = "simulations.kinds.deliberation"
    label = "deliberation"
    verbose_name = "Code review committee"
