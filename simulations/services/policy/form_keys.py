"""Idempotency keys for the move forms: every render of a game's forms carries a new one, and a move posted with a key
commits at most once (`services.ledger.turns.commit_event`).

A key must be unique, not secret: it only names a render of the owner's own game, which nobody else may post to. So a
key is this process's random prefix and a counter, with no system call. `uuid.uuid4()` or `secrets` read the kernel's
random source on each call, and every such call releases the GIL: in a server whose drives, renders and requests share
one interpreter, each release let another thread in and left the render waiting up to a switch interval to go on.
"""

from __future__ import annotations

import itertools
import os

_prefix = ""
_counter = itertools.count()


def _renew() -> None:
    """A new prefix, and the count from zero: at import and in each forked child (a child must not repeat its
    parent's keys, and the forking servers fork after import)."""
    global _prefix, _counter
    _prefix = os.urandom(8).hex()
    _counter = itertools.count()


_renew()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew)


def new_form_key() -> str:
    """A key no other render of any process has had (`next` on a count is atomic under the GIL)."""
    return f"{_prefix}{next(_counter):x}"
