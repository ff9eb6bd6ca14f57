"""Simulation kinds and the contract the platform plays them by.

A kind is a folder, `simulations/kinds/<name>/`: its machine table, scenario schema, prompts, bots, offline writer
and page partials. Its `platform` module exposes `KIND`, an object that satisfies `Kind` (`contract.py`; defaults in `base.py`). The platform (the
driver, the consumer, the offline model, the views) never imports a kind by name: it asks this registry, which
imports `simulations.kinds.<name>.platform` for each name in `settings.MERCURY_KINDS`. A test
(`tests/test_kind_boundary.py`) keeps it so.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

from .contract import (
    Actor,
    Advance,
    Aim,
    Bot,
    ChunkSink,
    Kind,
    KindAdmin,
    KindExports,
    KindHeadless,
    KindPages,
    Lane,
    LedgerEntry,
    LedgerEvent,
    Met,
    MovingWords,
    NextStep,
    Outcomes,
    Restart,
    ScenarioBook,
    ScenarioSource,
    Seat,
    SeatResult,
)

if TYPE_CHECKING:
    from simulations.models import Game

__all__ = [
    "Actor", "Advance", "Aim", "Bot", "ChunkSink", "Kind", "KindAdmin", "KindExports", "KindHeadless", "KindPages",
    "Lane", "LedgerEntry", "LedgerEvent", "Met", "MovingWords", "NextStep", "Outcomes", "Restart", "ScenarioBook",
    "ScenarioSource", "Seat", "SeatResult", "UnknownKind",
    "ai_acts_next", "all_kinds", "get_kind", "kind_names", "kind_of",
]  # fmt: skip

DEFAULT_KIND = "negotiation"


def ai_acts_next(game: Game) -> bool:
    """An AI seat plays the game's next step (someone must drive it; a page may share this turn's render), and the
    game is not paused by its class's teacher."""
    return not game.paused and kind_of(game).next_step(game).actor is Actor.AI


class UnknownKind(LookupError):
    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"no simulation kind named {name!r} is installed (settings.MERCURY_KINDS)")


def kind_names() -> tuple[str, ...]:
    from django.conf import settings

    if not settings.configured:  # e.g. the offline model used from a plain script
        return (DEFAULT_KIND,)
    return tuple(getattr(settings, "MERCURY_KINDS", (DEFAULT_KIND,)))


@cache
def _load(name: str) -> Kind:
    module = importlib.import_module(f"simulations.kinds.{name}.platform")
    kind: Kind = module.KIND
    return kind


def get_kind(name: str) -> Kind:
    if name not in kind_names():
        raise UnknownKind(name)
    return _load(name)


def all_kinds() -> list[Kind]:
    return [_load(name) for name in kind_names()]


def kind_of(game: Game) -> Kind:
    """The kind that plays this game (its scenario's kind)."""
    return get_kind(game.scenario.kind)
