"""Finding 4 of the school's hostile pass: an export read while the game advances is one consistent file.

A turn is committed from another thread (its own connection) in the middle of the export's reads, after the
events were read and before the checkpoints are: the export must be the game as of one moment, and the download
answers 200, never 500."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from simulations.models import Event, Game
from simulations.services.files import export as export_service
from simulations.services.files.export import build_export, export_markdown
from simulations.services.ledger.turns import commit_event, create_game
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db(transaction=True)


def _commit_in_another_thread(game_id: int) -> None:
    def play() -> None:
        try:
            version = Game.objects.values_list("version", flat=True).get(pk=game_id)
            commit_event(
                game_id=game_id, expected_version=version, event="ROLE_CONFIRMED", payload={"role": "EU"}
            )
        finally:
            connection.close()

    thread = threading.Thread(target=play)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive()


@pytest.fixture
def advancing_midway(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The next export's events are read, then a turn commits, then the export reads on."""
    done: list[int] = []
    read_events = export_service.ledger_events

    def events_then_a_turn(*, game: Game, after: int = 0) -> Any:
        events = read_events(game=game, after=after)
        if not done:
            _commit_in_another_thread(game.pk)
            done.append(game.pk)
        return events

    monkeypatch.setattr(export_service, "ledger_events", events_then_a_turn)
    return done


def _fresh_game() -> Game:
    owner = User.objects.create_user("owner", password="a-long-test-passphrase-42")
    return create_game(scenario_version=mercury_version(), seed=5, owner=owner)


def test_an_export_is_the_game_as_of_one_moment(advancing_midway: list[int]) -> None:
    game = _fresh_game()
    before = Event.objects.filter(game=game).count()
    exported = build_export(game=game)
    assert advancing_midway == [game.pk]  # the turn did commit in the middle of the reads
    assert Event.objects.filter(game=game).count() > before  # the turn and its automatic follow-ups
    assert len(exported.events) == before and exported.game.phase == "ROLE_SELECTION"
    assert exported.checkpoints[-1].after_event == exported.events[-1].seq
    after = build_export(game=game)  # the next export has the turn
    assert len(after.events) > before and after.game.phase != "ROLE_SELECTION"


def test_a_download_while_the_game_advances_answers(advancing_midway: list[int]) -> None:
    game = _fresh_game()
    client = Client()
    client.force_login(game.owner)  # type: ignore[arg-type]
    response = client.get(f"/games/{game.pk}/export.json")
    assert response.status_code == 200 and advancing_midway == [game.pk]
    assert response.json()["game"]["phase"] == "ROLE_SELECTION"


def test_the_markdown_export_reads_one_snapshot_too(advancing_midway: list[int]) -> None:
    game = _fresh_game()
    text = export_markdown(game=game)
    assert advancing_midway == [game.pk] and text  # it raised before: a checkpoint after the last event read
