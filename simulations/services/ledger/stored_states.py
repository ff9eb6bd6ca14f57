"""A game's state as the last commit in this process wrote it, so that reading that row back takes the document
(and the parsed object it carries) instead of decoding the same text again.

Every committed turn is read back in the process that committed it, at once and more than once: the page's render
of the turn, the drive that plays the next one, the move that answers it. Each read would decode the state's JSON
and the kind parse the result again, about a hundred times a game over HTTP.

A read takes the kept document only when the row holds exactly the text the commit wrote: a rolled-back commit, a
game changed by another process, an id given out again all leave other text in the row, and are decoded as
before. Only documents that write their own text are kept (`rows.EncodesItself`, the negotiation's
`CommittedState`): they are read-only by contract, so one document may serve every thread that loads the game.
Only where the database stores that text as written (SQLite): PostgreSQL's jsonb hands back its own rendering, which
never matches, so nothing is kept there.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from simulations.services.ledger.rows import EncodesItself

GAMES_KEPT = 256  # one state each (the newest): a classroom's games many times over

_kept: OrderedDict[int, tuple[str, EncodesItself]] = OrderedDict()
_lock = threading.Lock()


def remember(game_id: int, document: Any, *, vendor: str) -> None:
    """`document` was just written as the game's state by a connection to a `vendor` database."""
    if vendor != "sqlite" or not isinstance(document, EncodesItself):
        return
    text = document.json_text()  # the text the write used (a document keeps it)
    with _lock:
        _kept[game_id] = (text, document)
        _kept.move_to_end(game_id)
        while len(_kept) > GAMES_KEPT:
            _kept.popitem(last=False)


def kept(game_id: int, text: object) -> EncodesItself | None:
    """The document kept for the game if the row's stored `text` is the text it was written as."""
    with _lock:
        found = _kept.get(game_id)
    if found is None or found[0] != text:  # str == str: equal lengths are compared by memcmp
        return None
    return found[1]


def forget_all() -> None:
    """Drop every kept state (tests)."""
    with _lock:
        _kept.clear()
