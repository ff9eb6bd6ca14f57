"""What most kinds share, so that a kind's `platform.py` holds only what is its own: `KindBase` (the defaults of
the `Kind` contract and its four parts, each a module of the kind imported when first asked for) and
`ScenarioFiles` (scenario files read, validated and hashed)."""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from simulations.engine.scenario_files import declared_kind

from .contract import Actor, ChunkSink, NextStep, Outcomes, Restart, ScenarioSource

if TYPE_CHECKING:
    from pydantic import BaseModel

    from simulations.models import Game, ScenarioVersion
    from simulations.services.play.work_budget import WorkEstimate

    from .contract import KindAdmin, KindExports, KindHeadless, KindPages


def content_hash(document: dict[str, Any]) -> str:
    """A scenario document's hash: the same content, however its keys are ordered, the same hash."""
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()


class ScenarioFiles:
    """A kind's scenarios as YAML files declaring `kind: <name>` (one file a scenario, or a folder of them), each
    stored as its model's JSON and hashed by content. A kind with another format overrides `read`; `slug_of` names
    the field that identifies a scenario."""

    def __init__(
        self, kind: str, model: type[BaseModel], load: Callable[[Path], Any], *, blurb_field: str
    ) -> None:
        self.kind, self.model, self.load, self.blurb_field = kind, model, load, blurb_field

    def read(self, path: Path) -> list[ScenarioSource]:
        files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
        return [self.source(self.load(file)) for file in files if self.declares_me(file)]

    def declares_me(self, file: Path) -> bool:
        return declared_kind(file) == self.kind

    def parse(self, document: dict[str, Any]) -> Any:
        return self.model.model_validate(document)

    def source_of(self, document: dict[str, Any]) -> ScenarioSource:
        return self.source(self.parse(document))

    def source(self, scenario: Any) -> ScenarioSource:
        """A validated scenario, ready to store."""
        document = scenario.model_dump(mode="json")
        return ScenarioSource(
            slug=self.slug_of(scenario), title=scenario.title, content_hash=content_hash(document),
            document=document, model=scenario,
        )  # fmt: skip

    def slug_of(self, scenario: Any) -> str:
        return str(scenario.slug)

    def index(self, version: ScenarioVersion, scenario: Any) -> None:
        return None  # the admin shows the document itself

    def bare_document(self, document: Any) -> bool:
        return False  # stored in the scenario file's `{kind, scenario}` envelope only


class _Part:
    """A part of a kind kept in a module of its own, imported when first asked for: the registry is also read where
    Django is not set up (the offline model from a plain script), and a page module needs it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, kind: object, owner: type) -> ModuleType:
        package = owner.__module__.rpartition(".")[0]
        return importlib.import_module(f"{package}.{self.name}")


class KindBase:
    """The defaults of the `Kind` contract. A subclass sets `name`, `title` and `scenarios` and answers the
    machine's questions; its parts are its modules `authoring` (admin), `pages`, `export` and `headless`."""

    after_finish_events: frozenset[str] = frozenset()
    admin: KindAdmin = _Part("authoring")  # type: ignore[assignment]
    pages: KindPages = _Part("pages")  # type: ignore[assignment]
    exports: KindExports = _Part("export")  # type: ignore[assignment]
    headless: KindHeadless = _Part("headless")  # type: ignore[assignment]

    def play_ai_step(
        self, game: Game, step: NextStep, *, on_chunk: ChunkSink | None, on_restart: Restart | None
    ) -> Game:
        """The kind's `turns.play_ai_step` plays the step (its machine's own step object, `step.detail`)."""
        turns = importlib.import_module(f"{type(self).__module__.rpartition('.')[0]}.turns")
        game = turns.play_ai_step(game=game, step=step.detail, on_chunk=on_chunk, on_restart=on_restart)
        return game

    def work_estimate(self, game: Game, config: dict[str, Any]) -> WorkEstimate | None:
        return None  # the student moves the game: no background run

    def stream_view(self, text: str) -> str:
        return text

    def outcomes(self, game: Game) -> Outcomes:
        return Outcomes()  # no verdict, no aims: a class's results show where the game stands


def platform_step(step: Any, speaker: Callable[[], str]) -> NextStep:
    """A machine's step (with `done`, and `actor` "human" for the user's) in the platform's terms; `speaker` names
    the AI that acts."""
    if step.done:
        return NextStep(actor=Actor.DONE, detail=step)
    if step.actor == "human":
        return NextStep(actor=Actor.HUMAN, detail=step)
    return NextStep(actor=Actor.AI, speaker=speaker(), detail=step)


def check_parts(admin: KindAdmin, pages: KindPages, exports: KindExports, headless: KindHeadless) -> None:
    """Called only under `TYPE_CHECKING` in each kind's `platform.py`: mypy checks the kind's part modules against
    their protocols (`contract.py`)."""
