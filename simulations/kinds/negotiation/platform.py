"""The negotiation kind as the platform sees it: `KIND` answers the ledger's, the driver's, the consumer's and the
offline model's questions from the negotiation machine's table and services."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
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
from simulations.kinds.negotiation.machine import Event, Status

from . import machine, offline_writer, prompts
from .games import committed_state
from .machine import Outcome, Step
from .scenario import Scenario, load_scenario_dir
from .state import GameState

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

    from simulations.authoring import FieldSpec
    from simulations.models import Game, ScenarioVersion
    from simulations.services.export_schema import SimulationExport

log = logging.getLogger("simulations.services.turns")

# The machine's step kinds in the platform's terms: "advance" is a step the student's page confirms; "system"
# steps are taken inside the commit that reaches them, so a stored game never rests on one.
_ACTORS = {
    "ai": Actor.AI,
    "human": Actor.HUMAN,
    "advance": Actor.SYSTEM,
    "system": Actor.SYSTEM,
    "done": Actor.DONE,
}


def run(
    scenario: Scenario, state: GameState, event: str, payload: dict[str, Any], *, own: bool = False
) -> list[Outcome]:
    """The event, then every system event the machine takes on its own until someone must decide. An AI vote
    also casts the AI votes right after it: a vote is the rules' (no model call, nothing to stream or wait for),
    so one commit records the run of them, each still its own event by its own seat (the human's vote, or the
    tally, ends the run). A vote a commit each was a fifth of a game's commits. `own`: `state` is the caller's
    own copy, which the run may change (see `machine.apply`)."""
    outcomes = [machine.apply(scenario, state, event, payload, own=own)]
    while True:
        step = machine.next_step(scenario, outcomes[-1].state)
        voting_on = event == Event.AI_VOTE_COMMITTED and step.events == (Event.AI_VOTE_COMMITTED,)
        if step.kind != "system" and not voting_on:
            return outcomes
        # The last outcome's state is this run's own copy, and only the final state leaves the run (`_advance`).
        outcomes.append(machine.apply(scenario, outcomes[-1].state, step.events[0], own=True))


def ledger_events(outcomes: Sequence[Outcome]) -> tuple[LedgerEvent, ...]:
    return tuple(
        LedgerEvent(
            seq=o.seq, name=str(o.event), source=str(o.source), target=str(o.target), actor=o.actor, payload=o.payload,
            entries=tuple(
                LedgerEntry(
                    seq=e.seq, round=e.round, phase=e.phase, issue=e.issue or "", speaker=e.speaker, kind=e.kind,
                    visibility=e.visibility, audience=tuple(e.audience), text=e.text,
                )
                for e in o.entries
            ),
            changes=tuple(c.as_dict() for c in o.stance_changes),
            vote=o.vote,
        )
        for o in outcomes
    )  # fmt: skip


def _advance(outcomes: list[Outcome]) -> Advance:
    for outcome in outcomes:
        for seq, judgement in outcome.judgements:
            if judgement.source == "fallback":  # also in the export's judge_readings, with this note
                log.warning("entry %s: judged by the rules: %s", seq, judgement.note)
    final = outcomes[-1].state
    return Advance(
        events=ledger_events(outcomes), state=committed_state(final), phase=str(final.status),
        human_role=final.human_role or "", finished=final.status == Status.REVIEW, schema_version=final.schema_version,
        transcript_seq=final.transcript_seq,
    )  # fmt: skip


def _source(scenario: Scenario) -> ScenarioSource:
    return ScenarioSource(
        slug=scenario.slug, title=scenario.title, content_hash=scenario.content_hash(),
        document=scenario.model_dump(mode="json"), model=scenario,
    )  # fmt: skip


class Negotiation:
    name = "negotiation"
    title = "Treaty negotiation"
    blurb_field = "summary"
    # The game is finished (REVIEW) when the last vote is counted; the debrief's summary is written after.
    after_finish_events: frozenset[str] = frozenset({Event.AI_SUMMARY_READY})

    def read_scenarios(self, path: Path) -> list[ScenarioSource]:
        if not (path.is_dir() and (path / "chair.yaml").is_file()):
            return []  # a negotiation is a folder with a chair.yaml (docs/scenario-format.md)
        return [_source(load_scenario_dir(path))]

    def authoring_fields(self, document: dict[str, Any]) -> list[FieldSpec]:
        from .authoring import authoring_fields

        return authoring_fields(document)

    def source_of(self, document: dict[str, Any]) -> ScenarioSource:
        return _source(Scenario.model_validate(document))

    def rehearsal(self, scenario: Scenario) -> tuple[str | None, dict[str, Any]]:
        return scenario.voters[0], {}  # a passive student in the first voting seat: the delegations decide

    def preview(self, scenario: Scenario) -> str:
        from .preview import render_preview

        return render_preview(scenario)

    def index_scenario(self, version: ScenarioVersion, scenario: Scenario) -> None:
        from simulations.models import ScenarioIssue, ScenarioRole

        ScenarioRole.objects.bulk_create(
            ScenarioRole(
                scenario=version, role_id=r.id, name=r.name, kind=r.kind, votes=r.votes,
                public_brief=r.public_brief, position=n,
            )
            for n, r in enumerate(scenario.roles)
        )  # fmt: skip
        ScenarioIssue.objects.bulk_create(
            ScenarioIssue(
                scenario=version, issue_id=i.id, title=i.title, position=n,
                options=[o.model_dump() for o in i.options],
            )
            for n, i in enumerate(scenario.issues)
        )  # fmt: skip

    def parse_scenario(self, document: dict[str, Any]) -> Scenario:
        return Scenario.model_validate(document)

    def start(self, scenario: Scenario, *, seed: int, options: dict[str, Any]) -> Advance:
        if options:
            raise ValueError(f"a negotiation takes no start options (got {sorted(options)})")
        return _advance(run(scenario, machine.new_game(seed), Event.NEW_GAME_CREATED, {}, own=True))

    def advance(
        self, scenario: Scenario, state: dict[str, Any], event: str, payload: dict[str, Any]
    ) -> Advance:
        # The run's own copy, read from the stored dict: `machine.apply` would otherwise copy the parsed state by
        # dumping and reading it again, and a state read from the database would be read twice.
        return _advance(run(scenario, GameState.model_validate(state), event, payload, own=True))

    def restore(self, scenario: Scenario, state: dict[str, Any]) -> GameState:
        return machine.resume(scenario, state)

    def next_step(self, game: Game) -> NextStep:
        from .games import scenario_of, step_of

        step = step_of(game)
        actor = _ACTORS[step.kind]
        markdown = False
        if actor is Actor.DONE:
            speaker = ""
        elif step.role:
            speaker = scenario_of(game).display_name(step.role)
        else:
            # The one AI step with no seat: the debrief's summary, written in Markdown sections.
            speaker, markdown = "The debrief", True
        return NextStep(actor=actor, speaker=speaker, detail=step, markdown=markdown)

    def play_ai_step(
        self, game: Game, step: NextStep, *, on_chunk: ChunkSink | None, on_restart: Callable[[], None] | None
    ) -> Game:
        from simulations.kinds.negotiation.ai_turns import play_ai_step

        assert isinstance(step.detail, Step)
        return play_ai_step(game=game, step=step.detail, on_chunk=on_chunk, on_restart=on_restart)

    def stream_view(self, text: str) -> str:
        return "" if prompts.PASS.startswith(text.strip().upper()) else text

    def offline_reply(self, messages: Sequence[dict[str, Any]]) -> str | None:
        try:
            facts = prompts.read_facts(list(messages))
        except ValueError:
            return None  # not a negotiation prompt
        return offline_writer.write(facts)

    # --- pages (pages.py, presenters.py, templates/negotiation/) ---------------------------------------------

    def phase_label(self, phase: str) -> str:
        from .presenters import phase_label

        return phase_label(phase)

    def new_game(
        self, request: HttpRequest, version: ScenarioVersion, *, seed: int, model: str | None
    ) -> HttpResponse:
        from django.shortcuts import redirect

        from simulations.services.turns import create_game

        game = create_game(scenario_version=version, seed=seed, owner=request.user, model=model)  # type: ignore[arg-type]
        return redirect("game", game_id=game.pk)  # it opens on the choice of a delegation

    def page(self, request: HttpRequest, game: Game) -> HttpResponse:
        from .pages import page

        return page(request, game)

    def move(self, request: HttpRequest, game: Game) -> HttpResponse:
        from .pages import move

        return move(request, game)

    def socket_move(self, game: Game, *, user_id: int, fields: Mapping[str, str]) -> tuple[str, Game]:
        from .pages import take_move

        outcome = take_move(game=game, user_id=user_id, fields=fields)
        return outcome.error, outcome.game

    def render_update(
        self, game: Game, *, since_seq: int, full: bool, shown: dict[str, str] | None = None
    ) -> tuple[str, int]:
        from .presenters import render_update

        return render_update(game, since_seq=since_seq, full=full, shown=shown)

    def review(self, request: HttpRequest, game: Game) -> HttpResponse:
        from .review_page import review

        return review(request, game)

    # --- the command line --------------------------------------------------------------------------------------

    def cli_options(self, *, role: str | None, human: str | None, options: dict[str, str]) -> dict[str, Any]:
        from .bots import make_policy

        if options:
            raise ValueError(f"A negotiation takes no --option (got {', '.join(sorted(options))}).")
        if not role:
            raise ValueError("--role is required for a new game.")
        make_policy(human or "passive", role)  # refuses an unknown bot or script before the game exists
        return {}

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
        from .bots import describe_policy, make_policy, policy_from_record, policy_record
        from .play import play_game

        if not role:
            raise ValueError("--role is required for a new game.")
        stored = game.human_policy or {}
        if not resumed:
            policy = make_policy(human or "passive", role)
        elif human:
            policy = make_policy(human, role)
            if stored and policy_record(policy) != stored:
                say(
                    f"Game {game.pk} was played with --human {describe_policy(stored)}; "
                    f"continuing with --human {human} as asked."
                )
        elif stored:
            try:
                policy = policy_from_record(stored, role)
            except ValueError as exc:
                raise ValueError(f"Game {game.pk}: {exc}.") from exc
        else:
            say(f"Game {game.pk} has no stored student; continuing with --human passive.")
            policy = make_policy("passive", role)
        return play_game(game_id=game.pk, policy=policy, on_progress=on_progress)

    @property
    def export_model(self) -> type[SimulationExport]:
        from .export import NegotiationExport

        return NegotiationExport

    def export(self, game: Game) -> SimulationExport:
        from .export import build

        return build(game)

    def start_options(self, doc: SimulationExport) -> dict[str, Any]:
        return {}  # a negotiation starts the same for everyone: the student's seat is its first event

    def reader_view(self, doc: SimulationExport) -> SimulationExport:
        from .export import NegotiationExport, hide_running

        assert isinstance(doc, NegotiationExport)
        return hide_running(doc)

    def export_markdown(self, game: Game) -> str:
        from .export import markdown

        return markdown(game)

    def download(self, game: Game, fmt: str) -> tuple[str, str, str] | None:
        return None  # the platform's JSON and Markdown exports are the negotiation's


KIND: Kind = Negotiation()  # mypy checks the class against the contract
