"""Django's ModelBackend, reading a log-in's user with a statement built once (AUTHENTICATION_BACKENDS).

Every request and every websocket connection of a logged-in user reads the user's row (`auth.get_user`); through
the ORM's `get` that query would be compiled anew each time, a visible share of a move's request. The row is read whole and built as the ORM builds it
(`rows.row_by_pk`); everything else, the password check, the session's hash, permissions, is Django's own.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend

from simulations.services.ledger.rows import row_by_pk

THIS_BACKEND = f"{__name__}.UserRowBackend"


class UserRowBackend(ModelBackend):
    def get_user(self, user_id: Any) -> Any:
        user = row_by_pk(get_user_model(), user_id)
        return user if user is not None and self.user_can_authenticate(user) else None
