"""The authoritative state of one game, as pydantic models. Stored whole in every checkpoint.

The state never holds the transcript (that lives in its own append-only table), so a snapshot stays the same size
however long the game runs.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

# 2: `stated` and `stated_in_talks`; 3: several students (`co_players`, talks' `talker`; Round 2's lanes came
# later, stored only where used, so a version 3 state without them reads as before).
SCHEMA_VERSION = 3


class Status(StrEnum):
    """Where a game stands (seed 002 §5); the machine's table (machine.TRANSITIONS) moves between these."""

    BOOT = "BOOT"
    RESUME = "RESUME"
    ROLE_SELECTION = "ROLE_SELECTION"
    ROUND_1_SETUP = "ROUND_1_SETUP"
    ROUND_1_OPENING_STATEMENTS = "ROUND_1_OPENING_STATEMENTS"
    ROUND_2_SETUP = "ROUND_2_SETUP"
    ROUND_2_SELECT_CONVO_1 = "ROUND_2_SELECT_CONVO_1"
    ROUND_2_CONVERSATION_ACTIVE = "ROUND_2_CONVERSATION_ACTIVE"
    ROUND_2_SELECT_CONVO_2 = "ROUND_2_SELECT_CONVO_2"
    ROUND_2_WRAP_UP = "ROUND_2_WRAP_UP"
    # A game several students share: every student's Round 2 at once, each a lane (`Round2.lanes`) that runs the
    # four states above for its seat.
    ROUND_2_TALKS = "ROUND_2_TALKS"
    ROUND_3_SETUP = "ROUND_3_SETUP"
    ISSUE_INTRO = "ISSUE_INTRO"
    ISSUE_DEBATE_ROUND_1 = "ISSUE_DEBATE_ROUND_1"
    ISSUE_DEBATE_ROUND_2 = "ISSUE_DEBATE_ROUND_2"
    ISSUE_POSITION_FINALIZATION = "ISSUE_POSITION_FINALIZATION"
    ISSUE_PROPOSAL_SELECTION = "ISSUE_PROPOSAL_SELECTION"
    ISSUE_VOTE = "ISSUE_VOTE"
    ISSUE_RESOLUTION = "ISSUE_RESOLUTION"
    ROUND_3_COMPLETE = "ROUND_3_COMPLETE"
    REVIEW = "REVIEW"


Placement = Literal["first", "random", "skip"]
Ballot = Literal["yes", "no"]
Starter = Literal["human", "partner"]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


class PendingCondition(Model):
    accept: str
    if_offered: list[str] = Field(default_factory=list)
    if_adopted: str | None = None


class Stance(Model):
    preferred: str
    acceptable: list[str]
    firmness: float
    red_lines: list[str] = Field(default_factory=list)
    conditions: list[PendingCondition] = Field(default_factory=list)
    # option id -> speaker id -> accumulated pressure (capped per speaker, so bounded in size)
    pressure: dict[str, dict[str, float]] = Field(default_factory=dict)


class Round1(Model):
    speaker_order: list[str] = Field(default_factory=list)
    openings: dict[str, str] = Field(default_factory=dict)  # role id -> opening variant id
    cursor: int = 0


class Conversation(Model):
    index: int  # the talking student's first (0) or second (1) talk
    partner: str
    # The student's seat on the "human" side; None in a game stored before several students could play (its
    # student, `human_role`). The partner may be a student too (a class group's game).
    talker: str | None = None
    starter: Starter
    # OPEN -> (chair interrupts) -> FINAL_TURNS -> CLOSED; INTERRUPT is the instant of the chair's line
    phase: Literal["OPEN", "INTERRUPT", "FINAL_TURNS", "CLOSED"] = "OPEN"
    human_turns: int = 0
    partner_turns: int = 0
    human_final: bool = False
    partner_final: bool = False
    next_speaker: Starter = "human"
    # Set when one side insulted the other (dialogue.is_hostile): the AI partner trades no more in this talk.
    cooled: bool = False


# A lane's own state: one of the one-student machine's Round 2 states (docs/kinds/negotiation.md, "Several
# students in one game").
LanePhase = Literal[
    "ROUND_2_SELECT_CONVO_1", "ROUND_2_CONVERSATION_ACTIVE", "ROUND_2_SELECT_CONVO_2", "ROUND_2_WRAP_UP"
]
LANE_PHASES: tuple[str, ...] = LanePhase.__args__  # type: ignore[attr-defined]


class Lane(Model):
    """One student's Round 2 in a game several students share, side by side with the others': the one-student
    machine's Round 2 states, run for this seat (`phase`)."""

    seat: str
    phase: LanePhase = "ROUND_2_SELECT_CONVO_1"
    requests: list[str] = Field(default_factory=list)  # the delegations that asked to talk with this seat
    talk: int | None = None  # this seat's own talk (in `Round2.conversations`) from its start to its close
    # Another student's talk this seat was chosen for: it writes that talk's partner side, and its own `phase`
    # waits until the talk ends.
    joined: int | None = None
    # The event after which this lane last changed (its student's floor, or a talk it is in): a move made on a
    # page drawn before that is stale, and a turn limit counts from that event.
    since: int = 0


class Round2(Model):
    requests: list[str] = Field(default_factory=list)  # the delegations that asked to talk with `student`
    conversations: list[Conversation] = Field(default_factory=list)
    student: int = 0  # which student (in `GameState.humans`) chooses their talks now
    # Several students' talks side by side (status ROUND_2_TALKS): one lane a student, in seat order. Empty in a
    # game of one student (and in a group game stored before lanes, whose Round 2 is one student at a time).
    lanes: list[Lane] = Field(default_factory=list)
    # The lane the last lane event moved, which `GameState.active_conversation` and `round2_student` read (the
    # machine focuses a copy of the state on the lane a step or a page is about: `machine.focused`).
    focus: str | None = None

    @model_serializer(mode="wrap")
    def _without_lanes(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """A game of one student stores its Round 2 exactly as before lanes existed (its checkpoints and exports
        byte for byte the same): the lanes' fields are left out while there are none."""
        data: dict[str, object] = handler(self)
        if not self.lanes:
            data.pop("lanes", None)
            data.pop("focus", None)
        return data


class IssueState(Model):
    issue_id: str
    placement: Placement | None = None
    order_round1: list[str] = Field(default_factory=list)
    order_round2: list[str] = Field(default_factory=list)
    debate_round: int = 0
    cursor: int = 0
    proposal: str | None = None
    supporters: list[str] = Field(default_factory=list)
    # Why the chair tabled `proposal` (tabling.py): the option with most support it set aside, if it did, and
    # the voting countries that had said in public they could not accept that option.
    set_aside: str | None = None
    blockers: list[str] = Field(default_factory=list)
    package: list[str] = Field(default_factory=list)  # offers made in public that met a country's stated need
    vote_order: list[str] = Field(default_factory=list)
    ballots: dict[str, Ballot] = Field(default_factory=dict)
    adopted: bool | None = None


class Round3(Model):
    issues: list[IssueState] = Field(default_factory=list)
    active_issue_index: int = 0


class Commitment(Model):
    """A trade struck in a private talk: `by` promised to support `promise` if `to` supports `in_return`."""

    by: str
    to: str
    promise: str
    in_return: str
    made_seq: int
    status: Literal["open", "kept", "broken", "lapsed"] = "open"
    added_acceptable: bool = False  # whether `to` took `in_return` on because of this trade


class PublicWord(Model):
    """What the chair has heard each delegation say in public (openings and debate speeches), per issue: the
    options it backs or can accept, those it cannot accept, and what it said it needs to accept an option; and
    the offers made in public by seats able to make them. The chair tables proposals from this and from the
    count of positions, never from an AI seat's private stance (tabling.py)."""

    allows: dict[str, dict[str, list[str]]] = Field(default_factory=dict)  # role -> issue -> option ids
    refuses: dict[str, dict[str, list[str]]] = Field(default_factory=dict)  # role -> issue -> option ids
    needs: dict[str, dict[str, list[str]]] = Field(default_factory=dict)  # role -> option id -> offer ids
    offered: dict[str, list[str]] = Field(default_factory=dict)  # offer id -> the seats that made it


class GameState(Model):
    schema_version: int = SCHEMA_VERSION
    # Validated as a Status (an unknown status is refused); annotated str so a copy made with a plain string
    # (`model_copy(update={"status": ...})`) serialises without warnings. Status members are strs.
    status: Annotated[str, AfterValidator(Status)] = Status.BOOT
    seed: int
    human_role: str | None = None  # the (first) student's seat
    human_variant: str | None = None
    # The seats other students hold in a class group's game, in the order they take their Round 2 talks.
    co_players: list[str] = Field(default_factory=list)
    transcript_seq: int = 0  # sequence number of the last transcript entry
    event_seq: int = 0  # sequence number of the last event
    round1: Round1 = Field(default_factory=Round1)
    round2: Round2 = Field(default_factory=Round2)
    round3: Round3 = Field(default_factory=Round3)
    stances: dict[str, dict[str, Stance]] = Field(default_factory=dict)
    offers_heard: dict[str, list[str]] = Field(default_factory=dict)  # role -> offers credibly made to it
    commitments: list[Commitment] = Field(default_factory=list)
    # What each delegation has said it backs, per issue (the judge's reading of its own words): in public
    # (openings and debate speeches) and, apart, in private talks (speaker -> listener -> issue -> option), which
    # only the two parties know.
    stated: dict[str, dict[str, str]] = Field(default_factory=dict)
    stated_in_talks: dict[str, dict[str, dict[str, str]]] = Field(default_factory=dict)
    public: PublicWord = Field(default_factory=PublicWord)  # absent from games stored before it: empty
    summary: str | None = None
    summary_requested: bool = False

    @property
    def humans(self) -> list[str]:
        """Every seat a student holds: the first student's, then the others'."""
        return [self.human_role, *self.co_players] if self.human_role else []

    @property
    def round2_student(self) -> str | None:
        """The student whose Round 2 talks are under way (or about to be chosen); with lanes, the focused lane's."""
        if self.round2.lanes:
            return self.round2.focus
        humans = self.humans
        return humans[self.round2.student] if self.round2.student < len(humans) else None

    def talker_of(self, convo: Conversation) -> str | None:
        return convo.talker or self.human_role

    def lane(self, seat: str | None) -> Lane | None:
        return next((lane for lane in self.round2.lanes if lane.seat == seat), None)

    def lane_talk(self, seat: str | None) -> Conversation | None:
        """The talk `seat`'s lane is in (its own, or another student's it was chosen for), closed or not."""
        lane = self.lane(seat)
        if lane is None:
            return None
        index = lane.joined if lane.joined is not None else lane.talk
        return self.round2.conversations[index] if index is not None else None

    @property
    def active_conversation(self) -> Conversation | None:
        """The open talk: the last one; with lanes, the focused lane's."""
        if self.round2.lanes:
            convo = self.lane_talk(self.round2.focus)
            return convo if convo is not None and convo.phase != "CLOSED" else None
        convos = self.round2.conversations
        if convos and convos[-1].phase != "CLOSED":
            return convos[-1]
        return None

    @property
    def round2_phase(self) -> str:
        """Where Round 2 stands for the student choosing or talking: the game's status, or the focused lane's."""
        lane = self.lane(self.round2.focus) if self.round2.lanes else None
        return lane.phase if lane is not None else self.status

    @property
    def talk_requests(self) -> list[str]:
        """The delegations that asked to talk with the student choosing (with lanes, the focused lane's)."""
        lane = self.lane(self.round2.focus) if self.round2.lanes else None
        return lane.requests if lane is not None else self.round2.requests

    def free_to_talk(self, seat: str) -> bool:
        """`seat` may be chosen for a talk now: a delegation, or a student not in a talk (lanes only)."""
        lane = self.lane(seat)
        return lane is None or (lane.talk is None and lane.joined is None)

    @property
    def active_issue(self) -> IssueState | None:
        issues = self.round3.issues
        if 0 <= self.round3.active_issue_index < len(issues):
            return issues[self.round3.active_issue_index]
        return None
