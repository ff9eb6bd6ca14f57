"""Mercury's state machine (seed 002 §5): states, events, guards and the side effects of each transition.

The machine is a declarative transition table. `apply` works on a deep copy of the state, so a refused event
changes nothing, and returns an `Outcome` describing what a commit must write: transcript entries, the event,
stance changes and, at the end of a vote, the vote record. The machine never touches a database.

python-statemachine was weighed and not taken: a plain table keeps this package free of third-party imports beyond
pydantic, keeps a turn's engine time in microseconds, and gives the same guarantees:
restore from a stored state value, typed refusal of illegal events, and `allowed_events` for rendering.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import ValidationError

from simulations.engine import rng
from simulations.engine.errors import IllegalEvent, InvalidMove, ResumeError
from simulations.engine.transitions import Transition as Applied
from simulations.kinds.negotiation import dialogue, judge, rules, tabling
from simulations.kinds.negotiation.events import (
    MAX_MESSAGE_CHARS,
    MAX_SUMMARY_CHARS,
    BallotCast,
    Empty,
    Event,
    Payload,
    PlacementChoice,
    ResumeTarget,
    RoleChoice,
    Spoken,
    Summary,
    TalkStart,
)
from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import (
    LANE_PHASES,
    SCHEMA_VERSION,
    Conversation,
    GameState,
    IssueState,
    Lane,
    PendingCondition,
    Stance,
    Starter,
    Status,
)

__all__ = ["MAX_MESSAGE_CHARS", "MAX_SUMMARY_CHARS", "Event", "Status"]

STATES = tuple(Status)  # in the order a game passes through them
# States a stored game may rest in (everything but the transient boot states).
RESUMABLE = tuple(s for s in STATES if s not in (Status.BOOT, Status.RESUME))
PHASE_ORDER: dict[str, int] = {s: n for n, s in enumerate(STATES)}

Actor = Literal["system", "human", "ai", "advance"]
StepKind = Literal["system", "human", "ai", "advance", "done"]


@dataclass
class Entry:
    seq: int
    round: int
    phase: str
    issue: str | None
    speaker: str
    kind: str  # chair | opening | message | speech | vote | result | summary
    visibility: str  # public | private
    audience: list[str]
    text: str


@dataclass
class Outcome(Applied[str, GameState]):
    entries: list[Entry] = field(default_factory=list)
    stance_changes: list[judge.StanceChange] = field(default_factory=list)
    vote: dict[str, Any] | None = None  # set when an issue's vote completes
    judgements: list[tuple[int, judge.Judgement]] = field(default_factory=list)  # (entry seq, its reading)


@dataclass(frozen=True)
class Step:
    """What the game waits for next: exactly one actor at a time (in Round 2's side-by-side lanes, one a lane)."""

    kind: StepKind
    events: tuple[Event, ...] = ()
    role: str | None = None
    purpose: str | None = None  # talk | talk_final | speech | skip | vote | summary | placement | ...
    # Round 2's lanes (a game several students share): the student's seat whose lane this step is in (its event
    # carries it as `seat`), and on the game's step, every lane's step at once, in seat order.
    lane: str | None = None
    lanes: tuple[Step, ...] = ()


class TalkRefusal(InvalidMove):
    """A move in Round 2's side-by-side lanes that the lanes refuse (a game several students share)."""

    PARTNER_BUSY = "that delegation is in another private talk"
    LANE_MOVED = "the talk moved on since the move was made"
    NO_LANE = "a move in Round 2's talks names its student's seat"

    TURN_REASONS = (InvalidMove.WRONG_ACTOR, PARTNER_BUSY, LANE_MOVED)
    STUDENT_SENTENCES = {
        PARTNER_BUSY: "That delegation is in another private talk just now: choose another one, or choose it again "
        "once its talk has ended.",
        LANE_MOVED: "Your talk moved on since this page was drawn — here is where it is now. What you typed is kept "
        "in the box.",
    }


class _Ctx:
    """The mutable working set of one transition."""

    def __init__(
        self, scenario: Scenario, state: GameState, event: str, payload: Payload, raw: dict[str, Any]
    ) -> None:
        self.scenario, self.state, self.event, self.payload = scenario, state, event, payload
        self.raw = raw  # the payload as committed: the judge tells an absent reading from a refused one
        self.entries: list[Entry] = []
        self.changes: list[judge.StanceChange] = []
        self.vote: dict[str, Any] | None = None
        self.judgements: list[tuple[int, judge.Judgement]] = []  # (transcript seq, reading of that message)
        self.source = state.status

    def refuse(self, reason: str) -> InvalidMove:
        return InvalidMove(self.source, self.event, reason)

    def add(
        self, speaker: str, kind: str, text: str, *, audience: list[str] | None = None, rnd: int = 0
    ) -> Entry:
        st = self.state
        st.transcript_seq += 1
        issue = st.active_issue.issue_id if st.active_issue and _round_of(self.source) == 3 else None
        entry = Entry(
            seq=st.transcript_seq,
            round=rnd or _round_of(self.source),
            phase=self.source,
            issue=issue,
            speaker=speaker,
            kind=kind,
            visibility="private" if audience else "public",
            audience=sorted(audience) if audience else [],
            text=text,
        )
        self.entries.append(entry)
        return entry

    def chair(self, key: str, *, audience: list[str] | None = None, rnd: int = 0, **values: object) -> Entry:
        return self.add(
            self.scenario.chair.id, "chair", _fmt(self, key, **values), audience=audience, rnd=rnd
        )

    def name(self, role: str) -> str:
        return self.scenario.display_name(role)

    def judge(self, speaker: str, text: str, entry: Entry, *, issue: str | None) -> judge.Signals:
        """The reading of a committed message: a model's signals from the payload when valid, else the rules'.

        Invalid signals are refused here and the rules read the message instead; the judgement says so."""
        judgement = judge.judge_message(
            self.scenario, speaker=speaker, text=text, issue=issue, payload=self.raw,
            meaning=speaker in self.state.humans,  # a student's words may be read by meaning (similarity.py)
        )  # fmt: skip
        self.judgements.append((entry.seq, judgement))
        return judgement.signals

    def text(self) -> str:
        assert isinstance(self.payload, (Spoken, Summary))  # the table's payload model checked its length
        return self.payload.text.strip()


_ROUNDS: dict[str, int] = {
    **dict.fromkeys((Status.ROUND_1_SETUP, Status.ROUND_1_OPENING_STATEMENTS), 1),
    **dict.fromkeys((Status.ROUND_2_SETUP, Status.ROUND_2_SELECT_CONVO_1, Status.ROUND_2_CONVERSATION_ACTIVE,
                     Status.ROUND_2_SELECT_CONVO_2, Status.ROUND_2_WRAP_UP, Status.ROUND_2_TALKS), 2),
    **dict.fromkeys((Status.ROUND_3_SETUP, Status.ISSUE_INTRO, Status.ISSUE_DEBATE_ROUND_1,
                     Status.ISSUE_DEBATE_ROUND_2, Status.ISSUE_POSITION_FINALIZATION, Status.ISSUE_PROPOSAL_SELECTION,
                     Status.ISSUE_VOTE, Status.ISSUE_RESOLUTION, Status.ROUND_3_COMPLETE), 3),
}  # fmt: skip


def _round_of(status: str) -> int:
    """The round a state belongs to (0: before Round 1, or the review)."""
    return _ROUNDS.get(status, 0)


# --- guards -----------------------------------------------------------------------------------------------


def _always(_: GameState) -> bool:
    return True


def _openings_left(st: GameState) -> bool:
    return st.round1.cursor < len(st.round1.speaker_order)


def _openings_done(st: GameState) -> bool:
    return not _openings_left(st)


def _convo(st: GameState) -> Conversation | None:
    """The talk the Round 2 rows are about: the last one, or with lanes the focused lane's (closed or not)."""
    if st.round2.lanes:
        return st.lane_talk(st.round2.focus)
    return st.round2.conversations[-1] if st.round2.conversations else None


def _talking(st: GameState) -> bool:
    c = _convo(st)
    return bool(c and c.phase in ("OPEN", "FINAL_TURNS"))


def _human_to_talk(st: GameState) -> bool:
    """A student speaks next in the open talk: the student who chose it, or a student they chose to talk with."""
    return _talking(st) and _talker(st) in st.humans


def _partner_to_talk(st: GameState) -> bool:
    return _talking(st) and _talker(st) not in st.humans


def _convo_closed(index: int) -> Callable[[GameState], bool]:
    def guard(st: GameState) -> bool:
        c = _convo(st)
        return bool(c and c.phase == "CLOSED" and c.index == index)

    return guard


def _order(st: GameState) -> list[str]:
    issue = st.active_issue
    if issue is None:
        return []
    return issue.order_round1 if issue.debate_round == 1 else issue.order_round2


def current_speaker(st: GameState) -> str | None:
    issue, order = st.active_issue, _order(st)
    if issue is None or issue.cursor >= len(order):
        return None
    return order[issue.cursor]


def _human_speaks(st: GameState) -> bool:
    speaker = current_speaker(st)
    return speaker is not None and speaker in st.humans


def _ai_speaks(st: GameState) -> bool:
    speaker = current_speaker(st)
    return speaker is not None and speaker not in st.humans


def _debate_done(st: GameState) -> bool:
    issue = st.active_issue
    return issue is not None and issue.cursor >= len(_order(st))


def next_voter(st: GameState) -> str | None:
    issue = st.active_issue
    if issue is None:
        return None
    for role in issue.vote_order:
        if role not in issue.ballots:
            return role
    return None


def _human_votes(st: GameState) -> bool:
    voter = next_voter(st)
    return voter is not None and voter in st.humans


def _ai_votes(st: GameState) -> bool:
    voter = next_voter(st)
    return voter is not None and voter not in st.humans


def _all_voted(st: GameState) -> bool:
    issue = st.active_issue
    return issue is not None and bool(issue.vote_order) and next_voter(st) is None


def _more_issues(st: GameState) -> bool:
    return st.round3.active_issue_index < len(st.round3.issues) - 1


def _last_issue(st: GameState) -> bool:
    return st.round3.active_issue_index == len(st.round3.issues) - 1


def _summary_not_requested(st: GameState) -> bool:
    return not st.summary_requested


def _summary_pending(st: GameState) -> bool:
    return st.summary_requested and st.summary is None


# --- actions ----------------------------------------------------------------------------------------------


def _noop(_: _Ctx) -> None:
    return None


def _confirm_role(c: _Ctx) -> None:
    sc, st, choice = c.scenario, c.state, c.payload
    assert isinstance(choice, RoleChoice)  # its validators checked the seat and the opening against `sc`
    role = sc.role(choice.role)
    variant = choice.variant or role.openings[0].id
    st.human_role, st.human_variant = role.id, str(variant)
    st.co_players = list(choice.others)
    for other in sc.roles:
        if other.id == role.id:
            chosen = str(variant)
        else:
            chosen = rng.choice(st.seed, "opening-variant", [v.id for v in other.openings], other.id)
        st.round1.openings[other.id] = chosen
        delta = other.opening(chosen).stance.firmness_delta
        st.stances[other.id] = {
            issue_id: Stance(
                preferred=spec.preferred,
                acceptable=list(spec.acceptable),
                firmness=round(min(1.0, max(0.0, spec.firmness + delta)), 4),
                red_lines=list(spec.red_lines),
                conditions=[PendingCondition(**cond.model_dump()) for cond in spec.conditions],
            )
            for issue_id, spec in other.stances.items()
        }
    st.round1.speaker_order = rules.round1_speaker_order(sc, st.seed)
    st.round1.cursor = 0
    st.round2.requests = list(role.talks_requested_by)


def _round1_intro(c: _Ctx) -> None:
    c.chair("round1_intro", title=c.scenario.title, rnd=1)


def _present_opening(c: _Ctx) -> None:
    st = c.state
    speaker = st.round1.speaker_order[st.round1.cursor]
    c.chair("round1_call", speaker=c.name(speaker))
    variant = c.scenario.role(speaker).opening(st.round1.openings[speaker])
    c.add(speaker, "opening", variant.text)
    signals = judge.read_signals(c.scenario, variant.text, speaker=speaker)
    judge.record_statements(st, speaker, signals)
    tabling.hear(c.scenario, st, speaker, signals)  # the chair hears what is said in public
    st.round1.cursor += 1


def _round1_close(c: _Ctx) -> None:
    c.chair("round1_close")


def _round2_intro(c: _Ctx) -> None:
    c.chair("round2_intro", rnd=2)


def _start_convo(c: _Ctx) -> None:
    st, start = c.state, c.payload
    assert isinstance(start, TalkStart)
    partner, starter = start.partner, start.starter  # its validators checked the partner against the game
    talker = st.round2_student
    assert talker is not None
    if not st.free_to_talk(partner):  # a student in a talk of their own, or chosen for another's (lanes)
        raise TalkRefusal(c.source, c.event, TalkRefusal.PARTNER_BUSY)
    # A game of one student keeps `talker` empty (it is `human_role`), as it stored its talks before.
    convo = Conversation(
        index=sum(1 for t in st.round2.conversations if st.talker_of(t) == talker), partner=partner,
        starter=starter, next_speaker=starter, talker=talker if st.co_players else None,
    )  # fmt: skip
    st.round2.conversations.append(convo)
    first, second = (talker, partner) if starter == "human" else (partner, talker)
    c.chair("talk_open", first=c.name(first), second=c.name(second), audience=[talker, partner])


def _talk_message(c: _Ctx) -> None:
    """The next message of the open talk, by whichever side's turn it is (a student's or a delegation's)."""
    st, convo = c.state, _convo(c.state)
    assert convo is not None
    talker = st.talker_of(convo)
    assert talker is not None
    side = convo.next_speaker
    text = c.text()
    speaker = talker if side == "human" else convo.partner
    listener = convo.partner if side == "human" else talker
    audience = [talker, convo.partner]
    entry = c.add(speaker, "message", text, audience=audience)
    signals = c.judge(speaker, text, entry, issue=None)
    judge.record_statements(st, speaker, signals, heard_by=listener)
    c.changes += judge.apply_message(
        c.scenario, st, speaker=speaker, listeners=[listener], text=text, private=True,
        cause_seq=entry.seq, signals=signals,
    )  # fmt: skip
    other: Starter = "partner" if side == "human" else "human"
    limit = c.scenario.talk_messages_each
    if convo.phase == "OPEN":
        if side == "human":
            convo.human_turns += 1
        else:
            convo.partner_turns += 1
        if convo.human_turns >= limit and convo.partner_turns >= limit:
            convo.phase = "INTERRUPT"
            c.chair("talk_interrupt", a=c.name(talker), b=c.name(convo.partner), audience=audience)
            convo.phase, convo.next_speaker = "FINAL_TURNS", convo.starter
        else:
            convo.next_speaker = other
    else:
        if side == "human":
            convo.human_final = True
        else:
            convo.partner_final = True
        if convo.human_final and convo.partner_final:
            c.chair("talk_close", a=c.name(talker), b=c.name(convo.partner), audience=audience)
            convo.phase = "CLOSED"
        else:
            convo.next_speaker = other


def _round2_close(c: _Ctx) -> None:
    c.chair("round2_close")


def _more_talkers(st: GameState) -> bool:
    return st.round2.student < len(st.humans) - 1


def _last_talker(st: GameState) -> bool:
    return not _more_talkers(st)


def _next_talker(c: _Ctx) -> None:
    """The next student of a class group's game stored before lanes chooses their talks (one at a time)."""
    st = c.state
    st.round2.student += 1
    student = st.round2_student
    assert student is not None
    st.round2.requests = list(c.scenario.role(student).talks_requested_by)


def _one_student(st: GameState) -> bool:
    return not st.co_players


def _several_students(st: GameState) -> bool:
    return bool(st.co_players)


def _open_lanes(c: _Ctx) -> None:
    """Every student's Round 2 at once: a lane each, in seat order, each starting with the choice of a partner."""
    _round2_intro(c)
    st = c.state
    st.round2.lanes = [
        Lane(seat=seat, requests=list(c.scenario.role(seat).talks_requested_by), since=st.event_seq + 1)
        for seat in st.humans
    ]


def _lanes_done(st: GameState) -> bool:
    return all(lane.phase == Status.ROUND_2_WRAP_UP and lane.joined is None for lane in st.round2.lanes)


def _announce_issue(c: _Ctx) -> None:
    st = c.state
    issue_state = st.active_issue
    assert issue_state is not None
    issue = c.scenario.issue(issue_state.issue_id)
    options = "; ".join(f"{o.id} {o.label}" for o in issue.options)
    c.add(
        c.scenario.chair.id,
        "chair",
        _fmt(c, "issue_intro", number=st.round3.active_issue_index + 1, title=issue.title,
             description=issue.description, options=options),
        rnd=3,
    )  # fmt: skip


def _fmt(c: _Ctx, key: str, **values: object) -> str:
    """One of the chair's variants for `key`, chosen by the seed and the transcript position."""
    variants: list[str] = getattr(c.scenario.chair.lines, key)
    return rng.choice(c.state.seed, "chair", variants, key, c.state.transcript_seq).format(**values)


def _round3_start(c: _Ctx) -> None:
    st = c.state
    st.round3.issues = [IssueState(issue_id=i.id) for i in c.scenario.issues]
    st.round3.active_issue_index = 0
    c.chair("round3_intro", rnd=3)
    _announce_issue(c)


def _set_placement(c: _Ctx) -> None:
    st, issue = c.state, c.state.active_issue
    assert issue is not None
    assert isinstance(c.payload, PlacementChoice)
    placement = issue.placement = c.payload.placement
    for n in (1, 2):
        order = rules.debate_order(c.scenario, st.seed, issue.issue_id, n, st.human_role, placement)
        setattr(issue, f"order_round{n}", order)
    issue.debate_round, issue.cursor = 1, 0
    c.chair("debate_round_open", round=1, title=c.scenario.issue(issue.issue_id).title)


def _speech(human: bool) -> Callable[[_Ctx], None]:
    def action(c: _Ctx) -> None:
        st, issue = c.state, c.state.active_issue
        assert issue is not None
        speaker = current_speaker(st)
        assert speaker is not None
        if human != (speaker in st.humans):
            raise c.refuse(InvalidMove.WRONG_ACTOR)
        text = c.text()
        entry = c.add(speaker, "speech", text)
        signals = c.judge(speaker, text, entry, issue=issue.issue_id)
        judge.record_statements(st, speaker, signals)
        tabling.hear(c.scenario, st, speaker, signals)  # the chair hears what is said in public
        c.changes += judge.apply_message(
            c.scenario, st, speaker=speaker, listeners=c.scenario.role_ids, text=text, private=False,
            cause_seq=entry.seq, signals=signals,
        )  # fmt: skip
        # An insult is answered by the chair, in public, before anyone else speaks.
        if dialogue.is_hostile(text, dialogue.names_pattern(c.scenario)):
            line = rng.choice(st.seed, "chair", dialogue.CALL_TO_ORDER, "order", st.transcript_seq)
            c.add(c.scenario.chair.id, "chair", line.format(speaker=c.name(speaker)))
        issue.cursor += 1

    return action


def _give_floor(action: Callable[[_Ctx], None]) -> Callable[[_Ctx], None]:
    """The chair gives the floor before a speech (a pass is recorded by the chair's own line instead).

    A wrapper rather than a line inside `_speech`, so the call precedes the speech in the transcript and a refused
    speech (empty, too long, wrong actor) leaves no call behind: the whole transition is discarded."""

    def action_with_call(c: _Ctx) -> None:
        speaker = current_speaker(c.state)
        if speaker is not None:
            c.chair("debate_call", speaker=c.name(speaker))
        action(c)

    return action_with_call


def text_seq(state: GameState, event: str) -> int:
    """The transcript sequence number the text of `event` will be written at (a debate speech comes after the
    chair's call to the floor), so a judge's call on that text can name it before the turn is committed."""
    return state.transcript_seq + (2 if event in (Event.HUMAN_TURN_SPEAK, Event.AI_TURN_COMMITTED) else 1)


def _pass(c: _Ctx) -> None:
    issue = c.state.active_issue
    speaker = current_speaker(c.state)
    assert issue is not None and speaker is not None
    c.chair("debate_pass", speaker=c.name(speaker))
    issue.cursor += 1


def _debate_round_2(c: _Ctx) -> None:
    issue = c.state.active_issue
    assert issue is not None
    issue.debate_round, issue.cursor = 2, 0
    c.chair("debate_round_open", round=2, title=c.scenario.issue(issue.issue_id).title)


def _finalize_positions(c: _Ctx) -> None:
    # Stances are kept current after every message, so finalization only re-checks offer conditions and the
    # invariant that a preferred option is always acceptable.
    for role in c.scenario.role_ids:
        if role in c.state.humans:
            continue
        c.changes += judge.apply_offer_conditions(c.scenario, c.state, role, "earlier offers", None)
        for stance in c.state.stances[role].values():
            assert stance.preferred in stance.acceptable


def _propose(c: _Ctx) -> None:
    st, issue = c.state, c.state.active_issue
    assert issue is not None
    tabled = tabling.table(c.scenario, st, issue.issue_id)  # follows the debate: see tabling.py
    proposal, supporters = tabled.option, tabled.supporters
    issue.proposal, issue.supporters = proposal, supporters
    issue.set_aside, issue.blockers = (tabled.leading if tabled.moved else None), tabled.blockers
    issue.package = sorted({offer for _, offer, _ in tabled.package})
    issue.vote_order = list(c.scenario.voters)
    spec = c.scenario.issue(issue.issue_id)
    label = spec.option(proposal).label
    names = ", ".join(c.name(r) for r in supporters) or "no delegation"
    c.chair("proposal", option_id=proposal, option_label=label, title=spec.title, supporters=names)
    why = tabling.explain(c.scenario, tabled)
    if why:
        c.add(c.scenario.chair.id, "chair", why)
    c.chair("vote_open", option_id=proposal, option_label=label)


def _cast(human: bool) -> Callable[[_Ctx], None]:
    def action(c: _Ctx) -> None:
        st, issue = c.state, c.state.active_issue
        voter = next_voter(st)
        assert issue is not None and voter is not None and issue.proposal is not None
        if human:
            assert isinstance(c.payload, BallotCast)
            ballot = c.payload.ballot
        else:
            ballot = rules.ai_ballot(st.stances[voter][issue.issue_id], issue.proposal)
        issue.ballots[voter] = ballot
        text = _fmt(c, "vote_record", speaker=c.name(voter), ballot=ballot.upper())
        c.add(voter, "vote", text)

    return action


def _complete_vote(c: _Ctx) -> None:
    st, issue = c.state, c.state.active_issue
    assert issue is not None and issue.proposal is not None
    issue.adopted = rules.adopted(issue.ballots, issue.vote_order)
    spec = c.scenario.issue(issue.issue_id)
    values: dict[str, object] = {
        "option_id": issue.proposal, "option_label": spec.option(issue.proposal).label, "title": spec.title,
    }  # fmt: skip
    if issue.adopted:
        entry = c.add(c.scenario.chair.id, "result", _fmt(c, "result_adopted", **values))
    else:
        against = ", ".join(c.name(r) for r in issue.vote_order if issue.ballots[r] == "no")
        entry = c.add(c.scenario.chair.id, "result", _fmt(c, "result_rejected", against=against, **values))
    c.vote = {
        "issue": issue.issue_id,
        "proposal": issue.proposal,
        "ballots": {r: issue.ballots[r] for r in issue.vote_order},
        "adopted": issue.adopted,
    }
    c.changes += judge.settle_commitments(c.scenario, st, issue, entry.seq)
    c.changes += judge.apply_adoption_conditions(c.scenario, st, entry.seq)


def _next_issue(c: _Ctx) -> None:
    c.state.round3.active_issue_index += 1
    _announce_issue(c)


def _round3_close(c: _Ctx) -> None:
    issues = c.state.round3.issues
    adopted = sum(1 for i in issues if i.adopted)
    c.chair("round3_close", adopted=adopted, rejected=len(issues) - adopted)


def _request_summary(c: _Ctx) -> None:
    c.state.summary_requested = True


def _store_summary(c: _Ctx) -> None:
    c.state.summary = c.text()


def _resume_ready(c: _Ctx) -> None:
    assert isinstance(c.payload, ResumeTarget)
    target = c.payload.status
    if target not in RESUMABLE:
        raise c.refuse(InvalidMove.BAD_STATUS)
    if consistency_problems(c.scenario, c.state.model_copy(update={"status": target})):
        raise c.refuse(InvalidMove.INCONSISTENT)


_ROUND_3 = (Status.ISSUE_INTRO, Status.ISSUE_DEBATE_ROUND_1, Status.ISSUE_DEBATE_ROUND_2, Status.ISSUE_POSITION_FINALIZATION,
            Status.ISSUE_PROPOSAL_SELECTION, Status.ISSUE_VOTE, Status.ISSUE_RESOLUTION, Status.ROUND_3_COMPLETE, Status.REVIEW)  # fmt: skip


def consistency_problems(scenario: Scenario, state: GameState) -> list[str]:
    """What a stored state lacks for the status it claims (empty when it can be resumed safely)."""
    s, problems = state.status, []
    rank = PHASE_ORDER.get(s, -1)
    if rank < 0:
        return [f"unknown status {s}"]
    if rank > PHASE_ORDER[Status.ROLE_SELECTION]:
        if state.human_role not in scenario.role_ids:
            problems.append("no human role")
        elif len(set(state.humans)) != len(state.humans) or not set(state.humans) <= set(scenario.role_ids):
            problems.append("students' seats unknown or repeated")
        if set(state.stances) != set(scenario.role_ids) or set(state.round1.openings) != set(
            scenario.role_ids
        ):
            problems.append("stances or openings missing")
        if sorted(state.round1.speaker_order) != sorted(scenario.role_ids):
            problems.append("no Round 1 speaker order")
    if rank > PHASE_ORDER[Status.ROUND_1_OPENING_STATEMENTS] and state.round1.cursor != len(
        state.round1.speaker_order
    ):
        problems.append("Round 1 not finished")
    if s == Status.ROUND_2_CONVERSATION_ACTIVE and not state.round2.conversations:
        problems.append("no active conversation")
    if s in (Status.ROUND_2_SELECT_CONVO_2, Status.ROUND_2_WRAP_UP) and not state.round2.conversations:
        problems.append("the required first talk is missing")
    if s == Status.ROUND_2_TALKS:
        talks = len(state.round2.conversations)
        if [lane.seat for lane in state.round2.lanes] != state.humans:
            problems.append("Round 2's lanes are not the students'")
        elif any(
            i is not None and not 0 <= i < talks
            for lane in state.round2.lanes
            for i in (lane.talk, lane.joined)
        ):
            problems.append("a lane's talk is missing")
    if s in _ROUND_3:
        issues = [i.issue_id for i in state.round3.issues]
        if issues != [i.id for i in scenario.issues] or state.active_issue is None:
            problems.append("Round 3 issues not set up")
        elif s in _DEBATE and not (
            state.active_issue.order_round1 and state.active_issue.debate_round in (1, 2)
        ):
            problems.append("no debate order")
        elif s in (Status.ISSUE_VOTE, Status.ISSUE_RESOLUTION) and state.active_issue.proposal is None:
            problems.append("no proposal")
        elif s in (Status.ROUND_3_COMPLETE, Status.REVIEW) and any(
            i.adopted is None for i in state.round3.issues
        ):
            problems.append("issues left unresolved")
    return problems


# --- the table --------------------------------------------------------------------------------------------


# Who acts in a transition, as the step names it; `who` below says which seat.
def _nobody(_: GameState) -> str | None:
    return None


def _student(st: GameState) -> str | None:
    return st.human_role


def _round2_student(st: GameState) -> str | None:
    return st.round2_student


def _next_opener(st: GameState) -> str | None:
    return st.round1.speaker_order[st.round1.cursor]


def _talker(st: GameState) -> str | None:
    convo = _convo(st)
    assert convo is not None
    return st.talker_of(convo) if convo.next_speaker == "human" else convo.partner


def _talk_purpose(st: GameState) -> str:
    convo = _convo(st)
    assert convo is not None
    if convo.phase == "FINAL_TURNS":
        return "talk_final"
    return "talk_open" if convo.starter == "partner" and convo.partner_turns == 0 else "talk"


@dataclass(frozen=True)
class Transition:
    """One row of the table. A step (`next_step`) is every row whose guard passes in the current state: its actor
    acts, `who` names the seat, `purpose` tells the prompts and the page what kind of move it is, and `payload`
    is the model its payload must fit (what a student may send is derived from it)."""

    source: Status
    event: Event
    target: Status | None  # None: decided by the payload (RESUME_READY goes back to the stored status)
    actor: Actor
    guard: Callable[[GameState], bool] = _always
    action: Callable[[_Ctx], None] = _noop
    payload: type[Payload] = Empty
    who: Callable[[GameState], str | None] = _nobody
    purpose: str | Callable[[GameState], str] | None = None
    declines: bool = False  # the move that says "no" to the step (a pass, a skipped talk): a secondary button

    def purpose_in(self, state: GameState) -> str | None:
        return self.purpose(state) if callable(self.purpose) else self.purpose


S, E = Status, Event
_DEBATE = (S.ISSUE_DEBATE_ROUND_1, S.ISSUE_DEBATE_ROUND_2)
TRANSITIONS: list[Transition] = [
    Transition(S.BOOT, E.NEW_GAME_CREATED, S.ROLE_SELECTION, "system"),
    Transition(S.BOOT, E.LOAD_EXISTING_GAME, S.RESUME, "system"),
    Transition(S.RESUME, E.RESUME_READY, None, "system", action=_resume_ready, payload=ResumeTarget),
    Transition(S.ROLE_SELECTION, E.ROLE_CONFIRMED, S.ROUND_1_SETUP, "human", action=_confirm_role,
               payload=RoleChoice, who=_student, purpose="role"),
    Transition(S.ROUND_1_SETUP, E.ROUND_1_READY, S.ROUND_1_OPENING_STATEMENTS, "system", action=_round1_intro),
    Transition(S.ROUND_1_OPENING_STATEMENTS, E.OPENING_PRESENTED, S.ROUND_1_OPENING_STATEMENTS, "advance",
               _openings_left, _present_opening, who=_next_opener, purpose="opening"),
    Transition(S.ROUND_1_OPENING_STATEMENTS, E.ROUND_1_COMPLETE, S.ROUND_2_SETUP, "system",
               _openings_done, _round1_close),
    Transition(S.ROUND_2_SETUP, E.ROUND_2_READY, S.ROUND_2_SELECT_CONVO_1, "system", _one_student, _round2_intro),
    # Several students: each runs the four Round 2 states below in a lane of its own, side by side (`_apply_in_lane`).
    Transition(S.ROUND_2_SETUP, E.ROUND_2_TALKS_OPENED, S.ROUND_2_TALKS, "system", _several_students, _open_lanes),
    Transition(S.ROUND_2_SELECT_CONVO_1, E.CONVO_1_STARTED, S.ROUND_2_CONVERSATION_ACTIVE, "human",
               action=_start_convo, payload=TalkStart, who=_round2_student, purpose="partner"),
    Transition(S.ROUND_2_CONVERSATION_ACTIVE, E.HUMAN_MESSAGE_SUBMITTED, S.ROUND_2_CONVERSATION_ACTIVE, "human",
               _human_to_talk, _talk_message, payload=Spoken, who=_talker, purpose=_talk_purpose),
    Transition(S.ROUND_2_CONVERSATION_ACTIVE, E.AI_MESSAGE_COMMITTED, S.ROUND_2_CONVERSATION_ACTIVE, "ai",
               _partner_to_talk, _talk_message, payload=Spoken, who=_talker, purpose=_talk_purpose),
    Transition(S.ROUND_2_CONVERSATION_ACTIVE, E.CONVO_1_CLOSED, S.ROUND_2_SELECT_CONVO_2, "system",
               _convo_closed(0)),
    Transition(S.ROUND_2_CONVERSATION_ACTIVE, E.CONVO_2_CLOSED, S.ROUND_2_WRAP_UP, "system", _convo_closed(1)),
    Transition(S.ROUND_2_SELECT_CONVO_2, E.CONVO_2_STARTED, S.ROUND_2_CONVERSATION_ACTIVE, "human",
               action=_start_convo, payload=TalkStart, who=_round2_student, purpose="partner"),
    Transition(S.ROUND_2_SELECT_CONVO_2, E.CONVO_2_SKIPPED, S.ROUND_2_WRAP_UP, "human", who=_round2_student,
               purpose="partner", declines=True),
    Transition(S.ROUND_2_WRAP_UP, E.ROUND_2_NEXT_STUDENT, S.ROUND_2_SELECT_CONVO_1, "system", _more_talkers,
               _next_talker),
    Transition(S.ROUND_2_WRAP_UP, E.ROUND_2_COMPLETE, S.ROUND_3_SETUP, "system", _last_talker, _round2_close),
    Transition(S.ROUND_2_TALKS, E.ROUND_2_COMPLETE, S.ROUND_3_SETUP, "system", _lanes_done, _round2_close),
    Transition(S.ROUND_3_SETUP, E.ROUND_3_READY, S.ISSUE_INTRO, "system", action=_round3_start),
    Transition(S.ISSUE_INTRO, E.ISSUE_INTRO_COMPLETE, S.ISSUE_DEBATE_ROUND_1, "human", action=_set_placement,
               payload=PlacementChoice, who=_student, purpose="placement"),
    *[
        t
        for state in _DEBATE
        for t in (
            Transition(state, E.HUMAN_TURN_SPEAK, state, "human", _human_speaks, _give_floor(_speech(human=True)),
                       payload=Spoken, who=current_speaker, purpose="speech"),
            Transition(state, E.HUMAN_TURN_SKIP, state, "human", _human_speaks, _pass, who=current_speaker,
                       purpose="speech", declines=True),
            # The seat (its model) decides to speak or pass; `ai_has_something_new` is the hint it is given.
            Transition(state, E.AI_TURN_COMMITTED, state, "ai", _ai_speaks, _give_floor(_speech(human=False)),
                       payload=Spoken, who=current_speaker, purpose="speech"),
            Transition(state, E.AI_TURN_SKIPPED, state, "ai", _ai_speaks, _pass, who=current_speaker,
                       purpose="speech", declines=True),
        )
    ],
    Transition(S.ISSUE_DEBATE_ROUND_1, E.DEBATE_ROUND_1_COMPLETE, S.ISSUE_DEBATE_ROUND_2, "system",
               _debate_done, _debate_round_2),
    Transition(S.ISSUE_DEBATE_ROUND_2, E.DEBATE_ROUND_2_COMPLETE, S.ISSUE_POSITION_FINALIZATION, "system",
               _debate_done),
    Transition(S.ISSUE_POSITION_FINALIZATION, E.POSITIONS_FINALIZED, S.ISSUE_PROPOSAL_SELECTION, "system",
               action=_finalize_positions),
    Transition(S.ISSUE_PROPOSAL_SELECTION, E.PROPOSAL_MADE, S.ISSUE_VOTE, "system", action=_propose),
    Transition(S.ISSUE_VOTE, E.HUMAN_VOTE_CAST, S.ISSUE_VOTE, "human", _human_votes, _cast(human=True),
               payload=BallotCast, who=next_voter, purpose="vote"),
    Transition(S.ISSUE_VOTE, E.AI_VOTE_COMMITTED, S.ISSUE_VOTE, "ai", _ai_votes, _cast(human=False),
               who=next_voter, purpose="vote"),
    Transition(S.ISSUE_VOTE, E.VOTE_COMPLETE, S.ISSUE_RESOLUTION, "system", _all_voted, _complete_vote),
    Transition(S.ISSUE_RESOLUTION, E.NEXT_ISSUE, S.ISSUE_INTRO, "system", _more_issues, _next_issue),
    Transition(S.ISSUE_RESOLUTION, E.ALL_ISSUES_RESOLVED, S.ROUND_3_COMPLETE, "system", _last_issue,
               _round3_close),
    Transition(S.ROUND_3_COMPLETE, E.ROUND_3_ENDED, S.REVIEW, "system"),
    Transition(S.REVIEW, E.REQUEST_AI_SUMMARY, S.REVIEW, "system", _summary_not_requested, _request_summary),
    Transition(S.REVIEW, E.AI_SUMMARY_READY, S.REVIEW, "ai", _summary_pending, _store_summary, payload=Summary,
               purpose="summary"),
]  # fmt: skip
_BY_KEY: dict[tuple[str, str], Transition] = {
    (t.source, t.event): t for t in TRANSITIONS
}  # Status/Event are str
_BY_SOURCE: dict[str, list[Transition]] = {s: [t for t in TRANSITIONS if t.source == s] for s in Status}
EVENTS = tuple(dict.fromkeys(t.event for t in TRANSITIONS))
# The student's events (made on the page or by a bot) and the payload fields each may carry, from the table.
STUDENT_EVENTS: dict[str, tuple[str, ...]] = {
    t.event: t.payload.student_fields() for t in TRANSITIONS if t.actor in ("human", "advance")
}
DECLINES = frozenset(t.event for t in TRANSITIONS if t.declines)
# A lane runs the one-student machine's Round 2 rows for its seat (the game's own rows on from its wrap-up, the next
# student or the round's end, are not a lane's).
_LANE_ROWS: dict[str, list[Transition]] = {
    phase: [
        t for t in _BY_SOURCE[phase] if t.event not in (Event.ROUND_2_NEXT_STUDENT, Event.ROUND_2_COMPLETE)
    ]
    for phase in LANE_PHASES
}
LANE_EVENTS = frozenset(t.event for rows in _LANE_ROWS.values() for t in rows)


def allowed_events(state: GameState, seat: str | None = None) -> list[Event]:
    """Events whose guard passes now (payload checks aside), in table order; in Round 2's lanes, those of the lane
    `seat` is in."""
    if state.round2.lanes and state.status == Status.ROUND_2_TALKS:
        step = lane_step(state, seat)
        return list(step.events) if step is not None else []
    return [t.event for t in _open_rows(state)]


# --- Round 2's lanes (a game several students share) -------------------------------------------------------------


def focused(state: GameState, seat: str | None) -> GameState:
    """`state` focused on `seat`'s lane (what `active_conversation`, `round2_student` and the Round 2 rows' guards
    read): a shallow copy for reading, never changed."""
    if seat is None or not state.round2.lanes or state.round2.focus == seat:
        return state
    return state.model_copy(update={"round2": state.round2.model_copy(update={"focus": seat})})


def _owner(state: GameState, lane: Lane) -> Lane:
    """The lane whose rows move `lane`'s seat now: the lane of the student who chose the talk it was chosen for,
    else its own."""
    if lane.joined is None:
        return lane
    owner = next((other for other in state.round2.lanes if other.talk == lane.joined), None)
    assert owner is not None, f"the talk {lane.joined} has no lane"
    return owner


def _lane_rows(state: GameState, lane: Lane) -> tuple[GameState, list[Transition]]:
    """The lane's open rows, on the state focused on it."""
    seen = focused(state, lane.seat)
    return seen, [t for t in _LANE_ROWS[lane.phase] if t.guard(seen)]


def _step_in(state: GameState, lane: Lane) -> Step | None:
    """What `lane` waits for (None: its student's talks are over)."""
    seen, rows = _lane_rows(state, lane)
    if not rows:
        return None
    first = rows[0]
    assert all(t.actor == first.actor for t in rows), f"two actors at once in {lane}: {rows}"
    events = tuple(t.event for t in rows)
    return Step(first.actor, events, first.who(seen), first.purpose_in(seen), lane=lane.seat)


def lane_step(state: GameState, seat: str | None) -> Step | None:
    """The step of the lane `seat` is in: its own, or the talk another student chose it for (None: no lane, or
    its student's talks are over and nobody has chosen it)."""
    lane = state.lane(seat)
    return _step_in(state, _owner(state, lane)) if lane is not None else None


def lane_steps(state: GameState) -> list[Step]:
    """Every lane's step, in seat order (a talk between two students once, in the lane of the one who chose it)."""
    steps = (_step_in(state, lane) for lane in state.round2.lanes if lane.joined is None)
    return [step for step in steps if step is not None]


def _apply_in_lane(
    scenario: Scenario, state: GameState, event: str, raw: dict[str, Any], own: bool
) -> Outcome:
    """One of Round 2's events in the lane of the seat it names (`seat`): the one-student machine's row for the
    lane's state, applied on the state focused on that lane; the lane, not the game, takes the row's target. An
    event made after an older event than the lane's last (`seen`) is refused: its page or step was out of date."""
    seat = raw.get("seat")
    lane = state.lane(seat) if isinstance(seat, str) else None
    if lane is None:
        raise TalkRefusal(state.status, event, TalkRefusal.NO_LANE)
    owner = _owner(state, lane)
    before, rows = _lane_rows(state, owner)
    t = next((row for row in rows if row.event == event), None)
    if t is None:
        raise IllegalEvent(state.status, event, [row.event for row in rows])
    if t.actor == "human" and t.who(before) != seat:
        raise TalkRefusal(state.status, event, InvalidMove.WRONG_ACTOR)
    seen = raw.get("seen")
    if isinstance(seen, int) and lane.since > seen:
        raise TalkRefusal(state.status, event, TalkRefusal.LANE_MOVED)
    checked = t.payload.read(state.status, t.event, raw, scenario, before)
    actor = _actor_label(t, before, raw)
    new = state if own else GameState.model_validate(state.model_dump())
    new.round2.focus = owner.seat
    ctx = _Ctx(scenario, new, t.event, checked, raw)
    t.action(ctx)
    if checked.stand_in:
        _mark_stand_in(ctx, t.who(before))
    new.event_seq += 1
    _lane_moved(new, owner.seat, t)
    return Outcome(
        seq=new.event_seq, event=t.event, actor=actor, source=state.status, target=new.status, payload=raw,
        state=new, entries=ctx.entries, stance_changes=ctx.changes, vote=ctx.vote, judgements=ctx.judgements,
    )  # fmt: skip


def _lane_moved(st: GameState, seat: str, t: Transition) -> None:
    """After a lane event: the lane takes the row's state; a talk's start takes in the student partner it chose
    (their own lane waits meanwhile) and its close lets them go; every lane the event touched changed now."""
    lane = st.lane(seat)
    assert lane is not None and t.target is not None
    if t.event in (Event.CONVO_1_STARTED, Event.CONVO_2_STARTED):
        lane.talk = len(st.round2.conversations) - 1
    closing = t.actor == "system"  # a lane's only automatic events close its talk
    touched = [lane]
    if lane.talk is not None:
        other = st.lane(st.round2.conversations[lane.talk].partner)  # a student partner's lane
        if other is not None:
            other.joined = None if closing else lane.talk
            touched.append(other)
        if closing:
            lane.talk = None
    lane.phase = t.target  # type: ignore[assignment]  # a lane row's target is one of the lane's states
    for each in touched:
        each.since = st.event_seq


def _open_rows(state: GameState) -> list[Transition]:
    return [t for t in _BY_SOURCE.get(state.status, ()) if t.guard(state)]


def transition_for(state: GameState, event: str) -> Transition:
    t = _BY_KEY.get((state.status, event))
    if t is None or not t.guard(state):
        raise IllegalEvent(state.status, event, allowed_events(state))
    return t


def apply(
    scenario: Scenario,
    state: GameState,
    event: str,
    payload: dict[str, Any] | None = None,
    *,
    own: bool = False,
) -> Outcome:
    """Apply one event to a copy of `state`. Raises IllegalEvent/InvalidMove and then changes nothing.

    `own`: `state` is the caller's private object, which nobody else holds (an outcome's state the caller applies
    the next event to, `platform.run`): it is changed in place, and the earlier outcome's state is this one."""
    raw = dict(payload or {})
    if state.status == Status.ROUND_2_TALKS and event in LANE_EVENTS:
        return _apply_in_lane(scenario, state, event, raw, own)
    t = transition_for(state, event)
    checked = t.payload.read(state.status, t.event, raw, scenario, state)
    if checked.seat is not None or checked.seen is not None:  # a lane's fields, outside Round 2's lanes
        raise InvalidMove(state.status, t.event, InvalidMove.UNKNOWN_FIELD)
    actor, source = _actor_label(t, state, raw), state.status
    # A dump/validate round trip is a deep copy at a quarter of copy.deepcopy's cost (still a tenth of a turn).
    new = state if own else GameState.model_validate(state.model_dump())
    ctx = _Ctx(scenario, new, t.event, checked, raw)
    t.action(ctx)
    if checked.stand_in:
        _mark_stand_in(ctx, t.who(state))
    new.status = t.target or Status(raw["status"])
    new.event_seq += 1
    return Outcome(
        seq=new.event_seq, event=t.event, actor=actor, source=source, target=new.status, payload=raw, state=new,
        entries=ctx.entries, stance_changes=ctx.changes, vote=ctx.vote, judgements=ctx.judgements,
    )  # fmt: skip


STAND_IN_MARK = "(AI stand-in) "


def _mark_stand_in(c: _Ctx, seat: str | None) -> None:
    """A student's move the seat's AI stand-in made: its own words (or, for a choice, the chair's line about it)
    say so in the transcript."""
    if not c.entries:
        return
    own = [e for e in c.entries if e.speaker == seat] or c.entries[:1]
    for entry in own:
        entry.text = STAND_IN_MARK + entry.text


def _actor_label(t: Transition, before: GameState, raw: dict[str, Any]) -> str:
    if t.actor == "human":
        seat = t.who(before)
        if raw.get("stand_in"):
            return f"stand-in:{seat}"
        return f"human:{seat}" if seat else "human"
    if t.actor == "ai":
        return f"ai:{t.who(before) or 'debrief'}"
    return t.actor


def new_game(seed: int) -> GameState:
    return GameState(seed=seed)


INDIFFERENT_FIRMNESS = 0.25


def ai_has_something_new(scenario: Scenario, state: GameState, role: str) -> bool:
    """First debate round: every seat with a stake speaks (a seat nearly indifferent to the issue passes).
    Second round: only seats that contest the option currently leading among countries."""
    issue = state.active_issue
    if issue is None:
        return False
    stance = state.stances[role][issue.issue_id]
    if issue.debate_round == 1:
        return stance.firmness >= INDIFFERENT_FIRMNESS
    leading, _ = rules.select_proposal(scenario, state, issue.issue_id)
    return stance.preferred != leading


def next_step(scenario: Scenario, state: GameState) -> Step:
    """Who acts next, and with which events: the table's rows whose guards pass now (exactly one actor)."""
    if state.status == Status.BOOT:  # a stored game boots through `resume`; a fresh state is a new game
        return Step("system", (Event.NEW_GAME_CREATED,))
    if state.status == Status.ROUND_2_TALKS:
        return _lanes_step(state)
    rows = _open_rows(state)
    if not rows:
        assert state.status == Status.REVIEW, f"no way on from {state.status}"
        return Step("done")
    first = rows[0]
    assert all(t.actor == first.actor for t in rows), f"two actors at once in {state.status}: {rows}"
    assert first.actor != "system" or len(rows) == 1, f"no unique system event in {state.status}: {rows}"
    return Step(first.actor, tuple(t.event for t in rows), first.who(state), first.purpose_in(state))


def _lanes_step(state: GameState) -> Step:
    """Round 2's lanes as one step for whoever asks who acts next: a lane's own close first (a system step, taken
    at once), then an AI partner's reply (the driver plays them in turn), then a student's move; the round's end
    once every lane is over. Every lane's step rides along (`lanes`): the students whose lane waits on them may move
    whatever this step says."""
    steps = lane_steps(state)
    if not steps:
        (row,) = _open_rows(state)
        return Step("system", (row.event,))
    chosen = next(s for kind in ("system", "ai", "human") for s in steps if s.kind == kind)
    return replace(chosen, lanes=tuple(steps))


def step_payload(step: Step) -> dict[str, Any]:
    """What a step's event carries besides the mover's own choice: the lane's seat, in Round 2's lanes."""
    return {"seat": step.lane} if step.lane else {}


UPGRADABLE_SCHEMAS = (1, 2)
REQUIRED_FIELDS = (
    "status",
    "seed",
    "schema_version",
    "transcript_seq",
    "event_seq",
    "round1",
    "round2",
    "round3",
)


def resume(scenario: Scenario, snapshot: dict[str, Any]) -> GameState:
    """BOOT -> RESUME -> stored status: validate a stored snapshot and return the state to continue from."""
    missing = [f for f in REQUIRED_FIELDS if f not in snapshot]
    if missing:
        raise ResumeError(f"Snapshot is missing required fields: {', '.join(missing)}.")
    if snapshot["schema_version"] in UPGRADABLE_SCHEMAS:
        # Version 1 lacked the statements record (`stated`); it starts empty, as in a game where nobody has
        # spoken yet, and fills from the next message on. Version 2 had one student: no co-players, and each
        # talk's student is `human_role` (an empty `talker`).
        snapshot = {**snapshot, "schema_version": SCHEMA_VERSION}
    if snapshot["schema_version"] != SCHEMA_VERSION:
        raise ResumeError(
            f"Snapshot schema version {snapshot['schema_version']} is not supported (expected {SCHEMA_VERSION})."
        )
    try:
        stored = GameState.model_validate(snapshot)
    except ValidationError as exc:
        raise ResumeError(f"Snapshot is not a valid game state ({exc.error_count()} errors).") from exc
    if stored.status not in RESUMABLE:
        raise ResumeError(f"Snapshot status {stored.status} cannot be resumed.")
    problems = consistency_problems(scenario, stored)
    if problems:
        raise ResumeError(f"Snapshot is inconsistent with its status {stored.status}: {'; '.join(problems)}.")
    booting = stored.model_copy(update={"status": Status.BOOT})
    loading = apply(scenario, booting, Event.LOAD_EXISTING_GAME).state
    ready = apply(scenario, loading, Event.RESUME_READY, {"status": stored.status}).state
    # The boot transitions are session bookkeeping, not game history: keep the stored counters.
    return ready.model_copy(update={"event_seq": stored.event_seq})
