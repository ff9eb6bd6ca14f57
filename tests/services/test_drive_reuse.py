"""Between its steps the driver keeps the game its own commit left, when one statement shows that the lease is
still its own and that nobody committed since (`renew_lease_at`); otherwise it reads the row again. Either way it
plays the same game."""

from __future__ import annotations

from typing import Any

import pytest

from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.games import scenario_of, state_of, step_of
from simulations.kinds.negotiation.human_turns import submit_human_event
from simulations.models import Game, TranscriptEntry
from simulations.services.play import drive
from simulations.services.play.drive import Outcome, drive_game
from tests.helpers import game_at_the_first_debate

pytestmark = pytest.mark.django_db

STEPS = 6


def _counting_loads(monkeypatch: Any) -> list[int]:
    loads: list[int] = []
    load = drive._load

    def counted(game_id: int) -> Game:
        loads.append(game_id)
        return load(game_id)

    monkeypatch.setattr(drive, "_load", counted)
    return loads


def _entries(game: Game) -> list[tuple[str, str]]:
    return list(TranscriptEntry.objects.filter(game=game).order_by("seq").values_list("speaker", "text"))


def test_a_drive_reads_the_game_once_and_plays_what_a_drive_reading_it_every_step_plays(
    monkeypatch: Any,
) -> None:
    kept, read = game_at_the_first_debate(), game_at_the_first_debate()
    before = len(_entries(kept))
    loads = _counting_loads(monkeypatch)
    assert drive_game(game_id=kept.pk, max_steps=STEPS, stream=False).steps == STEPS
    assert loads == [kept.pk]  # the first step only: each later one followed our own commit
    # As if someone committed after every step: the drive reads the game before each one.
    monkeypatch.setattr(drive, "renew_lease_at", lambda **_: False)
    assert drive_game(game_id=read.pk, max_steps=STEPS, stream=False).steps == STEPS
    assert loads.count(read.pk) == STEPS + 1
    assert _entries(kept) == _entries(read) and len(_entries(kept)) > before
    assert Game.objects.get(pk=kept.pk).state == Game.objects.get(pk=read.pk).state


def test_a_commit_by_someone_else_between_steps_makes_the_drive_read_the_game_again(monkeypatch: Any) -> None:
    game = game_at_the_first_debate()
    loads = _counting_loads(monkeypatch)

    def another_writer(played: Game, _step: Any) -> None:
        # The version is what a commit changes; nothing else is needed to tell the driver its game moved on.
        Game.objects.filter(pk=played.pk).update(version=played.version + 1)

    result = drive_game(game_id=game.pk, max_steps=3, stream=False, on_step=another_writer)
    assert result.outcome is Outcome.PAUSED and result.steps == 3
    assert loads == [game.pk] * 4  # the first step, then after each step (the last, to find the budget spent)
    assert Game.objects.get(pk=game.pk).driver == ""  # released


def _students_move(game_id: int) -> None:
    """The passive EU student's move at the game's current step, as its page would send it."""
    game = Game.objects.get(pk=game_id)
    event, payload = make_policy("passive", "EU").decide(scenario_of(game), state_of(game), step_of(game))
    submit_human_event(game=game, event=event, payload=payload)


def test_a_drive_that_stops_at_the_students_turn_does_not_read_the_game_again_after_releasing_it(
    monkeypatch: Any,
) -> None:
    game = game_at_the_first_debate()
    loads = _counting_loads(monkeypatch)
    result = drive_game(game_id=game.pk, stream=False)
    assert result.outcome is Outcome.HUMAN and result.steps > 0
    assert loads == [game.pk]  # its version after releasing is the one it stopped at: nothing more to read
    assert result.version == Game.objects.get(pk=game.pk).version


def test_a_move_committed_while_the_driver_held_the_lease_is_answered_by_that_driver(
    monkeypatch: Any,
) -> None:
    game = game_at_the_first_debate()
    release = drive.release_lease
    moved: list[int] = []

    def move_then_release(*, game_id: int, holder: str) -> None:
        # The student's move lands after the driver found it was their turn but before it let the game go:
        # the move's page saw a driver and queued nothing, so this driver must look again and answer it.
        if not moved:
            before = Game.objects.get(pk=game_id).version
            _students_move(game_id)
            moved.append(before)
        release(game_id=game_id, holder=holder)

    monkeypatch.setattr(drive, "release_lease", move_then_release)
    loads = _counting_loads(monkeypatch)
    result = drive_game(game_id=game.pk, stream=False)
    assert moved and loads.count(game.pk) >= 2  # it read the game again after seeing the version move on
    after = Game.objects.get(pk=game.pk)
    assert result.outcome in (Outcome.HUMAN, Outcome.DONE) and after.version > moved[0] + 1  # it played on
    assert step_of(after).kind != "ai"
