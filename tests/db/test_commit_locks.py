"""On PostgreSQL a commit locks its game's row only: games of the same scenario commit side by side.

`FOR UPDATE` on the game joined with its scenario version would lock the version's row too, which every game of
that scenario shares, so each commit in a school would wait for the one before. SQLite has one writer per database by design (BEGIN IMMEDIATE)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from simulations import faults
from simulations.services.ledger.turns import commit_event, create_game
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_commit_does_not_wait_for_another_games_open_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only: SQLite has one writer per database")
    version = mercury_version()
    first, second = (create_game(scenario_version=version, seed=seed) for seed in (1, 2))
    inside, release = threading.Event(), threading.Event()
    point = faults.point

    def hold_the_first(name: str) -> None:
        if name == "inside_commit" and threading.current_thread().name == "first-commit":
            inside.set()
            release.wait(20)  # the first game's transaction stays open, its row locked
        point(name)

    monkeypatch.setattr(faults, "point", hold_the_first)
    errors: list[BaseException] = []

    def commit(game_id: int, game_version: int) -> None:
        try:
            commit_event(game_id=game_id, expected_version=game_version, event="ROLE_CONFIRMED",
                         payload={"role": "CAN"})  # fmt: skip
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            connections.close_all()

    holder = threading.Thread(target=commit, args=(first.pk, first.version), name="first-commit")
    holder.start()
    assert inside.wait(10)
    other = threading.Thread(target=commit, args=(second.pk, second.version), name="second-commit")
    other.start()
    other.join(5)
    finished_meanwhile = not other.is_alive()
    release.set()
    holder.join(10)
    other.join(10)
    assert finished_meanwhile, "the second game's commit waited for the first game's open transaction"
    assert not errors
    for game in (first, second):
        game.refresh_from_db()
        assert game.version == 2 and game.human_role == "CAN"


def test_the_same_games_commits_still_wait_for_each_other(monkeypatch: pytest.MonkeyPatch) -> None:
    """The row lock itself stays: a second commit of the same game waits, then finds the turn played."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only")
    from simulations.services.ledger.turns import StaleTurn

    game = create_game(scenario_version=mercury_version(), seed=3)
    inside, release = threading.Event(), threading.Event()
    point = faults.point

    def hold(name: str) -> None:
        if name == "inside_commit" and threading.current_thread().name == "holder":
            inside.set()
            release.wait(20)
        point(name)

    monkeypatch.setattr(faults, "point", hold)
    outcome: list[str] = []

    def commit(label: str) -> None:
        try:
            commit_event(game_id=game.pk, expected_version=game.version, event="ROLE_CONFIRMED",
                         payload={"role": "CAN"})  # fmt: skip
            outcome.append(f"{label} committed")
        except StaleTurn:
            outcome.append(f"{label} stale")
        finally:
            connections.close_all()

    holder = threading.Thread(target=commit, args=("holder",), name="holder")
    holder.start()
    assert inside.wait(10)
    waiter = threading.Thread(target=commit, args=("waiter",), name="waiter")
    waiter.start()
    waiter.join(1)
    assert waiter.is_alive()  # blocked on the game's row
    release.set()
    holder.join(10)
    waiter.join(10)
    assert sorted(outcome) == ["holder committed", "waiter stale"]
