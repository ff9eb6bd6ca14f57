"""The seats of a game several students share (a class group's): who holds which, whose turn a seat's is, and a
game as one of them sees it. A game of one student has no seat rows: its owner holds `Game.human_role`."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from datetime import datetime

from django.contrib.auth.models import AnonymousUser, User
from django.utils import timezone

from simulations.models import Game, GameSeat

STAND_IN = "stand-in"  # the bot (Kind.headless.bot) that plays a student's seat for them


class NotYourSeat(Exception):
    """A move by a student whose seat does not act now (a 409, with this sentence)."""

    def __init__(self, speaker: str) -> None:
        who = speaker or "another student"
        super().__init__(f"It is {who}'s turn, not yours: your form comes back when your seat has the floor.")


def give_seats(
    game: Game, students: Sequence[User], seats: Sequence[str], *, session_id: int | None = None
) -> None:
    """The students take `seats` in order (the owner the first), for class session `session_id` (whose turn limit
    applies). Precondition: as many students as seats."""
    assert len(students) == len(seats), "one student a seat"
    GameSeat.objects.bulk_create(
        GameSeat(game=game, role=role, student=student, session_id=session_id)
        for role, student in zip(seats, students, strict=True)
    )


def _turn(game: Game, seat: str, since: datetime | None = None) -> tuple[bool, float | None] | None:
    """(handed to the AI, seconds left of the student's turn or None without a limit) for a student's seat; None
    for a seat no student holds. `since`: when the seat got the floor (None: at the game's last commit; a lane of
    a kind's side-by-side moves has its own, `NextStep.since`)."""
    if not seat:
        return None
    row = GameSeat.objects.filter(game=game, role=seat).select_related("session").first()
    if row is None:
        return None
    limit = row.session.turn_seconds if row.session is not None else None
    if row.stand_in or not limit:
        return row.stand_in, None
    return False, limit - (timezone.now() - (since or game.updated_at)).total_seconds()


def stand_in_due(game: Game, seat: str, *, since: datetime | None = None) -> bool:
    """The AI's stand-in plays `seat`'s turn now: the teacher handed the seat to the AI, or its student has let the
    session's turn limit pass since the seat got the floor (that turn only; the next is theirs again)."""
    turn = _turn(game, seat, since)
    return turn is not None and (turn[0] or (turn[1] is not None and turn[1] <= 0))


def turn_left(game: Game, seat: str, *, since: datetime | None = None) -> float | None:
    """Seconds before `seat`'s stand-in takes its turn (None: no limit, or no student's seat)."""
    turn = _turn(game, seat, since)
    return None if turn is None or turn[0] or turn[1] is None else max(0.0, turn[1])


def hand_to_ai(game: Game, seat: str, *, to_ai: bool) -> bool:
    """The teacher hands a student's seat to the AI's stand-in, or back to the student; False if no student holds
    it."""
    return GameSeat.objects.filter(game=game, role=seat).update(stand_in=to_ai) > 0


def seat_of(game: Game, user: User | AnonymousUser) -> str | None:
    """The seat `user` holds in `game`: their seat row's, the owner's `human_role` in a game of one student, None
    for anyone else."""
    return seat_held(game, user.pk) if user.is_authenticated else None


def seat_held(game: Game, user_id: int) -> str | None:
    """`seat_of` by the user's id (a move's pipeline knows no more of its sender)."""
    held = GameSeat.objects.filter(game=game, student_id=user_id).values_list("role", flat=True).first()
    if held is not None:
        return held
    return game.human_role if game.owner_id == user_id else None


def holds_a_seat(game: Game, user_id: int | None) -> bool:
    return bool(user_id) and GameSeat.objects.filter(game=game, student_id=user_id).exists()


def check_turn(game: Game, user_id: int, seat: str, speaker: str) -> None:
    """Precondition: the user may drive `game`. In a game several students share, only the student holding the
    seat that acts now (`seat`, the kind's next step's) moves; raises NotYourSeat otherwise. Nothing to check in a
    game of one student (no seat rows) or at a step no seat takes."""
    if not seat or (user_id == game.owner_id and seat == game.human_role):
        return  # the owner's own seat (the only one a game of one student has)
    held = list(GameSeat.objects.filter(game=game).values_list("student_id", "role"))
    if held and (user_id, seat) not in held:
        raise NotYourSeat(speaker)


def seen_by(game: Game, user: User | AnonymousUser) -> Game:
    """`game` to render for `user`: as it is for its owner (and for readers who hold no seat), else a copy whose
    `viewer_seat` names the seat `user` holds, which the kind's pages render from."""
    if user.is_authenticated and user.pk == game.owner_id:
        return game
    return viewed_as(game, seat_of(game, user))


def viewed_as(game: Game, seat: str | None) -> Game:
    """A copy of `game` to render for the student holding `seat` (the game itself for None: its owner's view)."""
    if seat is None or seat == game.human_role:
        return game
    seen = copy.copy(game)
    seen.viewer_seat = seat
    return seen
