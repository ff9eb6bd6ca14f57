"""Committing turns, for every kind. One committed turn = one transaction: the event, the automatic events the
kind's machine takes after it up to the next human or AI decision, their transcript entries, changes, vote record
and one checkpoint. The kind (`simulations.kinds`) runs its table; this module only writes what it returns.
"""

from __future__ import annotations

import copy
import functools
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, connections, router, transaction
from django.db.models import QuerySet
from django.utils import timezone

from simulations import faults
from simulations.kinds import Advance, ai_acts_next, get_kind, kind_of
from simulations.models import (
    Checkpoint,
    Event,
    Game,
    ModelCall,
    ScenarioVersion,
    Submission,
    TranscriptEntry,
    Vote,
)
from simulations.services.content.model_choice import pinned_fields
from simulations.services.content.scenarios import parsed_scenario
from simulations.services.ledger import appended, stored_states
from simulations.services.ledger.checkpoints import stored_fields
from simulations.services.ledger.rows import (
    Converters,
    column_converters,
    converted,
    count_rows,
    insert_rows,
    quoted_column,
    update_row,
)
from simulations.services.ledger.seats import give_seats
from simulations.services.pages.broadcast import notify_game_advanced

log = logging.getLogger(__name__)


class StaleTurn(Exception):
    """Somebody else committed this turn first."""

    MESSAGE = "This turn was already played; the game has moved on."

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


class GameFinished(Exception):
    MESSAGE = "This game is finished."

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


@dataclass(frozen=True)
class ModelCallRecord:
    role: str
    purpose: str
    context: list[int]
    prompt_version: str
    prompt_tokens: int
    completion_tokens: int
    token_count_method: str
    model: str
    latency_ms: int
    status: str = "ok"  # "error": the call gave nothing usable (a judge call's turn goes on by the rules)
    error: str = ""
    outcome: str = ""  # judge calls: used | fallback | failed
    outcome_reason: str = ""
    cost_usd: float | None = None
    started_at: datetime | None = None  # when the request left (parallel stages: overlapping calls show here)


def games_with_scenario() -> QuerySet[Game]:
    """Games with their scenario version, minus the large document column (scenarios are parsed once, cached)."""
    return Game.objects.select_related("scenario").defer("scenario__document")


def stored_version(game_id: int, *, lock: bool = False) -> int | None:
    """The game's version as the database holds it now (None: no such game), without reading the row. `lock`:
    inside a transaction, lock the game's row (FOR UPDATE where the database has row locks; on SQLite the
    transaction itself is the lock). A statement built once: drives and commits ask this several times a turn."""
    alias = router.db_for_write(Game) if lock else router.db_for_read(Game)
    with connections[alias].cursor() as cursor:
        cursor.execute(_version_sql(alias, lock), [game_id])
        row = cursor.fetchone()
    return None if row is None else int(row[0])


@functools.cache
def _version_sql(alias: str, lock: bool) -> str:
    connection = connections[alias]
    quote = connection.ops.quote_name
    sql = (
        f"SELECT {quoted_column(Game, 'version', alias)} FROM {quote(Game._meta.db_table)}"
        f" WHERE {quoted_column(Game, 'id', alias)} = %s"
    )
    if lock and connection.features.has_select_for_update:
        sql += " " + connection.ops.for_update_sql()
    return sql


def load_game(game_id: int) -> Game:
    """`game_with_scenario`, for a game that must exist (Game.DoesNotExist otherwise)."""
    game = game_with_scenario(game_id)
    if game is None:
        raise Game.DoesNotExist(f"game {game_id}")
    return game


def game_with_scenario(game_id: int, *, lock: bool = False) -> Game | None:
    """`games_with_scenario().filter(pk=game_id).first()` from a statement built once: pages render, moves check
    and drives start from this read a hundred times a game, and the ORM would compile its join anew each time, at
    many times the statement's own cost. The same objects: the columns go through each field's own converters and
    `from_db`, and the scenario version is the game's cached relation, its document deferred. `lock`: inside a
    transaction, lock the game's row only (not its scenario version's, which every game of the scenario shares)."""
    alias = router.db_for_write(Game) if lock else router.db_for_read(Game)
    connection = connections[alias]
    sql, game_part, version_part = _game_select(alias)
    if lock and connection.features.has_select_for_update:
        sql += " " + connection.ops.for_update_sql(of=(connection.ops.quote_name(Game._meta.db_table),))
    with connection.cursor() as cursor:
        cursor.execute(sql, [game_id])
        row = cursor.fetchone()
    if row is None:
        return None
    game = _from_row(Game, alias, game_part, row, connection, game_id=game_id)
    version = _from_row(ScenarioVersion, alias, version_part, row, connection)
    Game._meta.get_field("scenario").set_cached_value(game, version)  # type: ignore[union-attr]
    return game


_Columns = list[tuple[int, str, Converters]]  # (position in the row, attname, its converters)


def _from_row(model: Any, alias: str, part: _Columns, row: Any, connection: Any, *, game_id: int = 0) -> Any:
    """`game_id`: the row is that game's, whose state this process may have written (services/ledger/stored_states.py)."""
    values = [
        kept
        if game_id and name == "state" and (kept := stored_states.kept(game_id, row[at])) is not None
        else converted(row[at], converters, connection)
        for at, name, converters in part
    ]
    return model.from_db(alias, [name for _, name, _ in part], values)


@functools.cache
def _game_select(alias: str) -> tuple[str, _Columns, _Columns]:
    connection = connections[alias]
    quote = connection.ops.quote_name
    game_table, version_table = Game._meta.db_table, ScenarioVersion._meta.db_table
    columns: list[str] = []
    parts: list[_Columns] = []
    version_fields = [f for f in ScenarioVersion._meta.concrete_fields if f.name != "document"]
    for model, table, fields in (
        (Game, game_table, list(Game._meta.concrete_fields)),
        (ScenarioVersion, version_table, version_fields),
    ):
        part: _Columns = []
        for field in fields:
            part.append((len(columns), field.attname, column_converters(model, field.name, alias)))
            columns.append(f"{quote(table)}.{quote(str(field.column))}")
        parts.append(part)
    scenario_column = quoted_column(Game, "scenario", alias)
    sql = (
        f"SELECT {', '.join(columns)} FROM {quote(game_table)} INNER JOIN {quote(version_table)} "
        f"ON ({quote(game_table)}.{scenario_column} = {quote(version_table)}.{quote('id')}) "
        f"WHERE {quote(game_table)}.{quote('id')} = %s"
    )
    return sql, parts[0], parts[1]


def create_game(
    *,
    scenario_version: ScenarioVersion,
    seed: int,
    owner: User | None = None,
    model: str | None = None,
    options: dict[str, Any] | None = None,
    others: Sequence[User] = (),
    session_id: int | None = None,
) -> Game:
    """Create a game of the scenario's kind with its first committed step and checkpoint (a negotiation rests in
    ROLE_SELECTION), pinned to the model option `model` (see services.content.model_choice; None: the settings' model).
    `options` are the kind's start options (e.g. a deliberation's submitted code, a class group's seats).
    `others`: the students who share the game with its owner, given the seats the start names for them
    (`Advance.other_seats`, in order); none, and the owner plays every seat (an imported class group's game).
    Raises UnknownModelChoice, and ValueError if they do not match."""
    kind = get_kind(scenario_version.kind)
    advance = kind.start(parsed_scenario(scenario_version), seed=seed, options=options or {})
    if others and (len(others) != len(advance.other_seats) or owner is None):
        raise ValueError(f"{len(others)} other students for {len(advance.other_seats)} other seats")
    pinned = pinned_fields(model)
    with transaction.atomic():
        game = Game.objects.create(
            owner=owner, scenario=scenario_version, seed=seed, phase="BOOT", state={}, version=0, **pinned
        )
        _write(game, advance, ())
        if others:
            assert owner is not None
            give_seats(
                game, [owner, *others], [advance.human_role, *advance.other_seats], session_id=session_id
            )
    return game


def commit_event(
    *,
    game_id: int,
    expected_version: int,
    event: str,
    payload: dict[str, Any] | None = None,
    model_calls: tuple[ModelCallRecord, ...] = (),
    idempotency_key: str | None = None,
    known: Game | None = None,
    on_latest: bool = False,
) -> Game:
    """Apply `event` to the game at `expected_version` and commit it with its automatic follow-ups.

    With an idempotency key, the same key commits at most once (a double click, a re-sent form). `known`: the
    game as the caller read it; when it is at `expected_version` the commit locks the row without reading it
    again (a version names one state, so the row holds exactly what `known` holds); `known` itself is left as it
    was, whether the commit succeeds or not. `on_latest`: a move in a lane of side-by-side moves (`NextStep.lanes`)
    that another lane's commit overtook is applied to the game as it is now (a few times at most): the kind's
    machine, which the move tells what it was made after, refuses it if its own lane has moved."""
    for attempt in range(LATEST_ATTEMPTS if on_latest else 1):
        try:
            game = _commit(game_id, expected_version, event, payload, model_calls, idempotency_key, known)
        except (StaleTurn, IntegrityError) as exc:  # IntegrityError: two processes raced with the same key
            latest = stored_version(game_id) if on_latest and attempt + 1 < LATEST_ATTEMPTS else None
            used = idempotency_key and count_rows(Submission, game=game_id, key=idempotency_key[:64])
            if latest is None or latest == expected_version or used:
                raise StaleTurn() from exc  # the loser played nothing
            expected_version, known = latest, None
            continue
        faults.point("after_commit")
        return game
    raise AssertionError("unreachable: the last attempt returns or raises")


LATEST_ATTEMPTS = 5  # a lane's move overtaken this often in a row is told to look again (StaleTurn)


def _commit(
    game_id: int,
    expected_version: int,
    event: str,
    payload: dict[str, Any] | None,
    model_calls: tuple[ModelCallRecord, ...],
    idempotency_key: str | None,
    known: Game | None = None,
) -> Game:
    with transaction.atomic():
        # BEGIN IMMEDIATE (SQLite) / row lock (PostgreSQL): one writer per game at a time. The game's row only
        # (`of`): FOR UPDATE on the join would lock its scenario version too, which every game of that scenario
        # shares, and each commit in the school would wait for the one before.
        if known is not None and known.pk == game_id and known.version == expected_version:
            # Only the fields a commit writes matter, and they change only with the version: lock and compare it
            # (re-reading the row cost an AI turn's commit about a seventh of its time, mostly the state's JSON).
            locked = stored_version(game_id, lock=True)
            if locked is None:
                raise Game.DoesNotExist(f"game {game_id}")
            if locked != expected_version:
                raise StaleTurn()
            game = copy.copy(known)  # a failed commit must not leave the caller's game a version ahead
        else:
            found = game_with_scenario(game_id, lock=True)
            if found is None:
                raise Game.DoesNotExist(f"game {game_id}")
            game = found
        if game.version != expected_version:
            raise StaleTurn()
        if idempotency_key and count_rows(Submission, game=game.pk, key=idempotency_key[:64]):
            raise StaleTurn()
        kind = kind_of(game)
        if game.status == Game.Status.FINISHED and event not in kind.after_finish_events:
            raise GameFinished()
        advance = kind.advance(parsed_scenario(game.scenario), game.state, event, payload or {})
        _write(game, advance, model_calls)
        if idempotency_key:
            insert_rows([Submission(game=game, key=idempotency_key[:64], event_seq=advance.events[0].seq)])
        faults.point("inside_commit")
        if settings.MERCURY_BROADCAST:
            transaction.on_commit(partial(_announce, game))
    return game


def _announce(game: Game) -> None:
    """After the commit (not under the game's row lock): pages show a turn the user must answer, or the end, at
    once; a turn an AI seat follows may share its render with the next (simulations/consumers.py)."""
    notify_game_advanced(game.pk, version=game.version, ai_next=ai_acts_next(game))


def write_ledger(game: Game, advance: Advance) -> None:
    """The append-only rows a committed step produced: transcript entries, events, votes."""
    insert_rows(
        [
            TranscriptEntry(
                game=game, seq=e.seq, round=e.round, phase=e.phase, issue=e.issue, speaker=e.speaker,
                kind=e.kind, visibility=e.visibility, audience=list(e.audience), text=e.text,
            )
            for o in advance.events
            for e in o.entries
        ]
    )  # fmt: skip
    insert_rows(
        [
            Event(
                game=game, seq=o.seq, name=o.name, from_state=o.source, to_state=o.target, actor=o.actor,
                payload=o.payload, stance_changes=list(o.changes),
            )
            for o in advance.events
        ]
    )  # fmt: skip
    insert_rows([Vote(game=game, **o.vote) for o in advance.events if o.vote])


# The game's columns a commit changes (`updated_at` is set as `save` sets it).
GAME_FIELDS_A_COMMIT_WRITES = (
    "state",
    "phase",
    "human_role",
    "version",
    "status",
    "finished_at",
    "updated_at",
)


@contextmanager
def _sent_together(alias: str) -> Iterator[None]:
    """On PostgreSQL, the block's statements go to the server one after another without waiting for each answer
    (psycopg's pipeline mode), and the block waits once, at its end; their errors are raised there, as Django's
    own (`wrap_database_errors`), so a caller catching IntegrityError still does. Nothing in the block may read a
    result. Under load a thread waits for Python's lock after every answer, so a commit's inserts sent one at a
    time would hold the game's row, and one of the process's few connections, that much longer. Elsewhere
    (SQLite, a connection without pipelines) the statements run as they come."""
    connection = connections[alias]
    raw = connection.connection
    if connection.vendor != "postgresql" or raw is None or not hasattr(raw, "pipeline"):
        yield
        return
    with connection.wrap_database_errors, raw.pipeline():
        yield


def _write(game: Game, advance: Advance, model_calls: tuple[ModelCallRecord, ...]) -> None:
    """The commit's rows, as plain statements (services/ledger/rows.py): the ledger, the model calls, the checkpoint
    (sent together, `_sent_together`) and the game's row."""
    first = advance.events[0]
    first_seq = count_rows(ModelCall, game=game.pk) + 1 if model_calls else 0
    with _sent_together(router.db_for_write(Game)):
        write_ledger(game, advance)
        insert_rows(
            [
                ModelCall(game=game, seq=first_seq + n, event_seq=first.seq, phase=first.source, **vars(call))
                for n, call in enumerate(model_calls)
            ]
        )  # fmt: skip
        insert_rows(
            [
                Checkpoint(
                    game=game,
                    seq=game.version + 1,
                    after_event=advance.events[-1].seq,
                    transcript_seq=advance.transcript_seq,
                    schema_version=advance.schema_version,
                    **stored_fields(seq=game.version + 1, before=game.state or None, after=advance.state),
                )
            ]
        )
    game.state = advance.state
    game.phase = advance.phase
    game.human_role = advance.human_role
    game.version += 1
    if advance.finished and game.status != Game.Status.FINISHED:
        game.status = Game.Status.FINISHED
        game.finished_at = timezone.now()
    update_row(game, GAME_FIELDS_A_COMMIT_WRITES)
    stored_states.remember(game.pk, game.state, vendor=connections[router.db_for_write(Game)].vendor)
    # Readers in this process that keep the game's rows (services/ledger/appended.py) take these once they are committed.
    transaction.on_commit(
        partial(
            appended.committed, game_id=game.pk, created_at=game.created_at, before=game.version - 1,
            after=game.version, advance=advance,
        )
    )  # fmt: skip


def record_uncommitted_calls(*, game: Game, calls: tuple[ModelCallRecord, ...], why: str) -> None:
    """Log model calls that were made for a move that then did not commit (the turn moved on, the game ended):
    they were paid for, so they are on record and count against the budget. Serialised on the game's row so
    concurrent writers number them without collisions."""
    if not calls:
        return
    with transaction.atomic():
        locked = Game.objects.select_for_update().get(pk=game.pk)
        first_seq = locked.model_calls.count() + 1
        ModelCall.objects.bulk_create(
            ModelCall(game=locked, seq=first_seq + n, event_seq=None, phase=locked.phase,
                      **(vars(call) | {"status": "error", "error": f"not committed: {why}"[:300]}))
            for n, call in enumerate(calls)
        )  # fmt: skip


def record_failed_call(
    *,
    game: Game,
    role: str | None,
    purpose: str | None,
    model: str,
    error: str,
    context: list[int],
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
    token_count_method: str = "",
    cost_usd: float | None = None,
) -> None:
    """Log a model call that produced no turn (the game itself is untouched). Its prompt was sent, so its tokens
    (estimated: the provider reported none) count against the budget."""
    ModelCall.objects.create(
        game=game, seq=game.model_calls.count() + 1, role=role or "debrief", purpose=purpose or "",
        phase=game.phase, context=context, model=model, status="error", error=error[:300],
        prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, token_count_method=token_count_method,
        cost_usd=cost_usd,
    )  # fmt: skip
