from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from simulations.models import Game
from simulations.services.ledger.turns import create_game
from simulations.services.play.lease import acquire_lease, release_lease, renew_lease_at
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db


def test_a_lease_has_one_holder_until_it_lapses() -> None:
    game = create_game(scenario_version=mercury_version(), seed=1)
    assert acquire_lease(game_id=game.pk, holder="a")
    assert not acquire_lease(game_id=game.pk, holder="b")
    assert acquire_lease(game_id=game.pk, holder="a")  # renewal
    release_lease(game_id=game.pk, holder="b")  # not the holder: no effect
    assert not acquire_lease(game_id=game.pk, holder="b")
    Game.objects.filter(pk=game.pk).update(driver_until=timezone.now() - timedelta(seconds=1))  # a dies
    assert acquire_lease(game_id=game.pk, holder="b")
    release_lease(game_id=game.pk, holder="b")
    assert acquire_lease(game_id=game.pk, holder="c")


def test_a_lease_is_renewed_at_a_version_only_by_its_holder_and_only_while_nobody_committed() -> None:
    """The driver's one-statement check between its steps: its lease, and the game still as its commit left it."""
    game = create_game(scenario_version=mercury_version(), seed=1)
    assert acquire_lease(game_id=game.pk, holder="a")
    Game.objects.filter(pk=game.pk).update(driver_until=timezone.now())  # about to lapse
    assert not renew_lease_at(game_id=game.pk, holder="b", version=game.version)  # not b's
    assert renew_lease_at(game_id=game.pk, holder="a", version=game.version)
    until = Game.objects.get(pk=game.pk).driver_until
    assert until is not None and until > timezone.now() + timedelta(seconds=1)  # renewed
    assert not renew_lease_at(game_id=game.pk, holder="a", version=game.version + 1)  # another state
    Game.objects.filter(pk=game.pk).update(version=game.version + 1)  # a move committed meanwhile
    assert not renew_lease_at(game_id=game.pk, holder="a", version=game.version)
    release_lease(game_id=game.pk, holder="a")
    assert not renew_lease_at(game_id=game.pk, holder="a", version=game.version + 1)  # released: not a's


@pytest.mark.django_db(transaction=True)
def test_a_heartbeat_holds_no_database_connection_between_beats(settings: Any, monkeypatch: Any) -> None:
    """A worker driving many games has a heartbeat for each: one keeping its connection between beats holds one of
    the few a process may open (mercury/db/pool.py), and enough of them starve the drives' commits."""
    from django.db import connection

    from simulations.services.play import lease

    settings.MERCURY_DRIVER_LEASE_SECONDS = 0.6  # a beat every 0.2 s
    game = create_game(scenario_version=mercury_version(), seed=1)
    assert acquire_lease(game_id=game.pk, holder="a")
    open_at_beat: list[bool] = []
    renew = lease.acquire_lease

    def spy(**kwargs: Any) -> bool:
        open_at_beat.append(connection.connection is not None)  # this (the heartbeat's) thread's connection
        return renew(**kwargs)

    monkeypatch.setattr(lease, "acquire_lease", spy)
    with lease.LeaseHeartbeat(game_id=game.pk, holder="a") as heartbeat:
        time.sleep(1.0)
    assert not heartbeat.lost.is_set()
    assert len(open_at_beat) >= 3 and not any(open_at_beat)


@pytest.mark.django_db(transaction=True)
def test_one_thread_beats_every_held_lease_and_none_after_its_driver_left(
    settings: Any, monkeypatch: Any
) -> None:
    """Three drives at once: one thread of the process renews all three leases, each about every third of the
    lease. A driver that leaves while its lease is being renewed waits for that renewal, and none starts after."""
    import threading

    from simulations.services.play import lease

    settings.MERCURY_DRIVER_LEASE_SECONDS = 0.6  # a beat every 0.2 s
    games = [create_game(scenario_version=mercury_version(), seed=n) for n in (1, 2, 3)]
    for game in games:
        assert acquire_lease(game_id=game.pk, holder=f"h{game.pk}")
    renewed: list[tuple[int, float]] = []  # (game, end) of each renewal
    in_flight = threading.Event()  # the first game's lease is being renewed
    renew = lease.acquire_lease

    def slow(**kwargs: Any) -> bool:
        if kwargs["game_id"] == games[0].pk:
            in_flight.set()
            time.sleep(0.15)
        held = renew(**kwargs)
        renewed.append((kwargs["game_id"], time.monotonic()))
        return held

    monkeypatch.setattr(lease, "acquire_lease", slow)
    beats = [lease.LeaseHeartbeat(game_id=g.pk, holder=f"h{g.pk}") for g in games]
    for beat in beats:
        beat.__enter__()
    time.sleep(1.0)
    assert [t.name for t in threading.enumerate()].count("lease-heartbeats") == 1
    assert all(sum(1 for g, _ in renewed if g == game.pk) >= 3 for game in games), renewed
    in_flight.clear()
    assert in_flight.wait(timeout=2)  # leave while the first game's lease is being renewed
    leaving = time.monotonic()
    for beat in beats:
        beat.__exit__(None, None, None)
    left = time.monotonic()
    count = len(renewed)
    time.sleep(0.6)
    assert len(renewed) == count  # nothing renewed after the drivers left
    # Leaving waited for the renewal under way: it ended after the drivers began to leave, before they had left.
    assert any(g == games[0].pk and leaving < end <= left for g, end in renewed), (
        leaving,
        left,
        renewed[-4:],
    )
    assert not any(beat.lost.is_set() for beat in beats)


@pytest.mark.django_db(transaction=True)
def test_a_renewal_that_fails_is_tried_next_beat_and_keeps_no_other_lease_from_its_beat(
    settings: Any, monkeypatch: Any
) -> None:
    """A renewal failing with something other than the database's error (a bug) is logged and tried again at its
    next beat: not at once in a loop, and the process's other leases are renewed on time meanwhile."""
    from simulations.services.play import lease

    settings.MERCURY_DRIVER_LEASE_SECONDS = 0.6  # a beat every 0.2 s
    broken, fine = (create_game(scenario_version=mercury_version(), seed=n) for n in (1, 2))
    for game in (broken, fine):
        assert acquire_lease(game_id=game.pk, holder=f"h{game.pk}")
    tries = {broken.pk: 0, fine.pk: 0}
    renew = lease.acquire_lease

    def failing(**kwargs: Any) -> bool:
        tries[kwargs["game_id"]] += 1
        if kwargs["game_id"] == broken.pk:
            raise RuntimeError("a bug in the renewal")
        return renew(**kwargs)

    monkeypatch.setattr(lease, "acquire_lease", failing)
    beaten = lease.LeaseHeartbeat(game_id=broken.pk, holder=f"h{broken.pk}")
    other = lease.LeaseHeartbeat(game_id=fine.pk, holder=f"h{fine.pk}")
    with beaten, other:
        time.sleep(1.1)
    # About five beats each (two on a busy machine); set after the renewal, thousands.
    assert 2 <= tries[fine.pk] <= 7 and 2 <= tries[broken.pk] <= 7, tries
    assert not beaten.lost.is_set() and not other.lost.is_set()


def test_a_holder_of_this_process_is_known_alive_without_asking_proc(monkeypatch: Any) -> None:
    """A page's render asks whether its game's driver lives after every committed turn; in the embedded set-up that
    driver is this process, which needs no look at /proc. A holder with this pid but an older start time (an earlier
    process that had the pid) is dead."""
    from simulations.services.play import lease

    me = lease.new_holder()
    host, machine, pid, started, _ = me.rsplit(":", 4)
    assert started  # Linux: /proc is there
    asked: list[int] = []
    real = lease._started

    def started_asked(p: int) -> Any:
        asked.append(p)
        return real(p)

    monkeypatch.setattr(lease, "_started", started_asked)
    assert not lease.holder_is_dead(me)
    assert lease.holder_is_dead(f"{host}:{machine}:{pid}:{int(started) - 1}:earlier")
    assert asked == []
    assert lease.holder_is_dead(f"{host}:{machine}:{2**22 + 1}:5:gone")  # no such pid: /proc is asked
    assert asked == [2**22 + 1]
