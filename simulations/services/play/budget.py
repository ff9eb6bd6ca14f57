"""The model budget of a game: every recorded call's tokens count against MERCURY_MAX_TOKENS_PER_GAME."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Sum

from simulations.ai import gateway
from simulations.models import Game, ModelCall


class BudgetExhausted(gateway.ModelFailure):
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.reason, self.detail, self.cause, self.advice = "budget", f"limit {limit} tokens", "budget", ""
        Exception.__init__(
            self,
            f"This game has used its model budget of {limit} tokens (MERCURY_MAX_TOKENS_PER_GAME). "
            "Nothing was stored; raise the limit to continue.",
        )


def check_budget(game: Game) -> None:
    """Raises BudgetExhausted once the game's recorded calls reach the limit (0: no limit)."""
    limit = settings.MERCURY_MAX_TOKENS_PER_GAME
    if not limit:
        return
    used = ModelCall.objects.filter(game=game).aggregate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
    if (used["p"] or 0) + (used["c"] or 0) >= limit:
        raise BudgetExhausted(limit)
