"""Who may read and who may drive a game: the owner drives; staff and holders of the share link read. A staff
member in the Teachers group reads only the games of the students in the classes they teach (Classroom); the
teacher of a class session reads its games.

A share link carries its token after `#` (`/shared/#TOKEN`), which browsers never send in a request line: the
page posts it once, the visitor's session receives a grant for that game (`grant_share`), and every later
request names only the game. The grant holds the token, so revoking or re-sharing the game (a new token) or the
link's expiry ends it at once.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.contrib.sessions.backends.base import SessionBase
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone

from simulations.models import ClassSession, Game
from simulations.services.ledger.seats import holds_a_seat


class NotAllowed(Exception):
    MESSAGE = "This game is not yours."

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


def can_drive(user: User | AnonymousUser, game: Game) -> bool:
    """Its owner, and in a game several students share (a class group's) each student holding a seat; which of
    them may move at a given turn is the move pipeline's check (services.ledger.seats.check_turn)."""
    if not user.is_authenticated:
        return False
    if game.owner_id is not None and game.owner_id == user.pk:
        return True
    return holds_a_seat(game, user.pk)


TEACHERS = "Teachers"


def class_scoped(user: User | AnonymousUser) -> bool:
    """A teacher (not an admin): what they read of games is limited to their classes."""
    return bool(
        user.is_authenticated and not user.is_superuser and user.groups.filter(name=TEACHERS).exists()
    )


def readable_games(user: User | AnonymousUser) -> QuerySet[Game]:
    """The games staff `user` may read: all of them, or a teacher's classes' and class sessions' games."""
    if not class_scoped(user):
        return Game.objects.all()
    return Game.objects.filter(
        Q(owner__classes__teachers=user.pk) | Exists(_sessions_taught(user.pk))
    ).distinct()


def _sessions_taught(teacher_id: int | None) -> QuerySet[ClassSession]:
    """For a game (OuterRef): the class sessions `teacher_id` opened that it belongs to (services/people/class_sessions)."""
    return ClassSession.objects.filter(
        teacher_id=teacher_id, scenario=OuterRef("scenario"), members__student=OuterRef("owner"),
        started_at__lte=OuterRef("created_at"),
    ).filter(Q(ended_at__isnull=True) | Q(ended_at__gte=OuterRef("created_at")))  # fmt: skip


def can_read(user: User | AnonymousUser, game: Game, share_token: str | None = None) -> bool:
    if can_drive(user, game):
        return True
    if (
        user.is_authenticated
        and Game.objects.filter(pk=game.pk).filter(Exists(_sessions_taught(user.pk))).exists()
    ):
        return True  # a class session's teacher reads its games
    if (
        user.is_authenticated
        and user.is_staff
        and (not class_scoped(user) or readable_games(user).filter(pk=game.pk).exists())
    ):
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


GRANTS = "share_grants"  # session key: {game id: the share token that granted reading it}


def game_for_share_token(token: str) -> Game | None:
    """The game a live share token opens, or None (unknown, revoked or expired)."""
    game = Game.objects.filter(share_token=token).first() if token else None
    return game if game is not None and share_link_live(game) else None


def grant_share(*, session: SessionBase, game: Game) -> None:
    """Precondition: the visitor presented the game's live share token. This session may read the game for as
    long as that token stays the game's live one."""
    grants = dict(session.get(GRANTS, {}))
    grants[str(game.pk)] = game.share_token
    session[GRANTS] = grants


def granted_token(session: SessionBase, game_id: int) -> str | None:
    """The share token this session was granted for the game (checked against the game by `can_read`)."""
    token = session.get(GRANTS, {}).get(str(game_id))
    return str(token) if token else None


def share_link(request: HttpRequest, game: Game) -> str:
    """The owner's share link of a game, "" if none is live. The token travels after '#': browsers never send it,
    so it reaches no access log (see `share_game`)."""
    if not (share_link_live(game) and can_drive(request.user, game)):
        return ""
    return f"{request.build_absolute_uri(reverse('shared_entry'))}#{game.share_token}"
