"""Practice conversations as the platform sees them: scenarios read from seed-001 JSON files, the machine's
outcomes in the ledger's terms, the driver's two AI steps (the judge, then the character streaming), the offline
judge and character, the pages (pages.py, presenters.py, templates/roleplay/), the export."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simulations.kinds import (
    Actor,
    Advance,
    ChunkSink,
    Kind,
    LedgerEntry,
    LedgerEvent,
    NextStep,
    ScenarioSource,
)

from . import machine, prompts
from .document import RoleplayState, Status
from .machine import Outcome, Step
from .scenario import RoleplayScenario, load_file, looks_like_roleplay, validate_scenario

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

    from simulations.authoring import FieldSpec
    from simulations.models import Game, ScenarioVersion
    from simulations.services.export_schema import SimulationExport

DEFAULT_USERNAME = "the student"


def _advance(out: Outcome, scenario: RoleplayScenario) -> Advance:
    state = out.state
    entries = tuple(
        LedgerEntry(
            seq=n,
            round=state.turns,
            phase=out.source or out.target,
            speaker=state.username if m.role == "student" else scenario.botname,
            kind=m.role,
            text=m.text,
        )  # fmt: skip
        for n, m in out.said
    )
    event = LedgerEvent(
        seq=out.seq, name=out.event.value, source=out.source, target=out.target, actor=out.actor,
        payload=out.payload, entries=entries, changes=tuple(out.changes),
    )  # fmt: skip
    return Advance(
        events=(event,), state=state.model_dump(mode="json"), phase=state.status.value, human_role="student",
        finished=state.status is Status.ENDED, schema_version=state.schema_version,
        transcript_seq=len(state.messages),
    )  # fmt: skip


def _source(scenario: RoleplayScenario, document: dict[str, Any]) -> ScenarioSource:
    digest = hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()
    return ScenarioSource(
        slug=scenario.slug, title=scenario.title, content_hash=digest, document=document, model=scenario
    )


class Roleplay:
    name = "roleplay"
    title = "Practice conversation"
    blurb_field = "goal"
    after_finish_events: frozenset[str] = frozenset()

    def read_scenarios(self, path: Path) -> list[ScenarioSource]:
        """Every seed-001 JSON file at `path` (a folder of them, or one file)."""
        files = sorted(path.glob("*.json")) if path.is_dir() else [path] if path.suffix == ".json" else []
        return [_source(*load_file(file)) for file in files]

    def bare_document(self, document: Any) -> bool:
        """A scenario file may hold seed 001's JSON as it is (services/scenario_drafts.py)."""
        return looks_like_roleplay(document)

    def parse_scenario(self, document: dict[str, Any]) -> RoleplayScenario:
        return RoleplayScenario.model_validate(document)

    def source_of(self, document: dict[str, Any]) -> ScenarioSource:
        return _source(validate_scenario(document), document)

    def index_scenario(self, version: ScenarioVersion, scenario: RoleplayScenario) -> None:
        return None

    def start(self, scenario: RoleplayScenario, *, seed: int, options: dict[str, Any]) -> Advance:
        username = str(options.get("username") or DEFAULT_USERNAME).strip()[:80] or DEFAULT_USERNAME
        out = machine.start(scenario, seed=seed, username=username)
        return _advance(out, scenario)

    def advance(
        self, scenario: RoleplayScenario, state: dict[str, Any], event: str, payload: dict[str, Any]
    ) -> Advance:
        out = machine.apply(scenario, machine.restore(state), event, payload)
        return _advance(out, scenario)

    def restore(self, scenario: RoleplayScenario, state: dict[str, Any]) -> RoleplayState:
        return machine.restore(state)

    def next_step(self, game: Game) -> NextStep:
        from .games import scenario_of, state_of

        step = machine.next_step(state_of(game))
        if step.done:
            return NextStep(actor=Actor.DONE, detail=step)
        if step.actor == "human":
            return NextStep(actor=Actor.HUMAN, detail=step)
        speaker = scenario_of(game).botname
        return NextStep(actor=Actor.AI, speaker=speaker, detail=step)

    def play_ai_step(
        self, game: Game, step: NextStep, *, on_chunk: ChunkSink | None, on_restart: Callable[[], None] | None
    ) -> Game:
        from .turns import play_ai_step

        assert isinstance(step.detail, Step)
        return play_ai_step(game, step.detail, on_chunk=on_chunk, on_restart=on_restart)

    def stream_view(self, text: str) -> str:
        from .wording import unstarred

        return unstarred(text)  # only the character's words are streamed (the judge's JSON is not)

    def offline_reply(self, messages: Sequence[dict[str, Any]]) -> str | None:
        return prompts.offline_answer(messages)

    def phase_label(self, phase: str) -> str:
        return {
            "STUDENT_TURN": "Your turn", "JUDGING": "Listening", "CHARACTER_TURN": "Answering", "ENDED": "Ended",
        }.get(phase, phase.replace("_", " ").capitalize())  # fmt: skip

    # --- the admin ----------------------------------------------------------------------------------------------

    def preview(self, scenario: RoleplayScenario) -> str:
        from .pages import preview

        return preview(scenario)

    def rehearsal(self, scenario: RoleplayScenario) -> tuple[str | None, dict[str, Any]]:
        return "student", {"username": "Rehearsal"}  # the seeker bot heads for SUCCESS

    def authoring_fields(self, document: dict[str, Any]) -> list[FieldSpec]:
        from .authoring import authoring_fields

        return authoring_fields(document)

    # --- the command line ---------------------------------------------------------------------------------------

    def cli_options(self, *, role: str | None, human: str | None, options: dict[str, str]) -> dict[str, Any]:
        from .bots import BOTS

        if role not in (None, "student"):
            raise ValueError("A practice conversation has one seat to play: --role student (the default).")
        if human not in (None, "offline", *BOTS):
            raise ValueError(f"--human takes one of: {', '.join(BOTS)} (the student bot).")
        unknown = set(options) - {"username"}
        if unknown:
            raise ValueError(f"Unknown option(s) {', '.join(sorted(unknown))}: use username.")
        return {"username": options.get("username", "Sam")}

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
        from .bots import BOTS, seeker
        from .turns import play_headless

        return play_headless(game, bot=BOTS.get(human or "", seeker), on_progress=on_progress)

    # --- pages --------------------------------------------------------------------------------------------------

    def new_game(
        self, request: HttpRequest, version: ScenarioVersion, *, seed: int, model: str | None
    ) -> HttpResponse:
        from .pages import new_game

        return new_game(request, version, seed=seed, model=model)

    def page(self, request: HttpRequest, game: Game) -> HttpResponse:
        from .pages import page

        return page(request, game)

    def move(self, request: HttpRequest, game: Game) -> HttpResponse:
        from .pages import move

        return move(request, game)

    def render_update(
        self, game: Game, *, since_seq: int, full: bool, shown: dict[str, str] | None = None
    ) -> tuple[str, int]:
        from .pages import render_update

        return render_update(game, since_seq=since_seq, full=full)

    def review(self, request: HttpRequest, game: Game) -> HttpResponse:
        from .pages import review

        return review(request, game)

    # --- the export ---------------------------------------------------------------------------------------------

    @property
    def export_model(self) -> type[SimulationExport]:
        from .export import RoleplayExport

        return RoleplayExport

    def export(self, game: Game) -> SimulationExport:
        from .export import build

        return build(game)

    def start_options(self, doc: SimulationExport) -> dict[str, Any]:
        from .export import RoleplayExport

        assert isinstance(doc, RoleplayExport)
        return {"username": doc.roleplay.username}

    def reader_view(self, doc: SimulationExport) -> SimulationExport:
        return doc  # the student saw every message; the judgments are the exercise's feedback

    def export_markdown(self, game: Game) -> str:
        from .export import markdown

        return markdown(game)

    def download(self, game: Game, fmt: str) -> tuple[str, str, str] | None:
        from .export import download

        return download(game, fmt)


KIND: Kind = Roleplay()  # mypy checks the class against the contract
