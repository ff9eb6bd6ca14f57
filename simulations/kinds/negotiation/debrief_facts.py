"""The facts a debrief is written from: built by `simulations.kinds.negotiation.debrief` from a finished game, written up
by the offline debrief writer or given in prose to a real model. Pure pydantic (no Django), so the offline
provider can read them back from a prompt's facts block."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Fact(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class OptionFact(Fact):
    id: str
    label: str


class Aim(Fact):
    """What the student wanted on one issue: what they last said they wanted, else their brief's preference."""

    option: OptionFact
    source: Literal["said", "brief"]  # said: in their own messages or speeches (the opening is the persona's)
    quote: str = ""  # a short excerpt of the student's latest statement of it (source "said")


class OfferNeed(Fact):
    """One offer a seat's condition needs, and who could have made it."""

    label: str
    by: list[str] = Field(default_factory=list)  # names of the other seats able to make it credibly
    student_can: bool = False
    heard: bool = False  # the seat did hear it (then another part of its condition was missing)


class Unlock(Fact):
    """One way a seat would have accepted an option (from its scenario conditions, or a trade)."""

    kind: Literal["offer", "adoption", "trade"]
    offers: list[OfferNeed] = Field(default_factory=list)  # kind "offer": every one is needed
    after: OptionFact | None = None  # kind "adoption": once this option was adopted
    after_issue: int | None = None  # the issue number of `after`
    in_return: OptionFact | None = (
        None  # kind "trade": the student's support for this option, which it prefers
    )
    in_return_issue: int | None = None


class Holdout(Fact):
    """A seat that could not accept an option when it mattered, and what would have moved it."""

    seat: str
    student: bool = False  # the student's own seat (their own vote)
    red_line: bool = False  # arguments alone could never move it
    # How far the arguments it heard went towards what it needed to accept, in words (None: a red line): a band,
    # not a percentage, for the pressure model is a teaching device and its decimals mean nothing to a student.
    persuaded: Literal["far", "partway", "close"] | None = None
    unlocks: list[Unlock] = Field(default_factory=list)


class IssueFacts(Fact):
    number: int
    title: str
    aim: Aim
    proposal: OptionFact
    supporters: list[str]  # countries that preferred the proposal when the chair made it (or, when it set the
    # leading option aside, said in public they could accept it)
    # The option with most support the chair set aside for the proposal, and the countries that had said in
    # public they could not accept the option with most support (tabling.py).
    set_aside: OptionFact | None = None
    blockers: list[str] = Field(default_factory=list)
    adopted: bool
    # met: the aim was adopted; failed: the aim was proposed and rejected; blocked: another option was proposed
    # and rejected (no decision); missed: another option was adopted
    result: Literal["met", "failed", "blocked", "missed"]
    student_vote: Literal["yes", "no"] | None = None  # None: an NGO seat does not vote
    against: list[Holdout] = Field(default_factory=list)  # who voted no on the proposal
    # When the aim was not what was proposed: the countries that could not accept it at the end.
    aim_holdouts: list[Holdout] = Field(default_factory=list)
    # The student voted down a proposal their own brief would have let them accept under these conditions.
    own_unlocks: list[Unlock] = Field(default_factory=list)
    spoke: int = 0  # the student's speeches in this issue's debate
    placement: str | None = None


class Change(Fact):
    seat: str
    issue: int
    field: Literal["acceptable", "preferred"]
    option: OptionFact
    cause: Literal["arguments", "offer", "trade"]


class Influence(Fact):
    """One of the student's messages and the stance changes it caused."""

    seq: int
    where: str  # "private talk with Brazil" | "debate on issue 2"
    quote: str
    changes: list[Change]


class TradeFact(Fact):
    partner: str
    promise: OptionFact  # what the student promised to support
    promise_issue: int
    in_return: OptionFact  # what the partner took on in return
    in_return_issue: int
    status: Literal["open", "kept", "broken", "lapsed"]
    partner_vote: Literal["yes", "no"] | None = (
        None  # the partner's ballot when `in_return` was put to the vote
    )


class UnusedOffer(Fact):
    """An offer the student could make that a seat needed for what the student wanted, and never heard."""

    offer: str
    seat: str
    option: OptionFact
    issue: int
    also_needs: list[str] = Field(default_factory=list)


class DebriefRole(Fact):
    id: Literal["debrief"] = "debrief"  # every facts block names the seat it is written for


class DebriefFacts(Fact):
    purpose: Literal["summary"] = "summary"
    role: DebriefRole = Field(default_factory=DebriefRole)
    student: str
    persona: str
    votes: bool
    issues: list[IssueFacts]
    influence: list[Influence] = Field(default_factory=list)
    trades: list[TradeFact] = Field(default_factory=list)
    unused_offers: list[UnusedOffer] = Field(default_factory=list)
    talks_held: list[str] = Field(default_factory=list)
    talks_declined: list[str] = Field(default_factory=list)  # seats that asked to talk and got no talk

    @property
    def aims_met(self) -> int:
        return sum(1 for issue in self.issues if issue.result == "met")
