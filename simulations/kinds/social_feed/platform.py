"""Social-feed runs as the platform sees them: scenarios from YAML files declaring `kind: social_feed`, the
machine's outcomes in the ledger's terms (a block of rounds per committed step, its decisions as the event's
changes), the driver's AI step (turns.py), the pages (pages.py, presenters.py, templates/social_feed/), the export
and downloads (export.py)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simulations.engine.scenario_files import declared_kind
from simulations.kinds import Actor, Advance, ChunkSink, Kind, LedgerEvent, NextStep, ScenarioSource

from . import machine
from .config import SocialFeedScenario, load_scenario
from .machine import Outcome, RunConfig, RunState, Status, Step

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

    from simulations.authoring import FieldSpec
    from simulations.models import Game, ScenarioVersion
    from simulations.services.export_schema import SimulationExport
    from simulations.services.work_budget import WorkEstimate


def _advance(out: Outcome) -> Advance:
    state = out.state
    event = LedgerEvent(seq=out.seq, name=out.event.value, source=out.source, target=out.target, actor="system",
                        payload=out.payload, changes=tuple(out.decisions))  # fmt: skip
    return Advance(
        events=(event,), state=state.model_dump(mode="json"), phase=state.status.value, human_role="",
        finished=state.status is Status.FINISHED, schema_version=state.schema_version, transcript_seq=0,
    )  # fmt: skip


def _source(scenario: SocialFeedScenario) -> ScenarioSource:
    document = scenario.model_dump(mode="json")
    digest = hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()
    return ScenarioSource(slug=scenario.slug, title=scenario.title, content_hash=digest, document=document,
                          model=scenario)  # fmt: skip


class SocialFeed:
    name = "social_feed"
    title = "Social feed"
    blurb_field = "summary"
    after_finish_events: frozenset[str] = frozenset()

    def read_scenarios(self, path: Path) -> list[ScenarioSource]:
        files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
        return [_source(load_scenario(file)) for file in files if declared_kind(file) == self.name]

    def parse_scenario(self, document: dict[str, Any]) -> SocialFeedScenario:
        return SocialFeedScenario.model_validate(document)

    def source_of(self, document: dict[str, Any]) -> ScenarioSource:
        return _source(SocialFeedScenario.model_validate(document))

    def index_scenario(self, version: ScenarioVersion, scenario: SocialFeedScenario) -> None:
        return None

    def start(self, scenario: SocialFeedScenario, *, seed: int, options: dict[str, Any]) -> Advance:
        at = str(options.get("started_at") or datetime.now(UTC).isoformat(timespec="seconds"))
        return _advance(
            machine.start(
                scenario, seed=seed, config=machine.config_from_options(scenario, options), timestamp=at
            )
        )

    def advance(
        self, scenario: SocialFeedScenario, state: dict[str, Any], event: str, payload: dict[str, Any]
    ) -> Advance:
        return _advance(machine.apply(scenario, machine.restore(state), event, payload))

    def restore(self, scenario: SocialFeedScenario, state: dict[str, Any]) -> RunState:
        return machine.restore(state)

    def next_step(self, game: Game) -> NextStep:
        from .games import state_of

        step = machine.next_step(state_of(game))
        actor = {"ai": Actor.AI, "human": Actor.HUMAN, "done": Actor.DONE}[step.actor]
        return NextStep(actor=actor, speaker="The feed" if actor is Actor.AI else "", detail=step)

    def play_ai_step(
        self, game: Game, step: NextStep, *, on_chunk: ChunkSink | None, on_restart: Callable[[], None] | None
    ) -> Game:
        from .turns import play_ai_step

        assert isinstance(step.detail, Step)
        return play_ai_step(game, step.detail)

    def stream_view(self, text: str) -> str:
        return ""  # nothing streams: a block of rounds commits whole

    def offline_reply(self, messages: Sequence[dict[str, Any]]) -> str | None:
        return None  # the offline reasoner runs in-process (turns.py)

    def phase_label(self, phase: str) -> str:
        from .presenters import status_words

        return status_words(phase)

    # --- the admin ----------------------------------------------------------------------------------------------

    def preview(self, scenario: SocialFeedScenario) -> str:
        from django.template.loader import render_to_string

        return render_to_string("social_feed/preview.html", {"scenario": scenario})

    def rehearsal(self, scenario: SocialFeedScenario) -> tuple[str | None, dict[str, Any]]:
        return None, {"max_rounds": min(10, scenario.config.max_rounds)}

    def authoring_fields(self, document: dict[str, Any]) -> list[FieldSpec]:
        from simulations.authoring import FieldSpec

        return [
            FieldSpec("Scenario", ("title",), "Title", "text"),
            FieldSpec("Scenario", ("summary",), "Summary (the lobby's sentence)", "long_text"),
            FieldSpec("Run", ("config", "max_rounds"), "Rounds", "integer", minimum=1),
            FieldSpec("Run", ("config", "checkpoint_frequency"), "Checkpoint every N rounds", "integer", minimum=1),
            FieldSpec("Run", ("config", "reasoner_enabled"), "Ask the reasoner when guards leave a choice", "flag"),
        ]  # fmt: skip

    # --- the work budget (services/work_budget.py) -------------------------------------------------------------

    def work_estimate(self, game: Game, config: dict[str, Any]) -> WorkEstimate:
        from simulations.services.model_choice import game_specs

        from .estimate import run_estimate
        from .games import scenario_of

        return run_estimate(
            scenario_of(game), RunConfig.model_validate(config), offline=game_specs(game)[0].offline
        )

    # --- the command line ---------------------------------------------------------------------------------------

    def cli_options(self, *, role: str | None, human: str | None, options: dict[str, str]) -> dict[str, Any]:
        if role or human not in (None, "offline"):
            raise ValueError("A social-feed run has no seat to play: the agents are all simulated.")
        unknown = set(options) - {"agents", "max_rounds", "checkpoint_frequency", "reasoner_enabled"}
        if unknown:
            raise ValueError(f"Unknown option(s) {', '.join(sorted(unknown))}: use agents, max_rounds, "
                             "checkpoint_frequency, reasoner_enabled.")  # fmt: skip
        start: dict[str, Any] = {k: int(v) for k, v in options.items() if k != "reasoner_enabled"}
        if "reasoner_enabled" in options:
            start["reasoner_enabled"] = options["reasoner_enabled"].lower() in ("1", "true", "yes", "on")
        return start

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

    # --- pages --------------------------------------------------------------------------------------------------

    def new_game(
        self, request: HttpRequest, version: ScenarioVersion, *, seed: int, model: str | None
    ) -> HttpResponse:
        from django.shortcuts import redirect
        from django.urls import reverse

        url = reverse("social_feed_setup", args=[version.pk])
        return redirect(f"{url}?model={model}" if model else url)

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

        return render_update(game)

    def review(self, request: HttpRequest, game: Game) -> HttpResponse:
        from .pages import review

        return review(request, game)

    # --- the export ---------------------------------------------------------------------------------------------

    @property
    def export_model(self) -> type[SimulationExport]:
        from .export import SocialFeedExport

        return SocialFeedExport

    def export(self, game: Game) -> SimulationExport:
        from .export import build

        return build(game)

    def start_options(self, doc: SimulationExport) -> dict[str, Any]:
        from .export import SocialFeedExport

        assert isinstance(doc, SocialFeedExport)
        return {
            "config": doc.social_feed.config.model_dump(mode="json"),
            "started_at": doc.social_feed.started_at,
        }

    def reader_view(self, doc: SimulationExport) -> SimulationExport:
        return doc

    def export_markdown(self, game: Game) -> str:
        from .export import markdown

        return markdown(game)

    def download(self, game: Game, fmt: str) -> tuple[str, str, str] | None:
        from .export import download

        return download(game, fmt)


KIND: Kind = SocialFeed()  # mypy checks the class against the contract
