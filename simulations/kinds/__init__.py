"""Simulation kinds and the contract the platform plays them by.

A kind is a folder, `simulations/kinds/<name>/`: its machine table, scenario schema, prompts, bots, offline writer
and page partials. Its `platform` module exposes `KIND`, an object that satisfies `Kind` below. The platform (the
driver, the consumer, the offline model, the views) never imports a kind by name: it asks this registry, which
imports `simulations.kinds.<name>.platform` for each name in `settings.MERCURY_KINDS`. A test
(`tests/test_kind_boundary.py`) keeps it so.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pathlib import Path

    from django.http import HttpRequest, HttpResponse

    from simulations.authoring import FieldSpec
    from simulations.models import Game, ScenarioVersion
    from simulations.services.export_schema import SimulationExport

DEFAULT_KIND = "negotiation"


class Actor(StrEnum):
    """Who the simulation waits for."""

    AI = "ai"  # an AI seat or persona: the driver plays it
    HUMAN = "human"  # the user (or a bot in the user's seat)
    SYSTEM = "system"  # a step the user's page confirms (e.g. "start the round"), played by the page or bot
    DONE = "done"  # nothing more: the simulation is over


@dataclass(frozen=True)
class NextStep:
    """What a simulation waits for, in the platform's terms (derived from the kind's table by the kind)."""

    actor: Actor
    speaker: str = ""  # the display name of who acts next, for "… has the floor"; empty when nobody does
    detail: Any = None  # the kind's own step object, handed back to it (bots, progress callbacks)
    markdown: bool = False  # its words are Markdown (a debrief): a page shows them rendered as they stream


ChunkSink = Callable[[str], None]


@dataclass(frozen=True)
class ScenarioSource:
    """One scenario a kind found on disk, validated, ready to be stored as a version."""

    slug: str
    title: str
    content_hash: str  # same content, same hash: loading it again stores nothing new
    document: dict[str, Any]  # what is stored (ScenarioVersion.document) and parsed back by `parse_scenario`
    model: Any  # the kind's scenario model


# --- what a kind hands the ledger -------------------------------------------------------------------------------
# The shared writer (`services.turns`) stores these rows as they are; it knows nothing of the kind's table.


@dataclass(frozen=True)
class LedgerEntry:
    """One transcript line."""

    seq: int
    round: int
    phase: str
    speaker: str
    kind: str
    text: str
    issue: str = ""
    visibility: str = "public"  # public | private (then only `audience` may read it)
    audience: tuple[str, ...] = ()


@dataclass(frozen=True)
class LedgerEvent:
    """One transition of the kind's machine, with what it wrote."""

    seq: int
    name: str
    source: str
    target: str
    actor: str
    payload: dict[str, Any]
    entries: tuple[LedgerEntry, ...] = ()
    changes: tuple[dict[str, Any], ...] = ()  # e.g. the negotiation's stance changes (Event.stance_changes)
    vote: dict[str, Any] | None = None  # a completed vote: issue, proposal, ballots, adopted


@dataclass(frozen=True)
class Advance:
    """The events one committed step took (the move and whatever the machine did on its own after it) and the
    state they leave, as stored in the checkpoint."""

    events: tuple[LedgerEvent, ...]
    state: dict[str, Any]
    phase: str  # the machine state the simulation rests in
    human_role: str  # the seat the user plays, "" if none (yet)
    finished: bool
    schema_version: int
    transcript_seq: int  # the last transcript seq written so far


class Kind(Protocol):
    """What the platform needs of a simulation kind."""

    name: str
    title: str  # what the lobby calls this kind of simulation
    blurb_field: str  # the scenario document's key holding a sentence or two for the lobby
    after_finish_events: frozenset[str]  # events still accepted once finished (e.g. the debrief's summary)

    def read_scenarios(self, path: Path) -> list[ScenarioSource]:
        """The scenarios of this kind at `path` (a folder or a file); [] if it holds none of this kind.
        Raises `ScenarioError` if one of them is invalid."""
        ...

    def index_scenario(self, version: ScenarioVersion, scenario: Any) -> None:
        """Rows the admin lists beside a newly stored version (e.g. a negotiation's roles and issues)."""
        ...

    def parse_scenario(self, document: dict[str, Any]) -> Any:
        """A stored scenario document back as the kind's scenario model."""
        ...

    def preview(self, scenario: Any) -> str:
        """HTML for the admin's preview of a scenario: what each seat's player will read, and what the content
        implies for play (e.g. an option no briefing lets a voter accept)."""
        ...

    def rehearsal(self, scenario: Any) -> tuple[str | None, dict[str, Any]]:
        """The seat a bot takes and the start options of an admin's rehearsal of this scenario (a whole game
        played by bots and the offline model). Raises ValueError when the scenario cannot be rehearsed."""
        ...

    def authoring_fields(self, document: dict[str, Any]) -> list[FieldSpec]:
        """The fields of a (valid) scenario document the admin's structured editor shows, in order: sections of
        briefs, options, stances and the like (simulations/authoring.py). What it leaves out is edited as YAML."""
        ...

    def source_of(self, document: dict[str, Any]) -> ScenarioSource:
        """A whole scenario document (e.g. edited in admin) validated by the kind's schema, ready to store: the
        same content as a file on disk gives the same hash. Raises pydantic's ValidationError."""
        ...

    def start(self, scenario: Any, *, seed: int, options: dict[str, Any]) -> Advance:
        """A new simulation's first committed step (raises a `MachineError` or `ValueError` on bad options)."""
        ...

    def advance(self, scenario: Any, state: dict[str, Any], event: str, payload: dict[str, Any]) -> Advance:
        """Apply `event` and every step the machine takes on its own after it, on a copy of `state`.
        Raises a `MachineError` and changes nothing if the table refuses it."""
        ...

    def restore(self, scenario: Any, state: dict[str, Any]) -> Any:
        """A checkpoint's state document back as the kind's state, validated (raises `ResumeError`)."""
        ...

    def next_step(self, game: Game) -> NextStep:
        """Who acts next in this game, from its stored state and the kind's table."""
        ...

    def play_ai_step(
        self, game: Game, step: NextStep, *, on_chunk: ChunkSink | None, on_restart: Callable[[], None] | None
    ) -> Game:
        """Play `step` (the game's next step, an AI one) and commit it in one transaction; return the game as committed.
        Raises `StaleTurn` if another driver committed first and `ModelFailure` if the model failed."""
        ...

    def stream_view(self, text: str) -> str:
        """What a page may show of a reply streamed so far ("" for nothing yet): e.g. not a seat's PASS, which is
        a decision rather than words, or only the opinion inside a persona's JSON reply."""
        ...

    def offline_reply(self, messages: Sequence[dict[str, Any]]) -> str | None:
        """The built-in offline model's answer to one of this kind's prompts; None if the prompt is not one."""
        ...

    # --- the command line (`manage.py play`) --------------------------------------------------------------

    def cli_options(self, *, role: str | None, human: str | None, options: dict[str, str]) -> dict[str, Any]:
        """`start` options from `play`'s `--role`, `--human` and `--option KEY=VALUE`s; ValueError (a sentence
        for the terminal) if they do not fit, before any game is created."""
        ...

    def play_headless(
        self,
        game: Game,
        *,
        role: str | None,
        human: str | None,
        resumed: bool,
        say: Callable[[str], Any],
        on_progress: Callable[[Game, str], None] | None,
    ) -> Game:
        """Play the game to its end, the kind's bot `human` in the user's seat `role` (on resume, None means the
        bot it was played with), the driver playing every AI step. Raises ModelFailure / MachineError /
        ValueError and leaves the game resumable."""
        ...

    # --- the export: the shared envelope (services/export.py) plus the kind's own part -----------------------

    @property
    def export_model(self) -> type[SimulationExport]:
        """The file's schema for this kind (a subclass of the envelope): it writes the file and reads it back."""
        ...

    def export(self, game: Game) -> SimulationExport:
        """The whole export (`services.export.common_fields` plus the kind's section)."""
        ...

    def start_options(self, doc: SimulationExport) -> dict[str, Any]:
        """The `start` options that recreate an exported game (its import starts from them)."""
        ...

    def reader_view(self, doc: SimulationExport) -> SimulationExport:
        """What people may read of it: while a game runs, only what its user may know."""
        ...

    def export_markdown(self, game: Game) -> str:
        """The game for people to read, as Markdown (user and model text made inert)."""
        ...

    # --- pages: the shared views check who may see or drive a game, then hand it to its kind ---------------

    def phase_label(self, phase: str) -> str:
        """The machine state a game rests in, in words for the lobby."""
        ...

    def new_game(
        self, request: HttpRequest, version: ScenarioVersion, *, seed: int, model: str | None
    ) -> HttpResponse:
        """The lobby's "start a new game" (`model`: the model option chosen there): create the game and show it,
        or show the kind's set-up form first. May raise `UnknownModelChoice`."""
        ...

    def page(self, request: HttpRequest, game: Game) -> HttpResponse:
        """The game page, for its owner."""
        ...

    def move(self, request: HttpRequest, game: Game) -> HttpResponse:
        """A move posted by the game's owner (rate and ownership already checked)."""
        ...

    def render_update(
        self, game: Game, *, since_seq: int, full: bool, shown: dict[str, str] | None = None
    ) -> tuple[str, int]:
        """What the game's websocket sends after a change: HTML fragments (swapped out of band) for everything
        after transcript seq `since_seq` (all of it when `full`), and the last seq they show. `shown`: a memory
        the page's consumer keeps for the kind from one update to the next (empty at first and after a full
        render's request); a kind may note there what the page shows and send only what changed."""
        ...

    def review(self, request: HttpRequest, game: Game) -> HttpResponse:
        """The review page, for whoever may read the game (its owner, staff, a session a share link granted)."""
        ...

    def download(self, game: Game, fmt: str) -> tuple[str, str, str] | None:
        """A download of the game as (body, content type, file name), or None if the kind has no such format."""
        ...


@runtime_checkable
class TakesSocketMoves(Protocol):
    """A kind whose move forms may travel over the game's open websocket (forms marked `data-socket-move`; the
    page's script sends them there instead of posting them when the socket is open): one connection for the whole
    game, and no request of its own for each move. Its posts keep working (no JavaScript, a socket not open)."""

    def socket_move(self, game: Game, *, user_id: int, fields: Mapping[str, str]) -> tuple[str, Game]:
        """Precondition: `game` is the user's. Takes a move from its form's fields with the checks its post makes;
        returns "" when it was committed, else the sentence for the student (nothing changed), and the game as the
        move left it (committed: the page renders it next, without reading it again)."""
        ...


def ai_acts_next(game: Game) -> bool:
    """An AI seat plays the game's next step (someone must drive it; a page may share this turn's render)."""
    return kind_of(game).next_step(game).actor is Actor.AI


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
