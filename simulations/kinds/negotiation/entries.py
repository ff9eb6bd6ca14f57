"""A game's transcript entries as this process keeps them (services/ledger/appended.py): read from the database only from
where the last read ended, and not at all when the rows kept are known to cover the game's version (a commit made
in this process adds its entries as it commits). Prompts read them every AI turn; a page's render reads its new
entries and the headings before them from here too, so in the embedded set-up, where the page and the driver
share a process, a render after a turn asks the database for no entries at all."""

from __future__ import annotations

from simulations.kinds.negotiation.prompts import SeenEntry
from simulations.models import Game, TranscriptEntry
from simulations.services.ledger.appended import AppendedRows
from simulations.services.ledger.rows import rows_after

_ENTRIES: AppendedRows[SeenEntry] = AppendedRows(
    lambda game_id, after: [
        SeenEntry(*row)
        for row in rows_after(
            TranscriptEntry,
            ("seq", "speaker", "kind", "visibility", "audience", "text", "round", "issue"),
            game_id=game_id,
            after=after,
        )
    ],
    written=lambda advance: [
        SeenEntry(e.seq, e.speaker, e.kind, e.visibility, list(e.audience), e.text, e.round, e.issue)
        for event in advance.events
        for e in event.entries
    ],
)


def kept_entries(game: Game) -> tuple[SeenEntry, ...]:
    """Every entry of the game up to at least its version as `game` holds it, in seq order (a tuple the callers
    share: never change it)."""
    return _ENTRIES.rows(game_id=game.pk, created_at=game.created_at, version=game.version)
