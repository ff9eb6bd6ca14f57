"""The contract between the platform and a simulation kind: the plain data a kind hands the shared writer (`Advance`
and its ledger rows), what the driver asks of it (`NextStep`), what a game came to for a class's results
(`Outcomes`), and the `Kind` protocol with its parts.

A kind is its rules and its pages. The `Kind` object answers the machine's questions itself (start, advance,
restore, who acts next, an AI step, what may stream, the offline model's reply, what a game came to) and hands over four parts, each a
module of the kind's own that mypy checks against its protocol here: `admin` (preview, rehearsal, structured
editing), `pages` (the set-up, the game page, moves, websocket updates, the review, its own URLs), `exports` (the
export file's section, the Markdown, downloads) and `headless` (the command line's options and bots). Its scenario
book (`scenarios`) reads, validates and hashes scenario documents. `simulations.kinds.base.KindBase` holds the
defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path

    from django.http import HttpRequest, HttpResponse
    from django.urls import URLPattern, URLResolver

    from simulations.authoring import FieldSpec
    from simulations.models import Game, ScenarioVersion
    from simulations.services.files.export_schema import SimulationExport
    from simulations.services.play.model_step import Move
    from simulations.services.play.work_budget import WorkEstimate


class Actor(StrEnum):
    """Who the simulation waits for."""

    AI = "ai"  # an AI seat or persona: the driver plays it
    HUMAN = "human"  # the user (or a bot in the user's seat)
    SYSTEM = "system"  # a step the user's page confirms (e.g. "start the round"), played by the page or bot
    DONE = "done"  # nothing more: the simulation is over


@dataclass(frozen=True)
class Lane:
    """One student's own line of moves, side by side with the other students' (a game several students share,
    where its kind runs them so: a negotiation's Round 2 talks)."""

    seat: str
    moves: bool  # its student has a move to make now
    doing: str  # what it waits for, in words for the teacher's room ("this student: writing to China")


@dataclass(frozen=True)
class NextStep:
    """What a simulation waits for, in the platform's terms (derived from the kind's table by the kind)."""

    actor: Actor
    speaker: str = ""  # the display name of who acts next, for "… has the floor"; empty when nobody does
    detail: Any = None  # the kind's own step object, handed back to it (bots, progress callbacks)
    seat: str = ""  # the seat whose person acts (a human step), when several people hold seats in one game
    markdown: bool = False  # its words are Markdown (a debrief): a page shows them rendered as they stream
    # The seats whose pages may show this AI step's words as they stream (a private talk's two parties); empty:
    # every reader of the game. A page drawn for another seat never receives them.
    audience: tuple[str, ...] = ()
    # Side by side: every student's lane (`Lane`). A student whose seat has one moves in it whatever `actor` says,
    # and their move, like this step when it is taken in a lane (`lane`: the lane's seat), commits on the game as
    # it is then: the kind's machine, not the game's version, says whether it is out of date
    # (`services.ledger.turns.commit_event(on_latest=True)`). A lane's streamed words are not tied to a version.
    lanes: tuple[Lane, ...] = ()
    lane: str = ""
    # When `seat` got the floor, for its turn limit (None: at the game's last commit).
    since: datetime | None = None


ChunkSink = Callable[[str], None]
Restart = Callable[[], None]  # the model call starts again: words relayed so far are void


@dataclass(frozen=True)
class ScenarioSource:
    """One scenario a kind found on disk, validated, ready to be stored as a version."""

    slug: str
    title: str
    content_hash: str  # same content, same hash: loading it again stores nothing new
    document: dict[str, Any]  # what is stored (ScenarioVersion.document) and parsed back by `parse_scenario`
    model: Any  # the kind's scenario model


# --- what a kind hands the ledger -------------------------------------------------------------------------------
# The shared writer (`services.ledger.turns`) stores these rows as they are; it knows nothing of the kind's table.


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
    # The seats of the other students of a game several students share (its `start` option "seats"), which the
    # platform gives to them in order (services.ledger.seats); empty for a game of one student.
    other_seats: tuple[str, ...] = ()


class ScenarioBook(Protocol):
    """How a kind reads, validates and stores its scenarios (`simulations.kinds.base.ScenarioFiles` is the default:
    YAML files declaring the kind, stored as the model's JSON, hashed by content)."""

    @property
    def blurb_field(self) -> str:
        """The scenario document's key holding a sentence or two for the lobby."""
        ...

    def read(self, path: Path) -> list[ScenarioSource]:
        """The scenarios of this kind at `path` (a folder or a file); [] if it holds none of this kind.
        Raises `ScenarioError` if one of them is invalid."""
        ...

    def parse(self, document: dict[str, Any]) -> Any:
        """A stored scenario document back as the kind's scenario model."""
        ...

    def source_of(self, document: dict[str, Any]) -> ScenarioSource:
        """A whole scenario document (e.g. edited in admin) validated by the kind's schema, ready to store: the
        same content as a file on disk gives the same hash. Raises pydantic's ValidationError."""
        ...

    def index(self, version: ScenarioVersion, scenario: Any) -> None:
        """Rows the admin lists beside a newly stored version (e.g. a negotiation's roles and issues)."""
        ...

    def bare_document(self, document: Any) -> bool:
        """The kind's own published format, read without the scenario file's `{kind, scenario}` envelope (e.g.
        seed 001's JSON for a practice conversation)."""
        ...


class KindAdmin(Protocol):
    """The admin's questions about a scenario (a kind's `authoring.py`)."""

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


class KindPages(Protocol):
    """The kind's pages (its `pages.py`): the shared views check who may see or drive a game, then hand it here."""

    @property
    def urlpatterns(self) -> Sequence[URLPattern | URLResolver]:
        """The kind's own URLs (e.g. a set-up form), served under /<kind>/; empty if it needs none."""
        ...

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

    @property
    def intents(self) -> frozenset[str]:
        """Events that mean the same whatever the page last showed (a run's pause and resume): committed on the game
        as it is now, never refused as "already played"."""
        ...

    def read_move(self, game: Game, fields: Mapping[str, str], files: Mapping[str, Any]) -> Move:
        """The move in a form's fields (and uploaded files), posted or sent over the websocket, after the platform's
        checks (`services.policy.moves.take_move`): raises ValueError / `BadField` (400) for a field it cannot take,
        `NotNow` or a `MachineError` (409) for a move the game does not take now."""
        ...

    def move(self, request: HttpRequest, game: Game) -> HttpResponse:
        """A move posted by the game's owner (ownership already checked): `services.policy.moves.take_move`, then the
        answer drawn (the page's fragments, or the page with the refusal's sentence)."""
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


class KindExports(Protocol):
    """The export (the shared envelope of services/files/export.py plus the kind's own section) and the downloads (a
    kind's `export.py`)."""

    @property
    def export_model(self) -> type[SimulationExport]:
        """The file's schema for this kind (a subclass of the envelope): it writes the file and reads it back."""
        ...

    def build(self, game: Game) -> SimulationExport:
        """The whole export (`services.files.export.common_fields` plus the kind's section)."""
        ...

    def start_options(self, doc: SimulationExport) -> dict[str, Any]:
        """The `start` options that recreate an exported game (its import starts from them)."""
        ...

    def reader_view(self, doc: SimulationExport) -> SimulationExport:
        """What people may read of it: while a game runs, only what its user may know."""
        ...

    def markdown(self, game: Game) -> str:
        """The game for people to read, as Markdown (user and model text made inert)."""
        ...

    def download(self, game: Game, fmt: str) -> tuple[str, str, str] | None:
        """A download of the game as (body, content type, file name), or None if the kind has no such format."""
        ...


@dataclass(frozen=True)
class Seat:
    """Who `manage.py play` (or an admin's rehearsal) puts in the user's seat: the seat `role`, the kind's bot named
    `human` (None: the kind's default, or on resume the bot the game was played with), and where to `say` what the
    person at the terminal should know."""

    role: str | None
    human: str | None
    resumed: bool = False
    say: Callable[[str], Any] = print


# --- what a game came to, for a class's results -------------------------------------------------------------------

Met = Literal["met", "not met", "partly"]


@dataclass(frozen=True)
class Aim:
    """One aim a student's seat had, in plain words, and whether the game met it."""

    words: str  # e.g. "1.1 Binding phase-out by 2030", or a practice conversation's goal
    met: Met | None = None  # None: not decided yet
    issue: str = ""  # the issue it is on, by the id the game's votes use; "" for an aim of the whole game


@dataclass(frozen=True)
class MovingWords:
    """Words the student committed that moved another seat's position: whose, and how."""

    words: str  # an excerpt of the student's own words (never their AI stand-in's)
    moved: str  # e.g. "China came to accept 1.1 Binding phase-out by 2030"; several joined by "; "
    where: str = ""  # e.g. "debate on issue 2", "private talk with Brazil"
    issue: str = ""  # the issue of the positions moved ("" for a kind without issues)
    private: bool = False  # said in private: the class's anonymised page does not quote it to other students


@dataclass(frozen=True)
class SeatResult:
    """One student's seat in a game: its aims and whether they were met, the student's words that moved positions."""

    aims: tuple[
        Aim, ...
    ] = ()  # none: the kind sets its seats no aim (a committee's), or the game is not over
    moved: tuple[MovingWords, ...] = ()

    @property
    def met(self) -> Met | None:
        """Every aim decided so far met, none met, or some ("partly"); None when none is decided."""
        decided = [aim.met for aim in self.aims if aim.met is not None]
        if not decided:
            return None
        if all(m == "met" for m in decided):
            return "met"
        return "not met" if all(m == "not met" for m in decided) else "partly"


@dataclass(frozen=True)
class Outcomes:
    """What a game came to, as a class's results show it (`Kind.outcomes`)."""

    verdict: str = (
        ""  # the game's result in one line, where its kind has one (a committee's verdict and vote)
    )
    # Each seat a student holds (a game of one student: its `human_role`, "" for a kind without seats).
    seats: Mapping[str, SeatResult] = field(default_factory=dict)


Bot = Callable[["Game", NextStep, BaseException | None], "Game"]
"""Makes the move for `step` (a human or system step), commits it and returns the game as committed; the third
argument is the model failure that stopped the last drive, when the kind's machine answered it with a step of the
user's (e.g. "resume the simulation")."""


class KindHeadless(Protocol):
    """The command line's `manage.py play` (a kind's `headless.py`): its options and its bots, for the platform's
    one headless loop (`services.play.headless.play_to_end`)."""

    def cli_options(self, *, role: str | None, human: str | None, options: dict[str, str]) -> dict[str, Any]:
        """`start` options from `play`'s `--role`, `--human` and `--option KEY=VALUE`s; ValueError (a sentence
        for the terminal) if they do not fit, before any game is created."""
        ...

    def bot(self, game: Game, seat: Seat) -> Bot:
        """The bot for the user's seat of `game`; ValueError (a sentence for the terminal) if `seat` names none."""
        ...


class Kind(Protocol):
    """What the platform needs of a simulation kind: 17 members, the machine's questions answered here and the
    rest in the parts (see the module's docstring)."""

    name: str
    title: str  # what the lobby calls this kind of simulation
    after_finish_events: frozenset[str]  # events still accepted once finished (e.g. the debrief's summary)

    @property
    def scenarios(self) -> ScenarioBook: ...

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

    def work_estimate(self, game: Game, config: dict[str, Any]) -> WorkEstimate | None:
        """Precondition: `game` is of this kind. For a kind whose runs advance without the student (its unfinished
        games are the person's background runs): the whole run's estimate from the set-up it stored (`config`, its
        state's "config", read alone). None for a kind the student moves turn by turn."""
        ...

    def outcomes(self, game: Game) -> Outcomes:
        """Precondition: `game` is of this kind. What it came to, for its class's results: a one-line verdict where
        the kind has one, and for each student's seat its aims met or not and the student's words that moved a
        position, read from what the game recorded (never judged again). Empty where the kind has none."""
        ...

    @property
    def admin(self) -> KindAdmin: ...

    @property
    def pages(self) -> KindPages: ...

    @property
    def exports(self) -> KindExports: ...

    @property
    def headless(self) -> KindHeadless: ...
