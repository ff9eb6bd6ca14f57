"""Django's database sessions, read with a statement built once (SESSION_ENGINE = "mercury.sessions").

Every request reads its session (the log-in), and a game page reads it again before each render of a committed
turn (`broadcast.session_still_valid`: a log-out or an expired session stops the page). Through the ORM each read
would compile its query anew, a visible share of a web process's time under load. Here the statement's text is built once per database, with the ORM's own quoting
and the ORM's own adaptation of the time it compares with, and the row's data goes to the same `decode`. Writes,
log-outs and everything else are Django's own.

A session logged in through Django's ModelBackend is read as logged in through ours (`mercury.auth`, the same
backend with a cheaper read of the user), so that the change of AUTHENTICATION_BACKENDS logs nobody out.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.contrib.auth import BACKEND_SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.contrib.sessions.base_session import AbstractBaseSession
from django.contrib.sessions.models import Session
from django.db import connections, router
from django.utils import timezone

from mercury.auth import DJANGOS_BACKEND, THIS_BACKEND
from simulations.services.rows import quoted_column


class SessionStore(DatabaseSessionStore):
    def decode(self, session_data: bytes | str) -> dict[str, Any]:
        data: dict[str, Any] = super().decode(session_data)
        if data.get(BACKEND_SESSION_KEY) == DJANGOS_BACKEND:
            data[BACKEND_SESSION_KEY] = THIS_BACKEND
        return data

    def _get_session_from_db(self) -> AbstractBaseSession | None:
        """The session's row while it has not expired (only its data is read: `load` needs nothing else);
        None, and no key, otherwise, as Django's."""
        if not self.session_key:
            self._session_key = None
            return None
        alias = router.db_for_read(self.model)
        connection = connections[alias]
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        with connection.cursor() as cursor:
            cursor.execute(_select(alias), [self.session_key, now])
            row = cursor.fetchone()
        if row is None:
            self._session_key = None
            return None
        return self.model(session_key=self.session_key, session_data=row[0])


@cache
def _select(alias: str) -> str:
    def column(name: str) -> str:
        return quoted_column(Session, name, alias)

    return (
        f"SELECT {column('session_data')} FROM {connections[alias].ops.quote_name(Session._meta.db_table)}"
        f" WHERE {column('session_key')} = %s AND {column('expire_date')} > %s"
    )
