"""Message Lab as the platform sees it: the machine's outcomes in the ledger's terms, the driver's AI steps (a
parallel stage's calls side by side, each streaming into its own box), the offline personas, the pages
(pages.py, presenters.py, templates/message_lab/), the export and the report."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simulations.engine.scenario_files import declared_kind
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
from .document import Config, LabState
from .machine import Outcome, Step
from .run_config import config_from_options
from .scenario import MessageLabScenario, load_scenario
from .state import SimulationStatus

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

    from simulations.authoring import FieldSpec
    from simulations.models import Game, ScenarioVersion
    from simulations.services.export_schema import SimulationExport
    from simulations.services.work_budget import WorkEstimate


def _ledger(outcomes: Sequence[Outcome], first_seq: int) -> tuple[LedgerEvent, ...]:
    events, seq = [], first_seq
    for o in outcomes:
        entries = []
        for line in o.lines:
            seq += 1
            entries.append(
                LedgerEntry(
                    seq=seq,
                    round=line.round,
                    phase=o.source,
                    speaker=line.persona,
                    kind=line.type,
                    text=line.content,
                )  # fmt: skip
            )
        events.append(
            LedgerEvent(
                seq=o.seq,
                name=o.event.value,
                source=o.source,
                target=o.target,
                actor=o.actor,
                payload=o.payload,
                entries=tuple(entries),
                changes=tuple(o.changes),
            )  # fmt: skip
        )
    return tuple(events)


def _advance(outcomes: list[Outcome], before: LabState | None) -> Advance:
    final = outcomes[-1].state
    return Advance(
        events=_ledger(outcomes, len(before.transcript) if before else 0), state=final.model_dump(mode="json"),
        phase=machine.where(final), human_role="", finished=final.status is SimulationStatus.OUTPUT_READY,
        schema_version=final.schema_version, transcript_seq=len(final.transcript),
    )  # fmt: skip


def _source(scenario: MessageLabScenario) -> ScenarioSource:
    document = scenario.model_dump(mode="json")
    digest = hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()
    return ScenarioSource(
        slug=scenario.slug, title=scenario.title, content_hash=digest, document=document, model=scenario
    )


class MessageLab:
    name = "message_lab"
    title = "Message Lab"
    blurb_field = "summary"
    after_finish_events: frozenset[str] = frozenset()

    def read_scenarios(self, path: Path) -> list[ScenarioSource]:
        """Every YAML file at `path` that declares `kind: message_lab`."""
        files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
        return [_source(load_scenario(file)) for file in files if declared_kind(file) == self.name]

    def parse_scenario(self, document: dict[str, Any]) -> MessageLabScenario:
        return MessageLabScenario.model_validate(document)

    def source_of(self, document: dict[str, Any]) -> ScenarioSource:
        return _source(MessageLabScenario.model_validate(document))

    def index_scenario(self, version: ScenarioVersion, scenario: MessageLabScenario) -> None:
        return None

    def start(self, scenario: MessageLabScenario, *, seed: int, options: dict[str, Any]) -> Advance:
        return _advance(machine.start(config_from_options(scenario, options), seed=seed), None)

    def advance(
        self, scenario: MessageLabScenario, state: dict[str, Any], event: str, payload: dict[str, Any]
    ) -> Advance:
        current = machine.restore(state)
        return _advance(machine.apply(current, event, payload), current)

    def restore(self, scenario: MessageLabScenario, state: dict[str, Any]) -> LabState:
        return machine.restore(state)

    def next_step(self, game: Game) -> NextStep:
        from .games import scenario_of, state_of

        step = machine.next_step(state_of(game))
        if step.done:
            return NextStep(actor=Actor.DONE, detail=step)
        if step.actor == "human":
            return NextStep(actor=Actor.HUMAN, detail=step)
        scenario = scenario_of(game)
        speaker = ", ".join(scenario.persona(u.persona).name for u in step.units)
        return NextStep(actor=Actor.AI, speaker=speaker, detail=step)

    def play_ai_step(
        self, game: Game, step: NextStep, *, on_chunk: ChunkSink | None, on_restart: Callable[[], None] | None
    ) -> Game:
        from .turns import play_ai_step

        assert isinstance(step.detail, Step)
        detail = step.detail
        if not detail.parallel:  # one call: the driver's own stream box
            return play_ai_step(game, detail, relays=lambda req: (on_chunk, on_restart, lambda: None))
        if on_chunk is None:  # headless: nobody watches
            return play_ai_step(game, detail)
        return play_ai_step(game, detail, relays=_side_by_side(game))

    def stream_view(self, text: str) -> str:
        return prompts.streamed_text(text)

    def offline_reply(self, messages: Sequence[dict[str, Any]]) -> str | None:
        return prompts.offline_answer(list(messages))

    def phase_label(self, phase: str) -> str:
        from .presenters import phase_label

        return phase_label(phase)

    # --- the admin ----------------------------------------------------------------------------------------------

    def preview(self, scenario: MessageLabScenario) -> str:
        from django.template.loader import render_to_string

        return render_to_string("message_lab/preview.html", {"scenario": scenario})

    def rehearsal(self, scenario: MessageLabScenario) -> tuple[str | None, dict[str, Any]]:
        return None, {}  # the default panel and brief; a bot approves each gate as it stands

    def authoring_fields(self, document: dict[str, Any]) -> list[FieldSpec]:
        from .authoring import authoring_fields

        return authoring_fields(document)

    # --- the command line ---------------------------------------------------------------------------------------

    def cli_options(self, *, role: str | None, human: str | None, options: dict[str, str]) -> dict[str, Any]:
        if role or human not in (None, "offline"):
            raise ValueError(
                "Message Lab has no seat to play: the panel is all personas; a bot approves each gate."
            )
        known = ("brief", "rounds", "gates", "participants", "moderator", "evaluator", "parallel")
        unknown = set(options) - set(known)
        if unknown:
            raise ValueError(f"Unknown option(s) {', '.join(sorted(unknown))}: use {', '.join(known)}.")
        start: dict[str, Any] = {}
        try:
            for key in ("brief", "moderator", "evaluator"):
                if key in options:
                    start[key] = options[key]
            for key in ("rounds", "parallel"):
                if key in options:
                    start[key] = int(options[key])
            if "gates" in options:
                start["gates"] = [int(g) for g in options["gates"].split(",") if g.strip()]
            if "participants" in options:
                start["participants"] = [p.strip() for p in options["participants"].split(",") if p.strip()]
        except ValueError:
            raise ValueError(
                "rounds, parallel and gates take whole numbers (gates: a comma-separated list)."
            ) from None
        return start

    # --- pages --------------------------------------------------------------------------------------------------

    def new_game(
        self, request: HttpRequest, version: ScenarioVersion, *, seed: int, model: str | None
    ) -> HttpResponse:
        from .pages import new_game

        return new_game(request, version, model=model)

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

    # --- the work budget (services/work_budget.py) -------------------------------------------------------------

    def work_estimate(self, game: Game, config: dict[str, Any]) -> WorkEstimate:
        from simulations.services.model_choice import game_specs

        from .estimate import run_estimate

        return run_estimate(Config.model_validate(config), offline=game_specs(game)[0].offline)

    # --- the export and downloads (export.py, report.py) -----------------------------------------------------

    @property
    def export_model(self) -> type[SimulationExport]:
        from .export import MessageLabExport

        return MessageLabExport

    def export(self, game: Game) -> SimulationExport:
        from .export import build

        return build(game)

    def start_options(self, doc: SimulationExport) -> dict[str, Any]:
        from .export import MessageLabExport

        assert isinstance(doc, MessageLabExport)
        return {"config": doc.message_lab.config.model_dump(mode="json")}

    def reader_view(self, doc: SimulationExport) -> SimulationExport:
        return doc  # nothing in a panel's work is private to anyone: the player sees every card and critique

    def export_markdown(self, game: Game) -> str:
        from .export import markdown

        return markdown(game)

    def download(self, game: Game, fmt: str) -> tuple[str, str, str] | None:
        from .export import download

        return download(game, fmt)

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
        from .turns import play_headless

        return play_headless(game, on_progress=on_progress)


def _side_by_side(game: Game) -> Any:
    """A parallel stage's streams: one relay per persona, each filling its own box on the page."""
    from simulations.kinds import kind_of
    from simulations.services.drive import StreamRelay

    from .games import scenario_of

    scenario, kind = scenario_of(game), kind_of(game)

    def relays(req: prompts.Request) -> tuple[ChunkSink, Callable[[], None], Callable[[], None]]:
        relay = StreamRelay(
            game_id=game.pk, speaker=scenario.persona(req.unit.persona).name, kind=kind, slot=req.unit.persona
        )
        return relay.chunk, relay.restart, relay.close

    return relays


KIND: Kind = MessageLab()  # mypy checks the class against the contract
