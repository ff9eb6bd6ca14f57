"""The one game loop: advance a game by its AI steps, under the game's lease, until a human must act.

Everyone who moves a game forward calls `drive_game`: the background task (`simulations.driving.tasks`, run by a worker
inside the server or in worker processes), and the CLI (`play`), whose bot plays the student's seat between calls.
It is kind-blind: the game's kind (`simulations.kinds`) says who acts next and plays each AI step, which commits in one transaction; the lease only keeps two drivers from calling
the same model at once, and a driver that lost its lease cannot commit a stale turn (`StaleTurn`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from simulations.ai.gateway import ModelFailure, words_left_model_at
from simulations.kinds import Actor, Kind, NextStep, kind_of
from simulations.models import Game
from simulations.services.ledger.turns import StaleTurn, load_game, stored_version
from simulations.services.pages.broadcast import notify_error, notify_stream
from simulations.services.pages.deadlines import Scheduled, frames
from simulations.services.pages.frame_pacing import FRAME_BURST, FRAME_INTERVAL, FramePacer
from simulations.services.play.drive_queue import queue_turn_deadline
from simulations.services.play.lease import (
    LeaseHeartbeat,
    acquire_lease,
    lease_expires_in,
    new_holder,
    release_lease,
    renew_lease_at,
)


class Outcome(StrEnum):
    HUMAN = "human"  # the student (or a system step the page or bot makes) acts next
    DONE = "done"  # the game is over
    FAILED = "failed"  # a model failure stopped the game; it is recorded and shown
    HELD = "held"  # another driver holds the lease; try again when it lapses (`retry_in`)
    PAUSED = "paused"  # the step budget was spent or a stop was asked for; the game still has AI steps
    STOPPED = "stopped"  # its class's teacher paused it: no AI step until resumed (which queues one)


@dataclass(frozen=True)
class Drive:
    outcome: Outcome
    steps: int  # AI steps committed by this call
    retry_in: float = 0.0  # seconds until the holder's lease lapses (HELD)
    failure: ModelFailure | None = None  # the cause (FAILED)
    version: int | None = None  # the game's version when the human was found to act next (HUMAN)


class StreamRelay:
    """Coalesces a streaming turn's chunks into frames for the game's group, paced by `frame_pacing` (one per
    FRAME_INTERVAL on average, a few back to back); words that arrive too soon go out with the next frame, or on
    a timer if the model pauses (a slow or stalling model still shows what it said so far; one thread per process
    runs those timers, `deadlines`)."""

    def __init__(
        self,
        *,
        game_id: int,
        speaker: str,
        kind: Kind,
        slot: str = "",
        version: int = -1,
        markdown: bool = False,
        audience: tuple[str, ...] = (),
    ) -> None:
        # `audience`: the seats whose pages may show the words (NextStep.audience; empty: every reader).
        # `slot`: which of a page's side-by-side stream boxes this turn fills (a parallel stage); "" the one box.
        # `version`: the game's version the turn starts from (broadcast.notify_stream), -1 for a parallel stage.
        # `markdown`: the words are Markdown (NextStep.markdown), shown rendered.
        self.game_id, self.speaker, self.kind, self.slot, self.version = game_id, speaker, kind, slot, version
        self.markdown, self.audience = markdown, audience
        self.text = ""
        self.pacer = FramePacer(FRAME_INTERVAL, FRAME_BURST)  # read from here: the tests set drive's values
        self.oldest_at = self.newest_at = 0.0  # wall-clock times of the unsent words (for the load benchmark)
        self._lock = threading.Lock()
        self._timer: Scheduled | None = None
        self._closed = False

    def chunk(self, text: str) -> None:
        # Stamped with when the words left the model (the gateway's call thread), not when they got here.
        said_at = words_left_model_at() or time.time()
        with self._lock:
            self.text += text
            self.newest_at = said_at
            self.oldest_at = self.oldest_at or said_at
            wait = self.pacer.wait(time.monotonic())
            if wait <= 0:
                self._cancel()  # a timer set for the words held so far would send them again
                self._send()
            elif self._timer is None:
                self._timer = frames.call_later(wait, self._flush)

    def restart(self) -> None:
        """The model call is retried: the words shown so far are void."""
        with self._lock:
            self.text = ""
            self._cancel()

    def close(self) -> None:
        """The turn is over (committed or failed): its own render or error follows, so no late frame."""
        with self._lock:
            self._closed = True
            self._cancel()

    def _flush(self) -> None:
        with self._lock:
            self._timer = None
            if not self._closed:
                self._send()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _send(self) -> None:
        shown = self.kind.stream_view(self.text)
        if not shown:
            return  # nothing to show yet, or a decision (a seat's PASS) rather than words
        self.pacer.took(time.monotonic())
        notify_stream(
            self.game_id,
            speaker=self.speaker,
            text=shown,
            at=(self.oldest_at, self.newest_at),
            slot=self.slot,
            version=self.version,
            markdown=self.markdown,
            audience=self.audience,
        )
        self.oldest_at = 0.0


StepCallback = Callable[[Game, NextStep], None]


def drive_game(
    *,
    game_id: int,
    holder: str | None = None,
    max_steps: int | None = None,
    stream: bool = True,
    on_step: StepCallback | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Drive:
    """Precondition: the game exists. Plays its next AI steps until a human must act, the game ends, a model
    fails (recorded, and told to the game's pages), `max_steps` are played or `should_stop()` says so."""
    holder = holder or new_holder()
    steps = 0
    while True:
        if not acquire_lease(game_id=game_id, holder=holder):
            return Drive(Outcome.HELD, steps, retry_in=lease_expires_in(game_id=game_id))
        try:
            with LeaseHeartbeat(game_id=game_id, holder=holder) as heartbeat:
                drive = _play_ai_steps(
                    game_id=game_id, holder=holder, steps=steps, max_steps=max_steps, stream=stream,
                    on_step=on_step, should_stop=should_stop, lost=heartbeat.lost.is_set,
                )  # fmt: skip
        finally:
            release_lease(game_id=game_id, holder=holder)
        if drive.outcome is not Outcome.HUMAN:
            return drive
        # A move committed while we held the lease may have left the game to us (its sender saw us driving):
        # now that the lease is free, look once more before stopping. The version is enough to tell: if it is
        # the one whose next step was the human's, nothing was committed since (reading the game again cost a
        # load and a parse of its state per drive).
        if stored_version(game_id) == drive.version:
            return drive
        game = _load(game_id)
        if kind_of(game).next_step(game).actor is not Actor.AI:
            return drive
        steps = drive.steps


def _play_ai_steps(
    *,
    game_id: int,
    holder: str,
    steps: int,
    max_steps: int | None,
    stream: bool,
    on_step: StepCallback | None,
    should_stop: Callable[[], bool] | None,
    lost: Callable[[], bool],
) -> Drive:
    """Under the lease: play AI steps while the game has them."""
    committed: Game | None = None  # the game as our last commit left it
    leased = True  # the lease was taken (drive_game) or renewed at the game's version we hold
    while True:
        # After our own commit, one statement renews the lease and tells whether anyone committed since: if not,
        # the game we hold is the stored one (a version names one state), which spares reading the row, its
        # state's JSON and the scenario's join again.
        if committed is not None and renew_lease_at(
            game_id=game_id, holder=holder, version=committed.version
        ):
            game, ours = committed, True
        else:
            game, ours = _load(game_id), leased and committed is None
        kind = kind_of(game)
        step = kind.next_step(game)
        if step.actor is Actor.DONE:
            return Drive(Outcome.DONE, steps)
        if step.actor is not Actor.AI:
            if step.seat:  # a group's student has the floor: their turn limit (a drive queued for it once)
                queue_turn_deadline(game)
            return Drive(Outcome.HUMAN, steps, version=game.version)
        if game.paused:
            return Drive(Outcome.STOPPED, steps)
        if (max_steps is not None and steps >= max_steps) or (should_stop is not None and should_stop()):
            return Drive(Outcome.PAUSED, steps)
        if not ours and (lost() or not acquire_lease(game_id=game_id, holder=holder)):
            # Taken over: we were thought dead.
            return Drive(Outcome.HELD, steps, retry_in=lease_expires_in(game_id=game_id))
        leased = False  # from here on, only our commit's renewal (or acquiring again) says we hold it
        relay = (
            StreamRelay(
                game_id=game_id,
                speaker=step.speaker,
                kind=kind,
                version=-1 if step.lane else game.version,  # other lanes may commit while it streams
                markdown=step.markdown,
                audience=step.audience,
            )
            if stream
            else None
        )
        try:
            game = kind.play_ai_step(
                game,
                step,
                on_chunk=relay.chunk if relay else None,
                on_restart=relay.restart if relay else None,
            )
        except StaleTurn:
            committed = None
            continue  # someone else committed this turn: look again
        except ModelFailure as exc:
            if relay:
                relay.close()
            notify_error(game_id, error=str(exc), cause=exc.cause, speaker=step.speaker)
            return Drive(Outcome.FAILED, steps, failure=exc)
        finally:
            if relay:
                relay.close()
        committed = game
        steps += 1
        if on_step is not None:
            on_step(game, step)


def _load(game_id: int) -> Game:
    return load_game(game_id)
