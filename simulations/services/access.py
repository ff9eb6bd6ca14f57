"""Who may read and who may drive a game: the owner drives; staff and holders of the share link read."""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.utils import timezone

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
    return bool(
        share_token
        and game.share_token
        and share_link_live(game)
        and secrets.compare_digest(share_token, game.share_token)
    )


def share_link_live(game: Game) -> bool:
    """The link exists and has not expired (a link made before expiry dates existed lives until revoked)."""
    return bool(game.share_token) and (
        game.share_expires_at is None or game.share_expires_at > timezone.now()
    )


def share_game(*, game: Game) -> str:
    """Precondition: the caller may drive the game. Returns the game's read-only share token: the live one, or a
    new one (a new token when the old one expired) valid for MERCURY_SHARE_LINK_DAYS."""
    if not share_link_live(game):
        game.share_token = secrets.token_urlsafe(32)
        game.share_expires_at = timezone.now() + timedelta(days=settings.MERCURY_SHARE_LINK_DAYS)
        game.save(update_fields=["share_token", "share_expires_at"])
    return str(game.share_token)


def revoke_share(*, game: Game) -> None:
    """Precondition: the caller may drive the game. The link stops working at once; sharing again makes a new one."""
    game.share_token, game.share_expires_at = None, None
    game.save(update_fields=["share_token", "share_expires_at"])
