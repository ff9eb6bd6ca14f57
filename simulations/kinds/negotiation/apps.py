from __future__ import annotations

from django.apps import AppConfig


class NegotiationConfig(AppConfig):
    """The negotiation kind as a Django app: its management commands (play, check_model, score_judge)."""

    name = "simulations.kinds.negotiation"
    label = "negotiation"
    verbose_name = "Treaty negotiation"
