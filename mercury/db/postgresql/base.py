"""Django's PostgreSQL back-end with pooled connections (`mercury.db.pool`); psycopg 3 connections are
thread-safe, and the pool hands each to one thread at a time anyway."""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import base, creation
from psycopg import IsolationLevel, pq

from mercury.db.pool import PooledWrapperMixin, close_idle


class DatabaseCreation(creation.DatabaseCreation):
    def _destroy_test_db(self, test_database_name: str, verbosity: int) -> None:
        close_idle(test_database_name)  # PostgreSQL refuses to drop a database others are connected to
        super()._destroy_test_db(test_database_name, verbosity)  # type: ignore[misc]


class DatabaseWrapper(PooledWrapperMixin, base.DatabaseWrapper):
    creation_class = DatabaseCreation

    def _clean(self, raw: Any) -> bool:
        return not raw.closed and raw.info.transaction_status == pq.TransactionStatus.IDLE

    def _reusable(self, raw: Any, *, checked: bool) -> bool:
        if raw.closed or raw.info.status != pq.ConnStatus.OK:
            return False
        if not checked:
            return True
        try:
            raw.execute("SELECT 1")
            if not raw.autocommit:
                raw.rollback()
            return True
        except Exception:  # the server went away while the connection was idle
            return False

    def _prepare_reused(self, raw: Any) -> None:
        level = self.settings_dict["OPTIONS"].get("isolation_level")
        self.isolation_level = IsolationLevel(level) if level is not None else IsolationLevel.READ_COMMITTED
