"""The chairperson's state machine for a deliberation (seed 004), as one declarative table (pure).

States and events are enums named as the seed names them; every event has a pydantic payload model; guards read
the state (and the scenario's committee); `apply` works on a copy, so a refused event changes nothing, and raises
the engine's typed errors (IllegalEvent names the state and the events allowed there). Who acts next is derived
from the table by `next_step`, never written down a second time.

Reading of the seed where it is silent (kept in one place, here):
- A debate round lets every elected member speak once (in the scenario's order); the chair then closes the round
  by the quorum rules: any veto -> VETO; abstentions present -> ABSTAIN (whose quorum check follows); otherwise
  SYNTHESIS when >= 2/3 agree, else the round ends without consensus.
- "Quorum not met" starts another debate round while rounds remain (the ABSTAIN row's "or DEBATE"); in round 5 it
  concludes INCONCLUSIVE (the quorum table's third row and the round limit).
- In VETO the proposer answers first (amend or decline); then the business driver may offer a cost-of-delay
  compromise where the house rules allow one for every critical finding; if neither moves, the chair declares the
  veto irreconcilable (REQUEST_CHANGES). Amending or a compromise opens a new round, so neither is possible in
  round 5: a veto standing in round 5 ends INCONCLUSIVE by the round limit.
- A member whose confidence is below its threshold abstains whatever stance it asked for (seed row 4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from simulations.engine.errors import IllegalEvent, InvalidMove
from simulations.engine.payloads import PayloadProblems, read_payload, restore_snapshot

from .quorum import (
    MAJORITY_ABSTAIN_WARNING,
    QuorumOutcome,
    QuorumResult,
    check_quorum,
    tally_ballots,
    verdict_for,
)
from .scenario import DeliberationScenario
from .state import (
    MAX_ROUNDS,
    SCHEMA_VERSION,
    Ballot,
    Compromise,
    ConclusionCause,
    DeliberationState,
    LogEntry,
    RoundRecord,
    Stance,
    State,
    Submission,
)

MAX_TEXT_CHARS = 2000
MAX_FIX_ITEMS = 20
ESCALATE_WARNING = "Consensus not reached: escalate to a human reviewer."


class Event(StrEnum):
    TABLE_CODE = "TABLE_CODE"  # PROPOSAL -> DEBATE: the chairperson tables the code
    OPINION_GIVEN = "OPINION_GIVEN"  # DEBATE -> DEBATE: one elected member's turn
    VETO_EXERCISED = "VETO_EXERCISED"  # DEBATE -> VETO: a critical flaw was vetoed
    CONSENSUS_REACHED = "CONSENSUS_REACHED"  # DEBATE -> SYNTHESIS
    ABSTENTION_DECLARED = "ABSTENTION_DECLARED"  # DEBATE -> ABSTAIN
    CONSENSUS_NOT_REACHED = "CONSENSUS_NOT_REACHED"  # DEBATE -> DEBATE (next round)
    AMENDED_CODE_SUBMITTED = "AMENDED_CODE_SUBMITTED"  # VETO -> PROPOSAL (next round)
    AMENDMENT_DECLINED = "AMENDMENT_DECLINED"  # VETO -> VETO: the proposer will not amend
    COMPROMISE_OFFERED = "COMPROMISE_OFFERED"  # VETO -> DEBATE (next round, under its conditions)
    COMPROMISE_DECLINED = "COMPROMISE_DECLINED"  # VETO -> VETO: the business driver has no compromise
    IRRECONCILABLE = "IRRECONCILABLE"  # VETO -> CONCLUSION (REQUEST_CHANGES)
    AGREEMENT_FINALIZED = "AGREEMENT_FINALIZED"  # SYNTHESIS -> CONCLUSION
    QUORUM_MET = "QUORUM_MET"  # ABSTAIN -> CONCLUSION
    QUORUM_NOT_MET = "QUORUM_NOT_MET"  # ABSTAIN -> DEBATE (next round)
    ROUND_LIMIT_REACHED = "ROUND_LIMIT_REACHED"  # DEBATE / VETO / ABSTAIN -> CONCLUSION in round 5


class Actor(StrEnum):
    CHAIR = "chair"
    MEMBER = "member"  # the elected member whose turn it is
    PROPOSER = "proposer"
    BUSINESS_DRIVER = "business_driver"


# --- payloads ---------------------------------------------------------------------------------------------


class Payload(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)
    # Set by the server only (a form or a model reply never carries it): a class group's student's turn played by
    # the seat's AI stand-in (turn limit passed, or the teacher handed the seat over). Marks the words, not the rules.
    stand_in: bool = False


class ChairNote(Payload):
    """The chairperson's mediation line for a transition (optional: the log then says only the transition)."""

    text: str = Field(default="", max_length=MAX_TEXT_CHARS)


class Opinion(Payload):
    seat: str
    stance: Stance
    confidence: float = Field(ge=0.0, le=1.0)
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    fix_items: list[str] = Field(default_factory=list, max_length=MAX_FIX_ITEMS)

    @field_validator("fix_items")
    @classmethod
    def _items_are_short_lines(cls, items: list[str]) -> list[str]:
        cleaned = [" ".join(i.split()) for i in items]
        if any(not i or len(i) > 300 for i in cleaned):
            raise ValueError("each fix item is one non-empty line of at most 300 characters")
        return cleaned


class Amendment(Payload):
    """Amended code, already checked: the machine numbers it as the next version."""

    submission: Submission
    text: str = Field(default="", max_length=MAX_TEXT_CHARS)


class Statement(Payload):
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)


class CompromiseOffer(Payload):
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)  # the cost-of-delay argument
    conditions: list[str] = Field(min_length=1, max_length=10)  # become fix items if the compromise is agreed


# One payload model per event. The chair's closing events carry only its mediation line, the declines a statement;
# each still has its own named model so that an export or a form can say exactly what an event holds.


class TableCode(ChairNote):
    """PROPOSAL -> DEBATE: the chair tables the current submission."""


class VetoExercised(ChairNote):
    """DEBATE -> VETO."""


class ConsensusReached(ChairNote):
    """DEBATE -> SYNTHESIS."""


class AbstentionDeclared(ChairNote):
    """DEBATE -> ABSTAIN."""


class ConsensusNotReached(ChairNote):
    """DEBATE -> DEBATE, next round."""


class AmendmentDeclined(Statement):
    """VETO: the proposer says why it will not amend."""


class CompromiseDeclined(Statement):
    """VETO: the business driver says why it offers no compromise."""


class Irreconcilable(ChairNote):
    """VETO -> CONCLUSION (REQUEST_CHANGES)."""


class AgreementFinalized(ChairNote):
    """SYNTHESIS -> CONCLUSION."""


class QuorumMet(ChairNote):
    """ABSTAIN -> CONCLUSION."""


class QuorumNotMet(ChairNote):
    """ABSTAIN -> DEBATE, next round."""


class RoundLimitReached(ChairNote):
    """Round 5 ends without consensus -> CONCLUSION (INCONCLUSIVE)."""


PAYLOADS: dict[Event, type[Payload]] = {
    Event.TABLE_CODE: TableCode,
    Event.OPINION_GIVEN: Opinion,
    Event.VETO_EXERCISED: VetoExercised,
    Event.CONSENSUS_REACHED: ConsensusReached,
    Event.ABSTENTION_DECLARED: AbstentionDeclared,
    Event.CONSENSUS_NOT_REACHED: ConsensusNotReached,
    Event.AMENDED_CODE_SUBMITTED: Amendment,
    Event.AMENDMENT_DECLINED: AmendmentDeclined,
    Event.COMPROMISE_OFFERED: CompromiseOffer,
    Event.COMPROMISE_DECLINED: CompromiseDeclined,
    Event.IRRECONCILABLE: Irreconcilable,
    Event.AGREEMENT_FINALIZED: AgreementFinalized,
    Event.QUORUM_MET: QuorumMet,
    Event.QUORUM_NOT_MET: QuorumNotMet,
    Event.ROUND_LIMIT_REACHED: RoundLimitReached,
}


class Refusal(InvalidMove):
    """A legal event whose payload the machine refuses; the reasons are constants so tests can name them."""

    BAD_PAYLOAD = "the payload is invalid"
    WRONG_SEAT = "it is not this seat's turn to speak"
    NO_VETO_RIGHT = "this seat holds no veto"
    NO_CRITICAL_FLAW = "a veto needs a critical finding in the verification results"
    UNKNOWN_EVENT = "no such event"

    TURN_REASONS = (InvalidMove.WRONG_ACTOR, WRONG_SEAT)
    STUDENT_SENTENCES = {
        NO_VETO_RIGHT: "Your seat holds no veto: object or abstain instead.",
        NO_CRITICAL_FLAW: "A veto needs a critical finding in the verification results: object or abstain instead.",
        WRONG_SEAT: "That move is not open now: the committee has moved on. The page shows where it stands.",
        "": "The committee cannot take this move as written: check each field and send it again.",
    }


# --- guards -----------------------------------------------------------------------------------------------

Guard = Callable[[DeliberationScenario, DeliberationState], bool]


def current_speaker(scenario: DeliberationScenario, state: DeliberationState) -> str | None:
    members = scenario.members
    if state.status != State.DEBATE or state.cursor >= len(members):
        return None
    return members[state.cursor]


def round_quorum(scenario: DeliberationScenario, state: DeliberationState) -> QuorumResult | None:
    """The quorum of the current round once every elected member has spoken."""
    rnd = state.current_round
    if rnd is None or len(rnd.ballots) < len(scenario.members):
        return None
    return check_quorum(tally_ballots(scenario.members, {s: b.stance for s, b in rnd.ballots.items()}))


def _always(_: DeliberationScenario, __: DeliberationState) -> bool:
    return True


def _member_to_speak(sc: DeliberationScenario, st: DeliberationState) -> bool:
    return current_speaker(sc, st) is not None


def _closed(test: Callable[[QuorumResult, DeliberationState], bool]) -> Guard:
    def guard(sc: DeliberationScenario, st: DeliberationState) -> bool:
        q = round_quorum(sc, st)
        return q is not None and test(q, st)

    return guard


def _rounds_left(st: DeliberationState) -> bool:
    return st.round < MAX_ROUNDS


def _compromise_permitted(st: DeliberationState) -> bool:
    """The house rules allow a compromise on every critical finding still on the table."""
    critical = st.submission.critical_findings
    return bool(critical) and all(f.compromise_allowed for f in critical)


def _proposer_may_answer(_: DeliberationScenario, st: DeliberationState) -> bool:
    return _rounds_left(st) and not st.proposer_declined


def _business_may_answer(_: DeliberationScenario, st: DeliberationState) -> bool:
    return (
        _rounds_left(st) and st.proposer_declined and not st.business_declined and _compromise_permitted(st)
    )


def _veto_stands(_: DeliberationScenario, st: DeliberationState) -> bool:
    return (
        _rounds_left(st) and st.proposer_declined and (st.business_declined or not _compromise_permitted(st))
    )


def _veto_at_limit(_: DeliberationScenario, st: DeliberationState) -> bool:
    return not _rounds_left(st)


def _abstain_quorum(outcome: QuorumOutcome, *, at_limit: bool | None = None) -> Guard:
    def guard(sc: DeliberationScenario, st: DeliberationState) -> bool:
        q = round_quorum(sc, st)
        if q is None or q.outcome != outcome:
            return False
        return at_limit is None or at_limit != _rounds_left(st)

    return guard


_VETOED = _closed(lambda q, _: q.outcome == QuorumOutcome.VETO)
_AGREED = _closed(lambda q, _: q.outcome == QuorumOutcome.CONCLUSION and q.tally.abstain == 0)
_ABSTAINED = _closed(lambda q, _: q.outcome != QuorumOutcome.VETO and q.tally.abstain > 0)
_SPLIT = _closed(
    lambda q, st: q.outcome == QuorumOutcome.NOT_MET and q.tally.abstain == 0 and _rounds_left(st)
)
_SPLIT_AT_LIMIT = _closed(
    lambda q, st: q.outcome == QuorumOutcome.NOT_MET and q.tally.abstain == 0 and not _rounds_left(st)
)


# --- actions ----------------------------------------------------------------------------------------------


class _Ctx:
    def __init__(
        self, scenario: DeliberationScenario, state: DeliberationState, event: Event, payload: Payload
    ) -> None:
        self.scenario, self.state, self.event, self.payload = scenario, state, event, payload
        self.source, self.source_round = state.status, state.round

    def refuse(self, reason: str, detail: str = "") -> Refusal:
        return Refusal(self.source.value, self.event.value, f"{reason}{': ' + detail if detail else ''}")

    def log(self, speaker: str, kind: str, text: str) -> None:
        if text and self.payload.stand_in and speaker != self.scenario.chair:
            text = STAND_IN_MARK + text
        if text:
            self.state.log.append(
                LogEntry(round=self.source_round, state=self.source, speaker=speaker, kind=kind, text=text)
            )

    def chair_note(self) -> None:
        if isinstance(self.payload, ChairNote):
            self.log(self.scenario.chair, "mediation", self.payload.text)


STAND_IN_MARK = "(AI stand-in) "


def _noop(_: _Ctx) -> None:
    return None


def _open_round(c: _Ctx, compromise: Compromise | None) -> None:
    st = c.state
    st.rounds.append(
        RoundRecord(number=st.round, submission_version=st.submission.version, compromise=compromise)
    )
    st.cursor = 0


def _next_round(c: _Ctx, compromise: Compromise | None) -> None:
    c.state.round += 1
    _open_round(c, compromise)


def _table_code(c: _Ctx) -> None:
    c.chair_note()
    _open_round(c, None)


def _give_opinion(c: _Ctx) -> None:
    sc, st, p = c.scenario, c.state, c.payload
    assert isinstance(p, Opinion)
    speaker = current_speaker(sc, st)
    if p.seat != speaker:
        raise c.refuse(Refusal.WRONG_SEAT, f"{speaker} speaks now, not {p.seat}")
    persona = sc.persona(p.seat)
    stance = p.stance
    if p.confidence < persona.confidence_threshold:
        stance = Stance.ABSTAIN  # seed: a persona below its confidence threshold declares abstention
    if stance == Stance.VETO:
        if not persona.can_veto:
            raise c.refuse(Refusal.NO_VETO_RIGHT)
        if not st.submission.critical_findings:
            raise c.refuse(Refusal.NO_CRITICAL_FLAW)
    rnd = st.current_round
    assert rnd is not None
    rnd.ballots[p.seat] = Ballot(
        seat=p.seat, stance=stance, declared=p.stance, confidence=p.confidence, text=p.text,
        fix_items=list(p.fix_items),
    )  # fmt: skip
    c.log(p.seat, "opinion", p.text)
    st.cursor += 1


def _record_quorum(c: _Ctx) -> QuorumResult:
    q = round_quorum(c.scenario, c.state)
    assert q is not None and c.state.current_round is not None
    c.state.current_round.quorum = q.record()
    return q


def _close_round(c: _Ctx) -> None:
    c.chair_note()
    _record_quorum(c)
    if c.event == Event.VETO_EXERCISED:
        c.state.proposer_declined = c.state.business_declined = False


def _debate_again(c: _Ctx) -> None:
    c.chair_note()
    if c.event == Event.CONSENSUS_NOT_REACHED:
        _record_quorum(c)
    previous = c.state.current_round
    _next_round(c, previous.compromise if previous else None)  # still under the same compromise, if any


def _amend(c: _Ctx) -> None:
    st, p = c.state, c.payload
    assert isinstance(p, Amendment)
    st.submissions.append(p.submission.model_copy(update={"version": st.submission.version + 1}))
    c.log(c.scenario.proposer, "action", p.text or f"Submits amended code (version {st.submission.version}).")
    st.round += 1  # the round itself opens when the chair tables the amended code


def _decline_amendment(c: _Ctx) -> None:
    assert isinstance(c.payload, Statement)
    c.log(c.scenario.proposer, "action", c.payload.text)
    c.state.proposer_declined = True


def _offer_compromise(c: _Ctx) -> None:
    p = c.payload
    assert isinstance(p, CompromiseOffer)
    seat = c.scenario.business_driver
    c.log(seat, "action", f"{p.text} Conditions: {'; '.join(p.conditions)}.")
    _next_round(c, Compromise(seat=seat, text=p.text, conditions=list(p.conditions)))


def _decline_compromise(c: _Ctx) -> None:
    assert isinstance(c.payload, Statement)
    c.log(c.scenario.business_driver, "action", c.payload.text)
    c.state.business_declined = True


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _agreed_fix_items(st: DeliberationState) -> list[str]:
    rnd = st.current_round
    if rnd is None:
        return []
    items = [i for b in rnd.ballots.values() if b.stance == Stance.SYNTHESIS for i in b.fix_items]
    if rnd.compromise:
        items += rnd.compromise.conditions
    return _dedupe(items)


def _open_items(st: DeliberationState) -> list[str]:
    """What still stands in the way: the critical findings and the fixes named by members who did not agree
    (a compromise's conditions were never agreed, so they are not fix items here)."""
    rnd = st.current_round
    items = [f.as_fix_item() for f in st.submission.critical_findings]
    if rnd is not None:
        items += [i for b in rnd.ballots.values() if b.stance != Stance.SYNTHESIS for i in b.fix_items]
    return _dedupe(items)


def _conclude(c: _Ctx, cause: ConclusionCause, fix_items: list[str]) -> None:
    st = c.state
    st.cause, st.fix_items = cause, fix_items
    st.verdict = verdict_for(cause, fix_items=fix_items)
    rnd = st.current_round
    if rnd is not None and rnd.quorum and rnd.quorum.majority_abstain_warning:
        voting = rnd.quorum.effective
        st.warnings.append(MAJORITY_ABSTAIN_WARNING.format(voting=voting, members=rnd.quorum.members))
    if cause == ConclusionCause.ROUND_LIMIT:
        st.warnings.append(ESCALATE_WARNING)


def _finalize_agreement(c: _Ctx) -> None:
    c.chair_note()
    _conclude(c, ConclusionCause.SYNTHESIS, _agreed_fix_items(c.state))


def _irreconcilable(c: _Ctx) -> None:
    c.chair_note()
    _conclude(c, ConclusionCause.IRRECONCILABLE_VETO, _open_items(c.state))


def _round_limit(c: _Ctx) -> None:
    c.chair_note()
    if c.source == State.DEBATE:
        _record_quorum(c)
    _conclude(c, ConclusionCause.ROUND_LIMIT, _open_items(c.state))


# --- the table --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Transition:
    source: State
    event: Event
    target: State
    actor: Actor
    guard: Guard = _always
    action: Callable[[_Ctx], None] = _noop
    seed_row: str = ""  # the row of seed 004's table this implements ("" for bookkeeping self-loops)


S, E, A = State, Event, Actor
TRANSITIONS: tuple[Transition, ...] = (
    Transition(S.PROPOSAL, E.TABLE_CODE, S.DEBATE, A.CHAIR, action=_table_code,
               seed_row="PROPOSAL: chairperson tables the code -> DEBATE"),
    Transition(S.DEBATE, E.OPINION_GIVEN, S.DEBATE, A.MEMBER, _member_to_speak, _give_opinion),
    Transition(S.DEBATE, E.VETO_EXERCISED, S.VETO, A.CHAIR, _VETOED, _close_round,
               seed_row="DEBATE: critical flaw found -> VETO"),
    Transition(S.DEBATE, E.CONSENSUS_REACHED, S.SYNTHESIS, A.CHAIR, _AGREED, _close_round,
               seed_row="DEBATE: consensus reached -> SYNTHESIS"),
    Transition(S.DEBATE, E.ABSTENTION_DECLARED, S.ABSTAIN, A.CHAIR, _ABSTAINED, _close_round,
               seed_row="DEBATE: persona confidence below threshold -> ABSTAIN"),
    Transition(S.DEBATE, E.CONSENSUS_NOT_REACHED, S.DEBATE, A.CHAIR, _SPLIT, _debate_again,
               seed_row="quorum: SYNTHESIS < 2/3, no VETO, rounds left -> DEBATE"),
    Transition(S.DEBATE, E.ROUND_LIMIT_REACHED, S.CONCLUSION, A.CHAIR, _SPLIT_AT_LIMIT, _round_limit,
               seed_row="round limit -> CONCLUSION (INCONCLUSIVE)"),
    Transition(S.VETO, E.AMENDED_CODE_SUBMITTED, S.PROPOSAL, A.PROPOSER, _proposer_may_answer, _amend,
               seed_row="VETO: proposer submits amended code -> PROPOSAL"),
    Transition(S.VETO, E.AMENDMENT_DECLINED, S.VETO, A.PROPOSER, _proposer_may_answer, _decline_amendment),
    Transition(S.VETO, E.COMPROMISE_OFFERED, S.DEBATE, A.BUSINESS_DRIVER, _business_may_answer,
               _offer_compromise, seed_row="VETO: business driver offers CoD-based compromise -> DEBATE"),
    Transition(S.VETO, E.COMPROMISE_DECLINED, S.VETO, A.BUSINESS_DRIVER, _business_may_answer,
               _decline_compromise),
    Transition(S.VETO, E.IRRECONCILABLE, S.CONCLUSION, A.CHAIR, _veto_stands, _irreconcilable,
               seed_row="VETO: irreconcilable -> CONCLUSION (REQUEST_CHANGES)"),
    Transition(S.VETO, E.ROUND_LIMIT_REACHED, S.CONCLUSION, A.CHAIR, _veto_at_limit, _round_limit,
               seed_row="round limit -> CONCLUSION (INCONCLUSIVE)"),
    Transition(S.SYNTHESIS, E.AGREEMENT_FINALIZED, S.CONCLUSION, A.CHAIR, action=_finalize_agreement,
               seed_row="SYNTHESIS -> CONCLUSION"),
    Transition(S.ABSTAIN, E.QUORUM_MET, S.CONCLUSION, A.CHAIR, _abstain_quorum(QuorumOutcome.CONCLUSION),
               _finalize_agreement, seed_row="ABSTAIN: quorum check -> CONCLUSION"),
    Transition(S.ABSTAIN, E.QUORUM_NOT_MET, S.DEBATE, A.CHAIR,
               _abstain_quorum(QuorumOutcome.NOT_MET, at_limit=False), _debate_again,
               seed_row="ABSTAIN: quorum check -> DEBATE"),
    Transition(S.ABSTAIN, E.ROUND_LIMIT_REACHED, S.CONCLUSION, A.CHAIR,
               _abstain_quorum(QuorumOutcome.NOT_MET, at_limit=True), _round_limit,
               seed_row="round limit -> CONCLUSION (INCONCLUSIVE)"),
)  # fmt: skip
del S, E, A
_BY_KEY = {(t.source, t.event): t for t in TRANSITIONS}


def allowed_events(scenario: DeliberationScenario, state: DeliberationState) -> list[Event]:
    """Events whose guard passes now (payload checks aside), in table order."""
    return [t.event for t in TRANSITIONS if t.source == state.status and t.guard(scenario, state)]


def transition_for(
    scenario: DeliberationScenario, state: DeliberationState, event: Event | str
) -> Transition:
    allowed = [e.value for e in allowed_events(scenario, state)]
    try:
        key = (state.status, Event(event))
    except ValueError:
        raise IllegalEvent(state.status.value, str(event), allowed) from None
    t = _BY_KEY.get(key)
    if t is None or not t.guard(scenario, state):
        raise IllegalEvent(state.status.value, key[1].value, allowed)
    return t


@dataclass(frozen=True)
class Step:
    """Who acts next: one actor (a seat) and the events open to it; `done` once concluded."""

    actor: Actor | None
    seat: str | None
    events: tuple[Event, ...]
    human: bool = False

    @property
    def done(self) -> bool:
        return self.actor is None


def seat_for(scenario: DeliberationScenario, state: DeliberationState, actor: Actor) -> str | None:
    if actor == Actor.CHAIR:
        return scenario.chair
    if actor == Actor.PROPOSER:
        return scenario.proposer
    if actor == Actor.BUSINESS_DRIVER:
        return scenario.business_driver
    return current_speaker(scenario, state)


def next_step(scenario: DeliberationScenario, state: DeliberationState) -> Step:
    open_now = [t for t in TRANSITIONS if t.source == state.status and t.guard(scenario, state)]
    if not open_now:
        return Step(actor=None, seat=None, events=())
    actors = {t.actor for t in open_now}
    # The guards are written so that one actor holds the floor at a time; a second would be a table bug.
    assert len(actors) == 1, f"two actors at once in {state.status}: {sorted(actors)}"
    actor = open_now[0].actor
    seat = seat_for(scenario, state, actor)
    human = seat is not None and seat in state.humans
    return Step(actor=actor, seat=seat, events=tuple(t.event for t in open_now), human=human)


@dataclass
class Outcome:
    seq: int
    event: Event
    seat: str | None
    source: State
    target: State
    payload: dict[str, Any]
    state: DeliberationState
    entries: list[LogEntry] = field(default_factory=list)


def parse_payload(event: Event, payload: dict[str, Any] | Payload | None, *, state: State) -> Payload:
    try:
        return read_payload(PAYLOADS[event], payload)
    except PayloadProblems as exc:
        raise Refusal(state.value, event.value, f"{Refusal.BAD_PAYLOAD}: {exc}") from None


def apply(
    scenario: DeliberationScenario,
    state: DeliberationState,
    event: Event | str,
    payload: dict[str, Any] | Payload | None = None,
) -> Outcome:
    """Apply one event to a copy of `state`. Raises IllegalEvent/Refusal and then changes nothing."""
    t = transition_for(scenario, state, event)
    parsed = parse_payload(t.event, payload, state=state.status)
    seat = seat_for(scenario, state, t.actor)
    new = DeliberationState.model_validate(state.model_dump())
    ctx = _Ctx(scenario, new, t.event, parsed)
    t.action(ctx)
    if t.target != t.source:
        ctx.log(scenario.chair, "transition", f"{t.source.value} → {t.target.value}")
    new.status = t.target
    new.event_seq += 1
    return Outcome(
        seq=new.event_seq, event=t.event, seat=seat, source=state.status, target=new.status,
        payload=parsed.model_dump(mode="json", exclude=None if parsed.stand_in else {"stand_in"}), state=new,
        entries=new.log[len(state.log):],
    )  # fmt: skip


def person_seats(scenario: DeliberationScenario) -> list[str]:
    """The seats a person may hold: the proposer's and the elected members'."""
    return [scenario.proposer, *scenario.members]


def new_deliberation(
    scenario: DeliberationScenario,
    *,
    seed: int,
    submission: Submission,
    human_seat: str | None = None,
    co_players: Sequence[str] = (),
) -> DeliberationState:
    """`co_players`: in a class group's game, the seats of the students after the first (`human_seat`)."""
    held = [s for s in (human_seat, *co_players) if s is not None]
    seats = person_seats(scenario)
    for seat in held:
        if seat not in seats:
            raise ValueError(f"a person can take the seat of {', '.join(seats)}; not {seat!r}")
    if len(set(held)) != len(held) or (co_players and human_seat is None):
        raise ValueError(f"each person takes a seat of their own (got {held!r})")
    first = submission.model_copy(update={"version": 1})
    return DeliberationState(
        seed=seed, submissions=[first], human_seat=human_seat, co_players=list(co_players)
    )


def restore(snapshot: dict[str, Any]) -> DeliberationState:
    return restore_snapshot(
        DeliberationState, snapshot, schema_version=SCHEMA_VERSION, what="a deliberation state"
    )
