"""Reading a game whole while it advances: every query inside `one_snapshot` sees the database as of one moment.

An export reads the game row, its events, transcript, checkpoints, votes and model calls in several queries; a
turn committed between two of them made the file contradict itself (a checkpoint after the last event read) and
the download failed. PostgreSQL: a REPEATABLE READ, READ ONLY transaction. SQLite: a DEFERRED transaction (in WAL
mode its snapshot is taken at the first read, and writers carry on); the IMMEDIATE mode the settings give every
other transaction would take the write lock and stall the game's turns for the length of the export.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from django.db import connection, transaction


@contextmanager
def one_snapshot() -> Iterator[None]:
    """Precondition: nothing inside writes. Inside a transaction already, its own view is the snapshot."""
    if connection.in_atomic_block:
        yield
        return
    with ExitStack() as stack:
        if connection.vendor == "sqlite":
            # Django's SQLite back-end begins a block with BEGIN <transaction_mode>, read as the block opens.
            mode = getattr(connection, "transaction_mode", None)
            connection.transaction_mode = "DEFERRED"  # type: ignore[attr-defined]
            try:
                stack.enter_context(transaction.atomic())
            finally:
                connection.transaction_mode = mode  # type: ignore[attr-defined]
        else:
            stack.enter_context(transaction.atomic())
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield
