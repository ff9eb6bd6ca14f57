"""The state of one deliberation as pydantic models: rounds, submissions with their findings, ballots and the log.

Everything a report or a resume needs is in here; the machine works on a copy and never touches a database.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1
MAX_ROUNDS = 5  # seed 004 "Round Limit": at most five rounds, then CONCLUSION (INCONCLUSIVE)


class State(StrEnum):
    """The chairperson's states, named exactly as the seed names them."""

    PROPOSAL = "PROPOSAL"
    DEBATE = "DEBATE"
    VETO = "VETO"
    SYNTHESIS = "SYNTHESIS"
    ABSTAIN = "ABSTAIN"
    CONCLUSION = "CONCLUSION"


class Stance(StrEnum):
    """What one elected member says at the end of its turn in a debate round."""

    SYNTHESIS = "SYNTHESIS"  # agrees to the (possibly amended) change, maybe with fix items
    OBJECT = "OBJECT"  # disagrees without a veto: no consensus yet
    VETO = "VETO"  # absolute veto on a critical flaw (only seats with a veto right)
    ABSTAIN = "ABSTAIN"  # declares abstention (also forced when confidence is below the seat's threshold)


class Verdict(StrEnum):
    APPROVED = "APPROVED"
    REQUEST_CHANGES = "REQUEST_CHANGES"
    INCONCLUSIVE = "INCONCLUSIVE"


class ConclusionCause(StrEnum):
    """Which row of the seed's verdict mapping ended the deliberation."""

    SYNTHESIS = "SYNTHESIS"
    IRRECONCILABLE_VETO = "IRRECONCILABLE_VETO"
    ROUND_LIMIT = "ROUND_LIMIT"  # quorum not met, or a veto standing, when round 5 ends


class Severity(StrEnum):
    CRITICAL = "critical"  # a critical flaw: grounds for a veto
    MAJOR = "major"
    MINOR = "minor"


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Finding(Model):
    """One verification result: a tool's report mapped to a severity by the scenario's house rules."""

    tool: str  # detect-secrets | bandit | ruff | code-reading (the committee's own reading of the code)
    code: str  # e.g. "Secret Keyword", "B602", "F401"
    message: str
    line: int
    severity: Severity
    category: str  # the house rule's category: secret | security | correctness | style
    rule: str  # the house rule's id
    compromise_allowed: bool = False  # may the business driver offer a cost-of-delay compromise on it
    quote: str = (
        ""  # the line it is on, as written (a secret's line masked); "" in states stored before quotes
    )

    @property
    def critical(self) -> bool:
        return self.severity == Severity.CRITICAL

    def as_fix_item(self) -> str:
        return f"line {self.line}: {self.code} {self.message} ({self.tool})"


class Submission(Model):
    version: int = Field(ge=1)
    source: str  # sample | paste | file | diff
    label: str
    code: str  # the text that was checked (for a diff: the reconstructed new file text)
    findings: list[Finding] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # what the checks could not do (e.g. unparsable Python)

    @property
    def critical_findings(self) -> list[Finding]:
        return [f for f in self.findings if f.critical]


class Ballot(Model):
    seat: str
    stance: Stance
    declared: Stance  # what the seat asked for; differs from `stance` when low confidence forced ABSTAIN
    confidence: float
    text: str
    fix_items: list[str] = Field(default_factory=list)


class QuorumRecord(Model):
    members: int
    synthesis: int
    abstain: int
    veto: int
    objections: int
    effective: int  # members minus abstainers: the denominator
    outcome: str
    majority_abstain_warning: bool


class Compromise(Model):
    seat: str
    text: str
    conditions: list[str]


class RoundRecord(Model):
    number: int
    submission_version: int
    compromise: Compromise | None = None  # the business driver's conditions this round debates under
    ballots: dict[str, Ballot] = Field(default_factory=dict)
    quorum: QuorumRecord | None = None


class LogEntry(Model):
    """A line of the deliberation log; the report groups them into sections by (round, state)."""

    round: int
    state: State
    speaker: str  # a seat id
    kind: str  # opinion | action | mediation | transition
    text: str


class DeliberationState(Model):
    schema_version: int = SCHEMA_VERSION
    seed: int
    status: State = State.PROPOSAL
    round: int = 1
    human_seat: str | None = None
    # A class group's game: the seats its other students hold (`human_seat` is the first student's).
    co_players: list[str] = Field(default_factory=list)
    submissions: list[Submission] = Field(min_length=1)
    rounds: list[RoundRecord] = Field(default_factory=list)
    cursor: int = 0  # index into the scenario's speaking order within the current debate round
    proposer_declined: bool = False  # in VETO: the proposer said it will not amend
    business_declined: bool = False  # in VETO: the business driver said it has no compromise to offer
    verdict: Verdict | None = None
    cause: ConclusionCause | None = None
    fix_items: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    log: list[LogEntry] = Field(default_factory=list)
    event_seq: int = 0

    @property
    def humans(self) -> list[str]:
        """Every seat a person holds, the first student's first."""
        return [self.human_seat, *self.co_players] if self.human_seat else []

    @property
    def submission(self) -> Submission:
        return self.submissions[-1]

    @property
    def current_round(self) -> RoundRecord | None:
        return self.rounds[-1] if self.rounds and self.rounds[-1].number == self.round else None
