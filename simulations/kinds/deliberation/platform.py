"""The deliberation kind as the platform sees it: `KIND` plays a code-review committee through the shared ledger,
driver and offline model.

Who acts comes from the machine's table (`machine.next_step`). The chairperson's steps (tabling the code, closing a
round, concluding) are taken inside the commit that reaches them, as the negotiation's system steps are: they follow
from the guards and need no model. Members and the business driver are AI steps: a model call whose JSON reply is
validated twice (the reply model, then the machine's payload and guards). The AI proposer answers a veto without a
model: with the sample's amended code when the sample has one (checked by the real tools first), else it declines.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simulations.engine.scenario_files import declared_kind
from simulations.kinds import (
    Actor,
    Advance,
    Kind,
    LedgerEntry,
    LedgerEvent,
    NextStep,
    Outcomes,
    ScenarioSource,
)
from simulations.kinds.base import KindBase, ScenarioFiles, check_parts

from . import checks, machine, offline, prompts
from .machine import Outcome
from .offline_facts import offline_answer
from .scenario import DeliberationScenario, load_scenario
from .state import DeliberationState, State, Submission

if TYPE_CHECKING:
    from simulations.models import Game, ScenarioVersion

    from . import authoring, export, headless, pages

    check_parts(authoring, pages, export, headless)  # mypy checks each part against its contract


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
                actor=f"stand-in:{o.seat}" if o.payload.get("stand_in") else o.seat or "",
                payload=o.payload,
                entries=entries,
            )  # fmt: skip
        )
    return tuple(events)


def _advance(outcomes: list[Outcome]) -> Advance:
    final = outcomes[-1].state
    return Advance(
        events=_ledger(outcomes), state=final.model_dump(mode="json"), phase=final.status.value,
        human_role=final.human_seat or "", finished=final.status == State.CONCLUSION, other_seats=tuple(final.co_players),
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


class DeliberationScenarios(ScenarioFiles):
    """A committee is one YAML file with `personas`: that file, or every such file of a folder."""

    def read(self, path: Path) -> list[ScenarioSource]:
        if path.is_dir() and (path / "chair.yaml").exists():
            return []  # a negotiation's folder
        files = (
            sorted(path.glob("*.yaml"))
            if path.is_dir()
            else [path]
            if path.suffix in (".yaml", ".yml")
            else []
        )
        return [self.source(load_scenario(file)) for file in files if self.declares_me(file)]

    def declares_me(self, file: Path) -> bool:
        return declared_kind(file) in (None, self.kind)  # a committee declares no kind; others declare theirs

    def slug_of(self, scenario: DeliberationScenario) -> str:
        return scenario.id

    def index(self, version: ScenarioVersion, scenario: DeliberationScenario) -> None:
        """The seats a person may hold (the proposer's, the elected members'), as the rows a class session seats
        its groups' students in."""
        from simulations.models import ScenarioRole

        ScenarioRole.objects.bulk_create(
            ScenarioRole(
                scenario=version, role_id=p.id, name=p.label[:120], votes=p.votes, public_brief=p.brief, position=n,
                kind="proposer" if p.id == scenario.proposer else "member",
            )
            for n, p in enumerate(scenario.personas)
            if p.id in machine.person_seats(scenario)
        )  # fmt: skip


class Deliberation(KindBase):
    name = "deliberation"
    title = "Code review committee"
    scenarios = DeliberationScenarios(
        "deliberation", DeliberationScenario, load_scenario, blurb_field="description"
    )

    def start(self, scenario: DeliberationScenario, *, seed: int, options: dict[str, Any]) -> Advance:
        """`seat`: the person's; or `seats`, a class group's game (the students' seats, the owner's first), which
        reviews the scenario's first sample unless the options name what to review."""
        seats = list(options.get("seats") or [])
        if seats and not any(options.get(k) for k in ("submission", "sample", "code")):
            if not scenario.samples:
                raise checks.CheckError("A group's committee reviews a sample, and this scenario has none.")
            options = {**options, "sample": scenario.samples[0].id}
        submission = start_submission(scenario, options)
        seat = (seats[0] if seats else options.get("seat")) or None
        state = machine.new_deliberation(
            scenario, seed=seed, submission=submission, human_seat=seat, co_players=seats[1:]
        )
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
        """Who acts next; in a class group's game, which student's seat (`seat`), and the seat's AI stand-in
        instead of a student whose seat the teacher handed over or whose turn limit has passed."""
        from simulations.services.ledger.seats import stand_in_due

        from .games import scenario_of, state_of

        scenario, state = scenario_of(game), state_of(game)
        step = machine.next_step(scenario, state)
        if step.done:
            return NextStep(actor=Actor.DONE, detail=step)
        speaker = scenario.persona(step.seat).label if step.seat else ""
        if step.human and step.seat and state.co_players:
            if stand_in_due(game, step.seat):
                return NextStep(
                    actor=Actor.AI, speaker=f"{speaker} (AI stand-in)", detail=step, seat=step.seat
                )
            return NextStep(actor=Actor.HUMAN, speaker=speaker, detail=step, seat=step.seat)
        return NextStep(actor=Actor.HUMAN if step.human else Actor.AI, speaker=speaker, detail=step)

    def stream_view(self, text: str) -> str:
        return prompts.streamed_text(text)

    def offline_reply(self, messages: Sequence[dict[str, Any]]) -> str | None:
        return offline_answer(messages)

    def outcomes(self, game: Game) -> Outcomes:
        """The committee's verdict with its last vote; its seats have no aim of their own to be met."""
        from .games import state_of

        return Outcomes(verdict=verdict_line(state_of(game)))


def verdict_line(state: DeliberationState) -> str:
    """The verdict and the vote that led to it, in a line ("" before the committee concludes)."""
    from .presenters import VERDICT_WORDS
    from .report import CAUSES

    if state.verdict is None:
        return ""
    line = VERDICT_WORDS[state.verdict.value] + (f" ({CAUSES[state.cause]})" if state.cause else "")
    last = next(((r.number, r.quorum) for r in reversed(state.rounds) if r.quorum), None)
    if last is None:
        return line
    number, q = last
    counts = [f"{q.synthesis} of {q.members} members for the change"] + [
        f"{n} {words}"
        for n, words in ((q.objections, "objecting"), (q.veto, "vetoing"), (q.abstain, "abstaining"))
        if n
    ]
    return f"{line} — {', '.join(counts)} in round {number}"


KIND: Kind = Deliberation()  # mypy checks the class against the contract
