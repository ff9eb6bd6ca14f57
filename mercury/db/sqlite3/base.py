"""Django's SQLite back-end with pooled connections (`mercury.db.pool`).

Django opens SQLite connections with check_same_thread=False, so a connection may move between threads; the
pool hands each to one thread at a time."""

from __future__ import annotations

import sqlite3
from typing import Any

from django.db.backends.sqlite3 import base

from mercury.db.pool import PooledWrapperMixin


class DatabaseWrapper(PooledWrapperMixin, base.DatabaseWrapper):
    def _clean(self, raw: Any) -> bool:
        return not raw.in_transaction and not self.is_in_memory_db()

    def _reusable(self, raw: Any, *, checked: bool) -> bool:
        try:
            if checked:
                raw.execute("SELECT 1").fetchall()
            return True
        except sqlite3.Error:  # closed by someone else
            return False
