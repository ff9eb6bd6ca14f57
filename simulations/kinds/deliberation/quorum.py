"""Seed 004's quorum rules and final verdict mapping (pure).

- Abstainers are excluded from the denominator: share = SYNTHESIS / (members - ABSTAIN).
- Any VETO (>= 1) overrides SYNTHESIS: the outcome is VETO (the business driver may attempt a compromise).
- SYNTHESIS share >= 2/3 without a veto: CONCLUSION; a majority of abstainers adds a warning.
- Otherwise the quorum is not met (the machine re-debates while rounds remain, else INCONCLUSIVE).

Shares are exact fractions so that 2/3 is compared exactly, not as 0.666...
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction

from .state import ConclusionCause, QuorumRecord, Stance, Verdict

THRESHOLD = Fraction(2, 3)
MAJORITY_ABSTAIN_WARNING = (
    "Majority abstained: the conclusion rests on {voting} of {members} elected members; "
    "escalate to a human reviewer if that is too few."
)


class QuorumOutcome(StrEnum):
    VETO = "VETO"
    CONCLUSION = "CONCLUSION"
    NOT_MET = "NOT_MET"


@dataclass(frozen=True)
class Tally:
    members: int
    synthesis: int = 0
    abstain: int = 0
    veto: int = 0
    objections: int = 0

    def __post_init__(self) -> None:
        counted = self.synthesis + self.abstain + self.veto + self.objections
        if min(self.members, self.synthesis, self.abstain, self.veto, self.objections) < 0:
            raise ValueError("counts cannot be negative")
        if counted != self.members:
            raise ValueError(f"{counted} ballots counted for {self.members} elected members")

    @property
    def effective(self) -> int:
        """The denominator: abstainers are excluded."""
        return self.members - self.abstain


@dataclass(frozen=True)
class QuorumResult:
    tally: Tally
    outcome: QuorumOutcome
    share: Fraction | None  # SYNTHESIS / effective; None when everyone abstained
    majority_abstain_warning: bool

    def record(self) -> QuorumRecord:
        t = self.tally
        return QuorumRecord(
            members=t.members, synthesis=t.synthesis, abstain=t.abstain, veto=t.veto, objections=t.objections,
            effective=t.effective, outcome=self.outcome.value,
            majority_abstain_warning=self.majority_abstain_warning,
        )  # fmt: skip


def tally_ballots(members: Sequence[str], stances: Mapping[str, Stance]) -> Tally:
    """Count the stances of the elected members (every member must have one)."""
    missing = [m for m in members if m not in stances]
    if missing:
        raise ValueError(f"no ballot from {', '.join(missing)}")
    counts = {s: sum(1 for m in members if stances[m] == s) for s in Stance}
    return Tally(
        members=len(members), synthesis=counts[Stance.SYNTHESIS], abstain=counts[Stance.ABSTAIN],
        veto=counts[Stance.VETO], objections=counts[Stance.OBJECT],
    )  # fmt: skip


def check_quorum(tally: Tally) -> QuorumResult:
    share = Fraction(tally.synthesis, tally.effective) if tally.effective else None
    warning = 2 * tally.abstain > tally.members
    if tally.veto >= 1:
        outcome = QuorumOutcome.VETO  # a single veto overrides any amount of synthesis
    elif share is not None and share >= THRESHOLD:
        outcome = QuorumOutcome.CONCLUSION
    else:
        outcome = QuorumOutcome.NOT_MET
    return QuorumResult(tally=tally, outcome=outcome, share=share, majority_abstain_warning=warning)


def verdict_for(cause: ConclusionCause, *, fix_items: Sequence[str]) -> Verdict:
    """The seed's final verdict mapping."""
    if cause == ConclusionCause.SYNTHESIS:
        return Verdict.REQUEST_CHANGES if fix_items else Verdict.APPROVED
    if cause == ConclusionCause.IRRECONCILABLE_VETO:
        return Verdict.REQUEST_CHANGES
    return Verdict.INCONCLUSIVE  # quorum not met by the 5-round limit
