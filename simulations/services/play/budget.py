"""The model budget of a game: every recorded call's tokens count against MERCURY_MAX_TOKENS_PER_GAME, and
against its class session's budget (`Game.token_budget`) where the teacher set one: the lower applies."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Sum

from simulations.ai import gateway
from simulations.models import Game, ModelCall


class BudgetExhausted(gateway.ModelFailure):
    def __init__(self, limit: int, *, by_class: bool = False) -> None:
        self.limit = limit
        self.reason, self.detail, self.cause, self.advice = "budget", f"limit {limit} tokens", "budget", ""
        whose = "its class session's budget" if by_class else "MERCURY_MAX_TOKENS_PER_GAME"
        Exception.__init__(
            self,
            f"This game has used its model budget of {limit} tokens ({whose}). "
            "Nothing was stored; raise the limit to continue.",
        )


def check_budget(game: Game) -> None:
    """Raises BudgetExhausted once the game's recorded calls reach its limit (none set: no limit)."""
    limits = [n for n in (settings.MERCURY_MAX_TOKENS_PER_GAME, game.token_budget or 0) if n]
    if not limits:
        return
    limit = min(limits)
    used = ModelCall.objects.filter(game=game).aggregate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
    if (used["p"] or 0) + (used["c"] or 0) >= limit:
        raise BudgetExhausted(limit, by_class=limit == game.token_budget)
