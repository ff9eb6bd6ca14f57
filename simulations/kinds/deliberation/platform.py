"""The deliberation kind as the platform sees it: `KIND` plays a code-review committee through the shared ledger,
driver and offline model.

Who acts comes from the machine's table (`machine.next_step`). The chairperson's steps (tabling the code, closing a
round, concluding) are taken inside the commit that reaches them, as the negotiation's system steps are: they follow
from the guards and need no model. Members and the business driver are AI steps: a model call whose JSON reply is
validated twice (the reply model, then the machine's payload and guards). The AI proposer answers a veto without a
model: with the sample's amended code when the sample has one (checked by the real tools first), else it declines.
"""

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

from . import checks, machine, offline, prompts
from .machine import Outcome, Step
from .offline_facts import offline_answer
from .scenario import DeliberationScenario, load_scenario
from .state import DeliberationState, State, Submission

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

    from simulations.authoring import FieldSpec
    from simulations.models import Game, ScenarioVersion
    from simulations.services.export_schema import SimulationExport


# --- the machine, in the ledger's terms -------------------------------------------------------------------------


def run_chair(scenario: DeliberationScenario, outcomes: list[Outcome]) -> list[Outcome]:
    """After a move: every chairperson step the table opens, until a member, the proposer, the business driver
    or nobody (CONCLUSION) holds the floor."""
    while True:
        state = outcomes[-1].state
        step = machine.next_step(scenario, state)
        if step.done or step.actor != machine.Actor.CHAIR:
            return outcomes
        move = offline.decide(scenario, state, step)
        outcomes.append(machine.apply(scenario, state, move.event, move.payload))


def _ledger(outcomes: Sequence[Outcome]) -> tuple[LedgerEvent, ...]:
    events = []
    for o in outcomes:
        first = (
            len(o.state.log) - len(o.entries) + 1
        )  # the log is cumulative: its index is the transcript seq
        entries = tuple(
            LedgerEntry(
                seq=first + n, round=e.round, phase=e.state.value, speaker=e.speaker, kind=e.kind, text=e.text
            )
            for n, e in enumerate(o.entries)
        )
        events.append(
            LedgerEvent(
                seq=o.seq,
                name=o.event.value,
                source=o.source.value,
                target=o.target.value,
                actor=o.seat or "",
                payload=o.payload,
                entries=entries,
            )  # fmt: skip
        )
    return tuple(events)


def _advance(outcomes: list[Outcome]) -> Advance:
    final = outcomes[-1].state
    return Advance(
        events=_ledger(outcomes), state=final.model_dump(mode="json"), phase=final.status.value,
        human_role=final.human_seat or "", finished=final.status == State.CONCLUSION,
        schema_version=final.schema_version, transcript_seq=len(final.log),
    )  # fmt: skip


def start_submission(scenario: DeliberationScenario, options: dict[str, Any]) -> Any:
    """The first submission, checked by the real tools: a sample, or pasted/uploaded code or a unified diff; or, for
    an import, the exported first submission as it was checked then. Raises `checks.CheckError` (the message says
    what is wrong with the input)."""
    if options.get("submission"):
        return Submission.model_validate(options["submission"])
    if options.get("sample"):
        try:
            return checks.check_sample(scenario, str(options["sample"]))
        except KeyError:
            raise checks.CheckError(f"There is no sample {options['sample']!r}.") from None
    source = options.get("source", "paste")
    if source not in ("paste", "file", "diff"):
        raise checks.CheckError("Submit code by pasting it, uploading a file or a unified diff.")
    data = options.get("code", "")
    filename = str(options.get("filename") or "submission.py")
    report = checks.run_checks(scenario, data=data, source=source, filename=filename)
    return report.submission(source=source, label=report.filename)


# --- the offline model's side ------------------------------------------------------------------------------------


# --- the kind -----------------------------------------------------------------------------------------------------


def _source(scenario: DeliberationScenario) -> ScenarioSource:
    document = scenario.model_dump(mode="json")
    digest = hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()
    return ScenarioSource(
        slug=scenario.id, title=scenario.title, content_hash=digest, document=document, model=scenario
    )


class Deliberation:
    name = "deliberation"
    title = "Code review committee"
    blurb_field = "description"
    after_finish_events: frozenset[str] = frozenset()

    def read_scenarios(self, path: Path) -> list[ScenarioSource]:
        """A committee is one YAML file with `personas`: that file, or every such file of a folder."""
        if path.is_dir():
            if (path / "chair.yaml").exists():
                return []  # a negotiation's folder
            files = sorted(path.glob("*.yaml"))
        else:
            files = [path] if path.suffix in (".yaml", ".yml") else []
        # A file declaring another kind (`kind: message_lab`) is that kind's; a committee declares none.
        return [_source(load_scenario(file)) for file in files if declared_kind(file) in (None, self.name)]

    def authoring_fields(self, document: dict[str, Any]) -> list[FieldSpec]:
        from .authoring import authoring_fields

        return authoring_fields(document)

    def source_of(self, document: dict[str, Any]) -> ScenarioSource:
        return _source(DeliberationScenario.model_validate(document))

    def rehearsal(self, scenario: DeliberationScenario) -> tuple[str | None, dict[str, Any]]:
        if not scenario.samples:
            raise ValueError("a rehearsal reviews the scenario's first sample; add one")
        return None, {"sample": scenario.samples[0].id}  # everyone played by the personas

    def preview(self, scenario: DeliberationScenario) -> str:
        from django.template.loader import render_to_string

        from .presenters import ROLE_NAMES

        personas = [(p, ROLE_NAMES[p.role]) for p in scenario.personas]
        return render_to_string("deliberation/preview.html", {"scenario": scenario, "personas": personas})

    def index_scenario(self, version: ScenarioVersion, scenario: DeliberationScenario) -> None:
        return None  # the admin shows the document itself; personas have no rows of their own

    def parse_scenario(self, document: dict[str, Any]) -> DeliberationScenario:
        return DeliberationScenario.model_validate(document)

    def start(self, scenario: DeliberationScenario, *, seed: int, options: dict[str, Any]) -> Advance:
        submission = start_submission(scenario, options)
        seat = options.get("seat") or None
        state = machine.new_deliberation(scenario, seed=seed, submission=submission, human_seat=seat)
        step = machine.next_step(scenario, state)
        move = offline.decide(scenario, state, step)  # the chair tables the code
        return _advance(run_chair(scenario, [machine.apply(scenario, state, move.event, move.payload)]))

    def advance(
        self, scenario: DeliberationScenario, state: dict[str, Any], event: str, payload: dict[str, Any]
    ) -> Advance:
        current = machine.restore(state)
        return _advance(run_chair(scenario, [machine.apply(scenario, current, event, payload)]))

    def restore(self, scenario: DeliberationScenario, state: dict[str, Any]) -> DeliberationState:
        return machine.restore(state)

    def next_step(self, game: Game) -> NextStep:
        from .games import scenario_of, state_of

        scenario, state = scenario_of(game), state_of(game)
        step = machine.next_step(scenario, state)
        if step.done:
            return NextStep(actor=Actor.DONE, detail=step)
        speaker = scenario.persona(step.seat).label if step.seat else ""
        return NextStep(actor=Actor.HUMAN if step.human else Actor.AI, speaker=speaker, detail=step)

    def play_ai_step(
        self, game: Game, step: NextStep, *, on_chunk: ChunkSink | None, on_restart: Callable[[], None] | None
    ) -> Game:
        from .turns import play_ai_step

        assert isinstance(step.detail, Step)
        return play_ai_step(game=game, step=step.detail, on_chunk=on_chunk, on_restart=on_restart)

    # --- the command line --------------------------------------------------------------------------------------

    def cli_options(self, *, role: str | None, human: str | None, options: dict[str, str]) -> dict[str, Any]:
        if human not in (None, "offline"):
            raise ValueError(
                "In a deliberation the bot in your seat is the offline persona: --human offline."
            )
        unknown = set(options) - {"sample", "file", "diff"}
        if unknown or len(options) != 1:
            raise ValueError("A deliberation starts from one --option: sample=ID, file=PATH or diff=PATH.")
        ((key, value),) = options.items()
        start: dict[str, Any] = {"seat": role}
        if key == "sample":
            start["sample"] = value
        else:
            try:
                data = Path(value).read_bytes()
            except OSError as exc:
                raise ValueError(f"Cannot read {value}: {exc.strerror}.") from exc
            start |= {"code": data, "filename": Path(value).name, "source": key}
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

    # --- the export ------------------------------------------------------------------------------------------

    @property
    def export_model(self) -> type[SimulationExport]:
        from .export import DeliberationExport

        return DeliberationExport

    def export(self, game: Game) -> SimulationExport:
        from .export import build

        return build(game)

    def start_options(self, doc: SimulationExport) -> dict[str, Any]:
        from .export import DeliberationExport

        assert isinstance(doc, DeliberationExport)
        section = doc.deliberation
        return {"submission": section.submissions[0].model_dump(mode="json"), "seat": section.human_seat}

    def reader_view(self, doc: SimulationExport) -> SimulationExport:
        return doc  # nothing is hidden in a committee: every opinion is given in the open

    def export_markdown(self, game: Game) -> str:
        from .export import markdown

        return markdown(game)

    def stream_view(self, text: str) -> str:
        return prompts.streamed_text(text)

    def offline_reply(self, messages: Sequence[dict[str, Any]]) -> str | None:
        return offline_answer(messages)

    # --- pages (pages.py, presenters.py, forms.py; simulations/kinds/deliberation/templates/deliberation/) ------------------------------------

    def phase_label(self, phase: str) -> str:
        from .presenters import phase_label

        return phase_label(phase)

    def new_game(
        self, request: HttpRequest, version: ScenarioVersion, *, seed: int, model: str | None
    ) -> HttpResponse:
        from .pages import new_game

        return new_game(request, version, model=model)  # the set-up form draws its own seed when it creates

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

    def download(self, game: Game, fmt: str) -> tuple[str, str, str] | None:
        from .pages import download

        return download(game, fmt)


KIND: Kind = Deliberation()  # mypy checks the class against the contract
