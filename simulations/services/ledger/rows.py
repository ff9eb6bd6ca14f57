"""The commit's row writes as plain statements, with each field's own conversion to the database's value.

A committed turn writes a handful of rows (its events and entries, a checkpoint, the game's new state). Through
the ORM's `bulk_create` and `save`, each statement would be compiled anew for every turn, at several times the
cost of the statement itself (bench/games.py reports the "row writes" share of a game). Here a statement's text is built once per
model and set of columns, and the values go through the same `pre_save` and `get_db_prep_save` the ORM calls, so
JSON, dates and `auto_now` fields are stored exactly as before, on SQLite and on PostgreSQL.

What the ORM does besides is not needed on this path: no model sends or listens for save signals, ledger rows
are never read back by the writer (their ids are not set on the objects), and the game's row is already locked
by the commit's transaction. `count_rows` numbers a turn's model calls the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, TypeVar

from django.db import connections, router
from django.db.models import Field, JSONField, Model

M = TypeVar("M", bound=Model)


def insert_rows(objs: Sequence[Model]) -> None:
    """INSERT unsaved objects of one model, as few statements as the database allows (none for no objects)."""
    if not objs:
        return
    model = type(objs[0])
    alias = router.db_for_write(model)
    connection = connections[alias]
    fields, head, row = _insert_parts(model, alias)
    size = max(1, connection.ops.bulk_batch_size(fields, objs))
    with connection.cursor() as cursor:
        for at in range(0, len(objs), size):
            batch = objs[at : at + size]
            values = [_db_value(f, obj, True, connection) for obj in batch for f in fields]
            cursor.execute(head + ", ".join([row] * len(batch)), values)


def update_row(obj: Model, names: Sequence[str]) -> None:
    """UPDATE these fields of a saved object's row (its `auto_now` fields are set as `save` sets them)."""
    model = type(obj)
    alias = router.db_for_write(model)
    connection = connections[alias]
    fields, sql = _update_parts(model, tuple(names), alias)
    values = [_db_value(f, obj, False, connection) for f in fields]
    pk = model._meta.pk
    assert pk is not None
    key = pk.get_db_prep_value(obj.pk, connection)  # a UUID key is text on SQLite
    with connection.cursor() as cursor:
        cursor.execute(sql, [*values, key])
        if cursor.rowcount != 1:
            raise LookupError(f"{model.__name__} {obj.pk}: no row to update")


class EncodesItself:
    """A JSON document that can write its own JSON text, faster than `json.dumps` of it (a kind's committed state
    written by pydantic from the object it was dumped from). Its text must decode to the document itself."""

    __slots__ = ()

    def json_text(self) -> str:
        raise NotImplementedError


def _db_value(field: Field[Any, Any], obj: Model, add: bool, connection: Any) -> Any:
    """The field's value as the ORM would pass it to the database; a document that encodes itself, in a JSON field
    of the default encoder, goes as its own text (the game's state is written at every turn, and `json.dumps` of
    it was about a twentieth of a headless game)."""
    value = field.pre_save(obj, add)
    if isinstance(value, EncodesItself) and isinstance(field, JSONField) and field.encoder is None:
        if connection.vendor == "sqlite":
            return value.json_text()
        if connection.vendor == "postgresql":
            from psycopg.types.json import Jsonb

            text = value.json_text()
            return Jsonb(value, dumps=lambda _document: text)
    return field.get_db_prep_save(value, connection)


def count_rows(model: type[Model], **equal: Any) -> int:
    """SELECT COUNT(*) of the model's rows whose columns equal these values (plain values: ids, numbers, text)."""
    alias = router.db_for_read(model)
    sql = _count_sql(model, tuple(equal), alias)
    with connections[alias].cursor() as cursor:
        cursor.execute(sql, list(equal.values()))
        return int(cursor.fetchone()[0])


def row_by_pk(model: type[M], pk: Any) -> M | None:
    """The saved object with this primary key, built as the ORM's `get` builds it (every concrete field, each value
    converted as a query's results are, `from_db`), or None: the log-in's user is read on every request and every
    websocket connection, and the ORM would compile that query anew each time, several times the cost of the
    statement itself."""
    alias = router.db_for_read(model)
    sql, names, converters = _row_parts(model, alias)
    values = _row_by_pk(model, alias, sql, converters, pk)
    return None if values is None else model.from_db(alias, names, values)


def columns_by_pk(model: type[Model], names: Sequence[str], pk: Any) -> tuple[Any, ...] | None:
    """The named columns of the row with this primary key, each converted as the ORM's `values_list` converts it
    (dates made aware, JSON decoded), or None: `filter(pk=...).values_list(...).first()` from a statement built
    once. A move's answer reads the game's lease this way (tasks.queue_drive_after_move), where the ORM's
    compiling of that query was a visible share of a game page's thread time."""
    alias = router.db_for_read(model)
    sql, converters = _by_pk_parts(model, tuple(names), alias)
    values = _row_by_pk(model, alias, sql, converters, pk)
    return None if values is None else tuple(values)


def _row_by_pk(
    model: type[Model], alias: str, sql: str, converters: list[Converters], pk: Any
) -> list[Any] | None:
    """The one row a built statement selects by primary key, each value converted; None when there is none."""
    connection = connections[alias]
    key = model._meta.pk.get_db_prep_value(pk, connection)  # type: ignore[union-attr]
    with connection.cursor() as cursor:
        cursor.execute(sql, [key])
        row = cursor.fetchone()
    if row is None:
        return None
    return [converted(value, convert, connection) for value, convert in zip(row, converters, strict=True)]


def models_from_rows(model: type[M], alias: str, rows: Sequence[Sequence[Any]]) -> list[M]:
    """Objects of `model` from rows of every concrete field's column in the model's order (a statement built once
    selects them), each value converted as a query's results are, and built as the ORM builds them (`from_db`)."""
    connection = connections[alias]
    _, names, converters = _row_parts(model, alias)
    return [
        model.from_db(
            alias,
            names,
            [converted(v, convert, connection) for v, convert in zip(row, converters, strict=True)],
        )
        for row in rows
    ]


def rows_after(
    model: type[Model], names: Sequence[str], *, game_id: int, after: int
) -> list[tuple[Any, ...]]:
    """The named columns of a game's rows with a seq above `after`, in seq order, each value converted as the
    ORM's `values_list` converts it (JSON decoded, dates made aware): a game's append-only rows read again from
    where the last read ended (services/ledger/appended.py), the ORM's query compiled anew cost more than running it."""
    alias = router.db_for_read(model)
    connection = connections[alias]
    sql, converters = _rows_after_parts(model, tuple(names), alias)
    with connection.cursor() as cursor:
        cursor.execute(sql, [game_id, after])
        found = cursor.fetchall()
    if not any(converters):
        return [tuple(row) for row in found]
    return [
        tuple(converted(value, convert, connection) for value, convert in zip(row, converters, strict=True))
        for row in found
    ]


# A column's conversions from the database's value, as the ORM applies them to a query's results (JSON decoded,
# dates made aware, booleans on SQLite): each is called as convert(value, expression, connection).
Converters = list[tuple[Any, Any]]


def column_converters(model: type[Model], name: str, alias: str) -> Converters:
    meta = model._meta
    column = meta.get_field(name).get_col(meta.db_table)  # type: ignore[union-attr]
    connection = connections[alias]
    found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
    return [(convert, column) for convert in found]


def converted(value: Any, converters: Converters, connection: Any) -> Any:
    for convert, expression in converters:
        value = convert(value, expression, connection)
    return value


@cache
def _rows_after_parts(model: type[Model], names: tuple[str, ...], alias: str) -> tuple[str, list[Converters]]:
    connection = connections[alias]
    columns = ", ".join(quoted_column(model, n, alias) for n in names)
    seq = quoted_column(model, "seq", alias)
    sql = (
        f"SELECT {columns} FROM {connection.ops.quote_name(model._meta.db_table)}"
        f" WHERE {quoted_column(model, 'game', alias)} = %s AND {seq} > %s ORDER BY {seq}"
    )
    return sql, [column_converters(model, n, alias) for n in names]


@cache
def _by_pk_parts(model: type[Model], names: tuple[str, ...], alias: str) -> tuple[str, list[Converters]]:
    meta = model._meta
    assert meta.pk is not None
    columns = ", ".join(quoted_column(model, n, alias) for n in names)
    sql = (
        f"SELECT {columns} FROM {connections[alias].ops.quote_name(meta.db_table)}"
        f" WHERE {quoted_column(model, meta.pk.name, alias)} = %s"
    )
    return sql, [column_converters(model, n, alias) for n in names]


@cache
def _row_parts(model: type[Model], alias: str) -> tuple[str, list[str], list[Converters]]:
    """`_by_pk_parts` for every concrete field, and the fields' attribute names (`from_db` takes those)."""
    fields = list(model._meta.concrete_fields)
    sql, converters = _by_pk_parts(model, tuple(f.name for f in fields), alias)
    return sql, [f.attname for f in fields], converters


def quoted_column(model: type[Model], name: str, alias: str) -> str:
    """A concrete field's column, quoted for that database: for statements built once."""
    field = model._meta.get_field(name)
    assert isinstance(field, Field) and field.column
    return connections[alias].ops.quote_name(field.column)


@cache
def _count_sql(model: type[Model], names: tuple[str, ...], alias: str) -> str:
    quote = connections[alias].ops.quote_name
    where = " AND ".join(f"{quoted_column(model, n, alias)} = %s" for n in names)
    return f"SELECT COUNT(*) FROM {quote(model._meta.db_table)}" + (f" WHERE {where}" if where else "")


@cache
def _insert_parts(model: type[Model], alias: str) -> tuple[list[Field[Any, Any]], str, str]:
    quote = connections[alias].ops.quote_name
    # A key the database makes (an auto-increment id) is left to it; one the model makes (a UUID) is written.
    fields = [f for f in model._meta.concrete_fields if not (f.primary_key and f.db_returning)]
    columns = ", ".join(quote(str(f.column)) for f in fields)
    head = f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES "
    return fields, head, "(" + ", ".join(["%s"] * len(fields)) + ")"


@cache
def _update_parts(
    model: type[Model], names: tuple[str, ...], alias: str
) -> tuple[list[Field[Any, Any]], str]:
    quote, meta = connections[alias].ops.quote_name, model._meta
    fields: list[Field[Any, Any]] = []
    for name in names:
        field = meta.get_field(name)
        assert isinstance(field, Field) and field.concrete, f"{model.__name__}.{name} is not a column"
        fields.append(field)
    assert meta.pk is not None
    sets = ", ".join(f"{quote(str(f.column))} = %s" for f in fields)
    return fields, f"UPDATE {quote(meta.db_table)} SET {sets} WHERE {quote(str(meta.pk.column))} = %s"
