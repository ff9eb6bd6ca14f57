"""Who may read and who may drive a game: the owner drives; staff and holders of the share link read."""

from __future__ import annotations

import secrets

from django.contrib.auth.models import AnonymousUser, User

from simulations.models import Game


class NotAllowed(Exception):
    MESSAGE = "This game is not yours."

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


def can_drive(user: User | AnonymousUser, game: Game) -> bool:
    return bool(user.is_authenticated and game.owner_id is not None and game.owner_id == user.pk)


def can_read(user: User | AnonymousUser, game: Game, share_token: str | None = None) -> bool:
    if can_drive(user, game) or (user.is_authenticated and user.is_staff):
        return True
    return bool(share_token and game.share_token and secrets.compare_digest(share_token, game.share_token))


def share_game(*, game: Game) -> str:
    """Precondition: the caller may drive the game. Returns the game's read-only share token (made once)."""
    if not game.share_token:
        game.share_token = secrets.token_urlsafe(32)
        game.save(update_fields=["share_token"])
    return game.share_token
