"""The negotiation kind as the platform sees it: `KIND` answers the ledger's, the driver's, the consumer's and the
offline model's questions from the negotiation machine's table and services."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simulations.kinds import (
    Actor,
    Advance,
    Kind,
    Lane,
    LedgerEntry,
    LedgerEvent,
    NextStep,
    Outcomes,
    ScenarioSource,
)
from simulations.kinds.base import KindBase, ScenarioFiles, check_parts
from simulations.kinds.negotiation.machine import Event, Status

from . import machine, offline_writer, prompts
from .games import committed_state
from .machine import Outcome
from .scenario import Scenario, load_scenario_dir
from .state import GameState

if TYPE_CHECKING:
    from simulations.models import Game, ScenarioVersion

    from . import authoring, export, headless, pages

    check_parts(authoring, pages, export, headless)  # mypy checks each part against its contract

log = logging.getLogger("simulations.services.ledger.turns")

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
        outcomes.append(
            machine.apply(scenario, outcomes[-1].state, step.events[0], machine.step_payload(step), own=True)
        )


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
        transcript_seq=final.transcript_seq, other_seats=tuple(final.co_players),
    )  # fmt: skip


class NegotiationScenarios(ScenarioFiles):
    """A negotiation is a folder with a chair.yaml (docs/scenario-format.md), hashed by its own content hash; the
    admin lists its roles and issues beside each version."""

    def read(self, path: Path) -> list[ScenarioSource]:
        if not (path.is_dir() and (path / "chair.yaml").is_file()):
            return []
        return [self.source(load_scenario_dir(path))]

    def source(self, scenario: Scenario) -> ScenarioSource:
        return ScenarioSource(
            slug=scenario.slug, title=scenario.title, content_hash=scenario.content_hash(),
            document=scenario.model_dump(mode="json"), model=scenario,
        )  # fmt: skip

    def index(self, version: ScenarioVersion, scenario: Scenario) -> None:
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


class Negotiation(KindBase):
    name = "negotiation"
    title = "Treaty negotiation"
    scenarios = NegotiationScenarios("negotiation", Scenario, load_scenario_dir, blurb_field="summary")
    # The game is finished (REVIEW) when the last vote is counted; the debrief's summary is written after.
    after_finish_events: frozenset[str] = frozenset({Event.AI_SUMMARY_READY})

    def start(self, scenario: Scenario, *, seed: int, options: dict[str, Any]) -> Advance:
        """A new game resting on the choice of a seat; with `seats` (a class group's game: the students' seats,
        the owner's first), those seats confirmed in the same step, each opening as its seat's first."""
        seats = options.get("seats")
        if set(options) - {"seats"} or (seats is not None and not (isinstance(seats, list) and seats)):
            raise ValueError(f"a negotiation takes only a list of seats to start with (got {options!r})")
        outcomes = run(scenario, machine.new_game(seed), Event.NEW_GAME_CREATED, {}, own=True)
        if seats:
            confirmed = {"role": seats[0], "others": list(seats[1:])}
            outcomes += run(scenario, outcomes[-1].state, Event.ROLE_CONFIRMED, confirmed, own=True)
        return _advance(outcomes)

    def advance(
        self, scenario: Scenario, state: dict[str, Any], event: str, payload: dict[str, Any]
    ) -> Advance:
        # The run's own copy, read from the stored dict: `machine.apply` would otherwise copy the parsed state by
        # dumping and reading it again, and a state read from the database would be read twice.
        return _advance(run(scenario, GameState.model_validate(state), event, payload, own=True))

    def restore(self, scenario: Scenario, state: dict[str, Any]) -> GameState:
        return machine.resume(scenario, state)

    def next_step(self, game: Game) -> NextStep:
        """Who acts next; in a class group's game, which student's seat (`seat`), and the AI's stand-in instead of
        a student whose seat the teacher handed over or whose turn limit has passed (services.ledger.seats)."""
        from simulations.services.ledger.seats import stand_in_due

        from .games import scenario_of, state_of, step_of

        step = step_of(game)
        if step.lanes and step.kind != "system":  # a stored game never rests on a system step
            return _lanes_next(game, step)
        actor = _ACTORS[step.kind]
        if actor is Actor.HUMAN and step.role and state_of(game).co_players:
            name = scenario_of(game).display_name(step.role)
            if stand_in_due(game, step.role):
                return NextStep(actor=Actor.AI, speaker=f"{name} (AI stand-in)", detail=step, seat=step.role)
            return NextStep(actor=actor, speaker=name, detail=step, seat=step.role)
        markdown = False
        if actor is Actor.DONE:
            speaker = ""
        elif step.role:
            speaker = scenario_of(game).display_name(step.role)
        else:
            # The one AI step with no seat: the debrief's summary, written in Markdown sections.
            speaker, markdown = "The debrief", True
        audience = _private_to(state_of(game), step.role) if actor is Actor.AI else ()
        return NextStep(actor=actor, speaker=speaker, detail=step, markdown=markdown, audience=audience)

    def stream_view(self, text: str) -> str:
        return "" if prompts.PASS.startswith(text.strip().upper()) else text

    def offline_reply(self, messages: Sequence[dict[str, Any]]) -> str | None:
        try:
            facts = prompts.read_facts(list(messages))
        except ValueError:
            return None  # not a negotiation prompt
        return offline_writer.write(facts)

    def outcomes(self, game: Game) -> Outcomes:
        """Each student's aims per issue and the words that moved positions, from the debrief's facts."""
        from .outcomes import outcomes

        return outcomes(game)


def _private_to(state: GameState, role: str | None, lane: str | None = None) -> tuple[str, ...]:
    """Whose pages may see an AI step's words as they stream: a Round 2 talk's two parties, when the step is one
    of them speaking (in Round 2's lanes, the talk of the step's lane); the first student alone for the debrief
    (theirs only); everyone otherwise."""
    if role is None:
        return (state.human_role,) if state.co_players and state.human_role else ()
    talks = state.round2.conversations
    talk = state.lane_talk(lane) if lane else talks[-1] if talks else None
    if state.status.startswith("ROUND_2") and talk is not None and talk.phase != "CLOSED":
        parties = (state.talker_of(talk) or "", talk.partner)
        if role in parties:
            return parties
    return ()


def _lanes_next(game: Game, step: machine.Step) -> NextStep:
    """Round 2's lanes (a game several students share) in the platform's terms: every student's lane (`lanes`),
    and as the game's one step, the seat's AI stand-in for a student past their turn limit (or whose seat the
    teacher handed over), else an AI partner's reply, else the student who has had the floor longest (whose turn
    limit the platform times: `since`)."""
    from simulations.models import Event as EventRow
    from simulations.services.ledger.seats import stand_in_due

    from .games import scenario_of, state_of

    scenario, state = scenario_of(game), state_of(game)
    lanes = tuple(_lane(scenario, state, lane.seat) for lane in state.round2.lanes)
    waiting = sorted((s for s in step.lanes if s.kind == "human"), key=lambda s: _since(state, s))
    times = dict(
        EventRow.objects.filter(game=game, seq__in=[_since(state, s) for s in waiting]).values_list(
            "seq", "created_at"
        )
    )
    for lane_step in waiting:
        seat, since = str(lane_step.role), times.get(_since(state, lane_step))
        if stand_in_due(game, seat, since=since):
            name = f"{scenario.display_name(seat)} (AI stand-in)"
            lane = str(lane_step.lane)
            return NextStep(actor=Actor.AI, speaker=name, detail=lane_step, seat=seat, lane=lane, lanes=lanes)
    if step.kind == "ai":
        return NextStep(
            actor=Actor.AI, speaker=scenario.display_name(str(step.role)), detail=step, lane=str(step.lane),
            audience=_private_to(state, step.role, step.lane), lanes=lanes,
        )  # fmt: skip
    first = waiting[0]
    seat = str(first.role)
    return NextStep(
        actor=Actor.HUMAN, speaker=scenario.display_name(seat), detail=first, seat=seat,
        since=times.get(_since(state, first)), lanes=lanes,
    )  # fmt: skip


def _since(state: GameState, step: machine.Step) -> int:
    """The event after which the student who moves in `step` got the floor."""
    lane = state.lane(step.role)
    return lane.since if lane is not None else 0


def _lane(scenario: Scenario, state: GameState, seat: str) -> Lane:
    """A student's lane as the teacher's room shows it: whether they have a move, and what it waits for."""
    step = machine.lane_step(state, seat)
    if step is None:
        return Lane(seat, moves=False, doing="the other students' talks (theirs are over)")
    who = scenario.display_name(str(step.role))
    if step.kind == "ai":
        return Lane(seat, moves=False, doing=f"the AI: {who}, in a private talk")
    if step.role != seat:
        return Lane(seat, moves=False, doing=f"another student ({who}), in their private talk")
    if step.purpose == "partner":
        which = "a partner" if step.events == (Event.CONVO_1_STARTED,) else "a second talk, or none"
        return Lane(seat, moves=True, doing=f"this student: choosing {which}")
    talk = state.lane_talk(seat)
    assert talk is not None
    other = talk.partner if talk.partner != seat else state.talker_of(talk)
    return Lane(seat, moves=True, doing=f"this student: writing to {scenario.display_name(str(other))}")


KIND: Kind = Negotiation()  # mypy checks the class against the contract
