"""The commit's plain-statement writes (simulations/services/ledger/rows.py) store what the ORM's own writes store."""

from __future__ import annotations

import json

import pytest

from simulations.models import Event, Game, ScenarioVersion
from simulations.services.ledger.rows import (
    EncodesItself,
    columns_by_pk,
    count_rows,
    insert_rows,
    rows_after,
    update_row,
)
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db

FIELDS = ("seq", "name", "from_state", "to_state", "actor", "payload", "stance_changes")


def _event(game: Game, seq: int) -> Event:
    return Event(
        game=game, seq=seq, name="AI_TURN_COMMITTED", from_state="A", to_state="B", actor="ai:BRA",
        payload={"text": "Ça va — «quoted»", "n": 1, "x": 1.5, "ok": True, "none": None},
        stance_changes=[{"role": "BRA", "after": "1.2", "firmness": 0.25}],
    )  # fmt: skip


def test_inserted_rows_read_back_as_the_orms_do() -> None:
    from simulations.services.ledger.turns import create_game

    game = create_game(scenario_version=mercury_version(), seed=1)
    Event.objects.bulk_create([_event(game, 1001)])
    insert_rows([_event(game, 1002), _event(game, 1003)])
    insert_rows([])  # nothing to write: no statement
    by_orm, *by_rows = Event.objects.filter(game=game, seq__gt=1000).order_by("seq")
    assert [e.seq for e in by_rows] == [1002, 1003]
    for row in by_rows:
        assert [getattr(row, f) for f in FIELDS[1:]] == [getattr(by_orm, f) for f in FIELDS[1:]]
        assert (
            row.created_at is not None and row.created_at.tzinfo is not None
        )  # auto_now_add, as save sets it
        assert row.created_at >= by_orm.created_at


def test_an_updated_row_holds_the_new_values_and_a_fresh_updated_at() -> None:
    from simulations.services.ledger.turns import create_game

    game = create_game(scenario_version=mercury_version(), seed=1)
    before = Game.objects.get(pk=game.pk).updated_at
    game.state = {"status": "X", "nested": {"list": [1, 2.5, "três"]}}
    game.version += 7
    update_row(game, ("state", "version", "updated_at"))
    stored = Game.objects.get(pk=game.pk)
    assert stored.state == game.state and stored.version == game.version
    assert stored.updated_at > before
    game.pk = 10**9
    with pytest.raises(LookupError):
        update_row(game, ("version",))


def test_rows_are_counted_as_the_orm_counts_them() -> None:
    from simulations.services.ledger.turns import create_game

    first = create_game(scenario_version=mercury_version(), seed=1)
    second = create_game(scenario_version=mercury_version(), seed=2)
    insert_rows([_event(first, 1000 + n) for n in range(3)])
    for game in (first, second):
        assert count_rows(Event, game=game.pk) == Event.objects.filter(game=game).count()
    assert count_rows(Event, game=first.pk, name="AI_TURN_COMMITTED") == 3
    assert count_rows(Event) == Event.objects.count()


def test_a_games_rows_after_a_seq_read_as_the_orms_values_list_reads_them() -> None:
    """JSON decoded, times aware, only the game's own rows, from the seq given, in seq order."""
    from simulations.services.ledger.turns import create_game

    first = create_game(scenario_version=mercury_version(), seed=1)
    second = create_game(scenario_version=mercury_version(), seed=2)
    insert_rows([_event(first, 1003), _event(first, 1001), _event(second, 1002), _event(first, 1002)])
    names = ("seq", "payload", "stance_changes", "created_at", "actor")
    for game in (first, second):
        for after in (0, 1000, 1001, 1003):
            by_orm = Event.objects.filter(game=game, seq__gt=after).order_by("seq").values_list(*names)
            assert rows_after(Event, names, game_id=game.pk, after=after) == list(by_orm)
    rows = rows_after(Event, names, game_id=first.pk, after=1000)
    assert [r[0] for r in rows] == [1001, 1002, 1003] and rows[0][1]["text"] == "Ça va — «quoted»"
    assert rows[0][3].tzinfo is not None and rows[0][2][0]["firmness"] == 0.25


def test_a_rows_columns_by_its_key_read_as_the_orms_values_list_reads_them() -> None:
    """Times aware, JSON decoded, None for a key with no row: the lease's read (services/play/lease.py)."""
    from datetime import timedelta

    from django.utils import timezone

    from simulations.services.ledger.turns import create_game

    game = create_game(scenario_version=mercury_version(), seed=1)
    Game.objects.filter(pk=game.pk).update(driver="w:1", driver_until=timezone.now() + timedelta(seconds=9))
    names = ("driver", "driver_until", "state", "version")
    by_orm = Game.objects.filter(pk=game.pk).values_list(*names).first()
    read = columns_by_pk(Game, names, game.pk)
    assert read == by_orm and read is not None
    assert read[1].tzinfo is not None and isinstance(read[2], dict)
    Game.objects.filter(pk=game.pk).update(driver="", driver_until=None)
    assert columns_by_pk(Game, ("driver", "driver_until"), game.pk) == ("", None)
    assert columns_by_pk(Game, ("driver",), 10**9) is None


def test_a_game_read_by_its_built_statement_equals_the_orms_read() -> None:
    from simulations.kinds.negotiation.games import state_of
    from simulations.services.ledger.turns import game_with_scenario, games_with_scenario
    from tests.helpers import game_at_the_first_debate

    game = game_at_the_first_debate()
    Game.objects.filter(pk=game.pk).update(driver="someone", finished_at=game.created_at)
    by_orm, by_statement = games_with_scenario().get(pk=game.pk), game_with_scenario(game.pk)
    assert by_statement is not None and not by_statement._state.adding
    for field in Game._meta.concrete_fields:
        assert getattr(by_statement, field.attname) == getattr(by_orm, field.attname), field.name
    for field in ScenarioVersion._meta.concrete_fields:
        if field.name != "document":
            assert getattr(by_statement.scenario, field.attname) == getattr(by_orm.scenario, field.attname)
    assert (
        by_statement.scenario.get_deferred_fields() == by_orm.scenario.get_deferred_fields() == {"document"}
    )
    assert state_of(by_statement) == state_of(by_orm)
    assert game_with_scenario(10**9) is None


def test_a_committed_state_is_stored_as_its_own_json_text_and_reads_back_equal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A negotiation's committed state writes its own text (pydantic's, from the object it was dumped from), in the
    game's row and in a keyframe checkpoint, instead of `json.dumps` of the dict; read back, it is that dict. A
    plain dict still goes the ORM's way."""
    from django.db import connection

    from simulations.kinds.negotiation.games import state_of
    from simulations.models import Checkpoint
    from simulations.services.ledger.turns import create_game

    game = create_game(scenario_version=mercury_version(), seed=1)
    stored = game.state
    expected = dict(stored)
    assert isinstance(stored, EncodesItself)
    dumped: list[object] = []
    real_dumps = json.dumps

    def counted(value: object, *args: object, **kwargs: object) -> str:
        dumped.append(value)
        return real_dumps(value, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(json, "dumps", counted)
    game.version += 1
    update_row(game, ("state", "version"))
    insert_rows(
        [
            Checkpoint(
                game=game, seq=game.version, after_event=1, transcript_seq=0, schema_version=1, state=stored
            )
        ]
    )
    assert not any(value is stored for value in dumped)
    monkeypatch.undo()
    assert Game.objects.get(pk=game.pk).state == expected
    assert Checkpoint.objects.get(game=game, seq=game.version).state == expected
    if connection.vendor == "sqlite":  # the text as written (PostgreSQL's jsonb keeps no text)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT state FROM {Game._meta.db_table} WHERE id = %s", [game.pk])
            assert cursor.fetchone()[0] == state_of(game).model_dump_json()
    game.state = {"plain": "dict"}
    update_row(game, ("state",))
    assert Game.objects.get(pk=game.pk).state == {"plain": "dict"}
