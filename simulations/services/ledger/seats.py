"""The seats of a game several students share (a class group's): who holds which, whose turn a seat's is, and a
game as one of them sees it. A game of one student has no seat rows: its owner holds `Game.human_role`."""

from __future__ import annotations

import copy
from collections.abc import Sequence

from django.contrib.auth.models import AnonymousUser, User

from simulations.models import Game, GameSeat


class NotYourSeat(Exception):
    """A move by a student whose seat does not act now (a 409, with this sentence)."""

    def __init__(self, speaker: str) -> None:
        who = speaker or "another student"
        super().__init__(f"It is {who}'s turn, not yours: your form comes back when your seat has the floor.")


def give_seats(game: Game, students: Sequence[User], seats: Sequence[str]) -> None:
    """The students take `seats` in order (the owner the first). Precondition: as many students as seats."""
    assert len(students) == len(seats), "one student a seat"
    GameSeat.objects.bulk_create(
        GameSeat(game=game, role=role, student=student) for role, student in zip(seats, students, strict=True)
    )


def seat_of(game: Game, user: User | AnonymousUser) -> str | None:
    """The seat `user` holds in `game`: their seat row's, the owner's `human_role` in a game of one student, None
    for anyone else."""
    if not user.is_authenticated:
        return None
    held = GameSeat.objects.filter(game=game, student_id=user.pk).values_list("role", flat=True).first()
    if held is not None:
        return held
    return game.human_role if game.owner_id == user.pk else None


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
