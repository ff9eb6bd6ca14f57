"""Queueing a game's background drive, for kinds and shells: when an AI seat acts next and nobody drives the game.

The queue itself is the driving package's (`simulations.driving.tasks.enqueue_drive`, a django-tasks task); it is
registered here when the app starts (`simulations/apps.py`), so that kinds and services queue drives without
importing the layer above them. Until then (a script that never set Django up) queueing is refused loudly."""

from __future__ import annotations

from collections.abc import Callable

from simulations.kinds import Actor, ai_acts_next, kind_of
from simulations.models import Game
from simulations.services.ledger.seats import turn_left
from simulations.services.play.lease import held_by_queued_drive, lease_expires_in, lease_left

DEADLINE_SLACK = 0.5  # seconds after a turn limit before its drive looks: the limit has passed by then

Enqueue = Callable[..., bool]
_enqueue: list[Enqueue] = []


def serve_queue(enqueue: Enqueue) -> None:
    """Precondition: called once, by the app's start-up. `enqueue(game_id=N, delay=seconds) -> queued`."""
    _enqueue[:] = [enqueue]


def queue_drive(*, game_id: int, delay: float = 0.0) -> bool:
    """Precondition: the app has started. Queue "drive game N" in `delay` seconds unless one is queued by then."""
    if not _enqueue:
        raise RuntimeError("no drive queue is served: the simulations app has not started")
    return _enqueue[0](game_id=game_id, delay=delay)


def queue_drive_if_ai_next(game: Game, *, even_if_driven: bool = False) -> None:
    """Queue "drive game N" when an AI seat acts next and nobody drives the game. A driver's lease means it
    carries on by itself (it is read first, as it is cheaper than the next step); a queued drive that finds the
    lease taken by the time it runs only looks again when it lapses. `even_if_driven`: its holder may be dead (a
    page connecting), and the queued drive waits for the lease to lapse; unless the holder is a queued drive,
    whose death the workers' sweep notices."""
    if lease_left(game.driver, game.driver_until) > 0 and (
        not even_if_driven or held_by_queued_drive(game.driver, game.driver_until)
    ):
        return
    if ai_acts_next(game):
        queue_drive(game_id=game.pk)
    else:
        queue_turn_deadline(game)


def queue_turn_deadline(game: Game) -> None:
    """A class group's student has the floor under a turn limit: a drive is queued for the moment it passes, which
    then plays the seat's stand-in if the student has not moved (their move commits first otherwise)."""
    step = kind_of(game).next_step(game)
    if step.actor is Actor.HUMAN and step.seat and not game.paused:
        left = turn_left(game, step.seat, since=step.since)
        if left is not None:
            queue_drive(game_id=game.pk, delay=left + DEADLINE_SLACK)


def queue_drive_after_move(game: Game) -> None:
    """`queue_drive_if_ai_next` for the game a move has just committed, its lease read again: the move read the game
    before its commit, and a drive that held the lease then may since have released it, having looked for a newer
    version just before the move committed (`drive_game`). The drive reads the version after releasing, this reads
    the lease after committing: one of the two sees the other, and the game is never left waiting on nobody."""
    if lease_expires_in(game_id=game.pk) > 0:
        return
    # Not `queue_drive_if_ai_next`: the lease in `game` is the one read before the commit.
    if ai_acts_next(game):
        queue_drive(game_id=game.pk)
    else:
        queue_turn_deadline(game)
