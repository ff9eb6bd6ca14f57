"""The rule-based stance judge: reads what a message says about options and offers, and moves listeners.

Deterministic and pure. It recognises options by id (``"4.1"``), label and the scenario's keywords, reads a
sentence as opposition when it carries a negation cue, and reads an offer when an offer keyword meets a
commitment cue in a sentence without negation. Only roles that can credibly make an offer (``can_offer``) count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import rules
from .scenario import Scenario
from .state import GameState, Stance

NEGATION_CUES = (
    "oppose", "cannot accept", "can't accept", "cannot support", "can't support", "reject", "against",
    "not support", "not accept", "no to ", "will not", "won't", "never", "unacceptable", "resist", "not ready",
    "do not", "don't", "cannot agree", "not agree", "premature",
)  # fmt: skip
COMMITMENT_CUES = (
    "offer", "provide", "commit", "pledge", "will ", "ready to", "prepared to", "guarantee", "contribute",
    "put on the table", "we can", "support a", "establish", "propose",
)  # fmt: skip
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


@dataclass
class Signals:
    support: dict[str, set[str]] = field(default_factory=dict)  # issue id -> option ids
    oppose: dict[str, set[str]] = field(default_factory=dict)
    offers: set[str] = field(default_factory=set)

    @property
    def empty(self) -> bool:
        return not (self.support or self.oppose or self.offers)


@dataclass(frozen=True)
class StanceChange:
    role: str
    issue: str
    field: str  # "acceptable" | "preferred"
    before: str
    after: str
    reason: str
    cause_seq: int | None

    def as_dict(self) -> dict[str, object]:
        return {
            "role": self.role,
            "issue": self.issue,
            "field": self.field,
            "before": self.before,
            "after": self.after,
            "reason": self.reason,
            "cause_seq": self.cause_seq,
        }


def _mention_strength(sentence: str, option_id: str, label: str, keywords: list[str]) -> int:
    """2: named by id or label; 1: by a keyword; 0: not mentioned."""
    if re.search(rf"(?<![\d.]){re.escape(option_id)}(?![\d])", sentence) or label.lower() in sentence:
        return 2
    return 1 if any(k.lower() in sentence for k in keywords) else 0


def read_signals(scenario: Scenario, text: str) -> Signals:
    """What a message supports, opposes and offers.

    Within one message, an option named explicitly (by id or label) outranks options of the same issue that are
    only alluded to by keyword, so "binding, because voluntary partnerships fell short" reads as support for the
    binding option alone.
    """
    signals = Signals()
    strength: dict[tuple[str, str, bool], int] = {}
    for raw in _SENTENCE.split(text):
        sentence = raw.lower().strip()
        if not sentence:
            continue
        negated = any(cue in sentence for cue in NEGATION_CUES)
        for issue in scenario.issues:
            for option in issue.options:
                level = _mention_strength(sentence, option.id, option.label, option.keywords)
                if level:
                    key = (issue.id, option.id, negated)
                    strength[key] = max(strength.get(key, 0), level)
        if not negated and any(cue in sentence for cue in COMMITMENT_CUES):
            for offer in scenario.offers:
                if any(k.lower() in sentence for k in offer.keywords):
                    signals.offers.add(offer.id)
    for issue in scenario.issues:
        for negated, bucket in ((False, signals.support), (True, signals.oppose)):
            found = {
                opt: lvl for (iss, opt, neg), lvl in strength.items() if iss == issue.id and neg == negated
            }
            if found:
                top = max(found.values())
                bucket[issue.id] = {opt for opt, lvl in found.items() if lvl == top}
    # An option both supported and opposed in one message is ambiguous: it counts as neither.
    for issue_id in list(signals.support):
        both = signals.support[issue_id] & signals.oppose.get(issue_id, set())
        signals.support[issue_id] -= both
        if not signals.support[issue_id]:
            del signals.support[issue_id]
    return signals


def credible_offers(scenario: Scenario, speaker: str, signals: Signals) -> set[str]:
    if speaker == scenario.chair.id:
        return set()
    return signals.offers & set(scenario.role(speaker).can_offer)


def apply_message(
    scenario: Scenario,
    state: GameState,
    *,
    speaker: str,
    listeners: list[str],
    text: str,
    private: bool,
    cause_seq: int,
) -> list[StanceChange]:
    """Move the stances of AI listeners in place; returns the changes with their reasons."""
    signals = read_signals(scenario, text)
    if signals.empty:
        return []
    offers = credible_offers(scenario, speaker, signals)
    influence = scenario.role(speaker).influence
    weight = influence * (rules.PRIVATE_WEIGHT if private else rules.PUBLIC_WEIGHT)
    cap = influence * rules.PRESSURE_CAP
    speaker_name = scenario.display_name(speaker)
    changes: list[StanceChange] = []
    for listener in listeners:
        if listener in (speaker, state.human_role, scenario.chair.id):
            continue
        if offers:
            heard = state.offers_heard.setdefault(listener, [])
            heard.extend(o for o in sorted(offers) if o not in heard)
            changes += _apply_offer_conditions(scenario, state, listener, speaker_name, cause_seq)
        for issue_id, options in sorted(signals.support.items()):
            if rules.resolved_issue(state, issue_id):
                continue  # a resolved issue is closed for good
            stance = state.stances[listener][issue_id]
            for option_id in sorted(options):
                per_speaker = stance.pressure.setdefault(option_id, {})
                per_speaker[speaker] = round(min(cap, per_speaker.get(speaker, 0.0) + weight), 4)
                changes += _maybe_move(
                    scenario, listener, issue_id, option_id, stance, speaker_name, cause_seq
                )
    return changes


def _maybe_move(
    scenario: Scenario, role: str, issue_id: str, option_id: str, stance: Stance, speaker_name: str, seq: int
) -> list[StanceChange]:
    changes: list[StanceChange] = []
    total = rules.total_pressure(stance, option_id)
    label = scenario.issue(issue_id).option(option_id).label
    movable = option_id not in stance.acceptable and option_id not in stance.red_lines
    if movable and total >= rules.accept_threshold(stance):
        stance.acceptable = sorted([*stance.acceptable, option_id], key=rules.option_sort_key)
        changes.append(
            StanceChange(role, issue_id, "acceptable", "", option_id,
                         f"persuaded by arguments for {label} (last from {speaker_name})", seq)
        )  # fmt: skip
    if option_id in stance.acceptable and option_id != stance.preferred:
        current = rules.total_pressure(stance, stance.preferred)
        if total >= rules.prefer_threshold(stance) and total > current:
            before = stance.preferred
            stance.preferred = option_id
            changes.append(
                StanceChange(role, issue_id, "preferred", before, option_id,
                             f"now prefers {label} after arguments (last from {speaker_name})", seq)
            )  # fmt: skip
    return changes


def _apply_offer_conditions(
    scenario: Scenario, state: GameState, role: str, speaker_name: str, seq: int | None
) -> list[StanceChange]:
    heard = set(state.offers_heard.get(role, []))
    changes: list[StanceChange] = []
    for issue_id, stance in state.stances[role].items():
        if rules.resolved_issue(state, issue_id):
            continue
        for cond in list(stance.conditions):
            if cond.if_offered and set(cond.if_offered) <= heard:
                stance.conditions.remove(cond)
                if cond.accept not in stance.acceptable:
                    stance.acceptable = sorted([*stance.acceptable, cond.accept], key=rules.option_sort_key)
                    offers = " and ".join(scenario.offer(o).label for o in cond.if_offered)
                    changes.append(
                        StanceChange(role, issue_id, "acceptable", "", cond.accept,
                                     f"its condition was met: {offers} offered (by {speaker_name})", seq)
                    )  # fmt: skip
    return changes


def apply_adoption_conditions(scenario: Scenario, state: GameState, cause_seq: int) -> list[StanceChange]:
    """At an issue's resolution: conditional commitments tied to adopted options take effect; others lapse."""
    adopted = rules.adopted_options(state)
    changes: list[StanceChange] = []
    for role in scenario.role_ids:
        if role == state.human_role:
            continue
        for issue_id, stance in state.stances[role].items():
            if rules.resolved_issue(state, issue_id):
                continue
            for cond in list(stance.conditions):
                if cond.if_adopted and cond.if_adopted in adopted:
                    stance.conditions.remove(cond)
                    if cond.accept not in stance.acceptable:
                        stance.acceptable = sorted(
                            [*stance.acceptable, cond.accept], key=rules.option_sort_key
                        )
                        label = _option_label(scenario, cond.if_adopted)
                        changes.append(
                            StanceChange(role, issue_id, "acceptable", "", cond.accept,
                                         f"its commitment applied: {label} was adopted", cause_seq)
                        )  # fmt: skip
    return changes


def _option_label(scenario: Scenario, option_id: str) -> str:
    for issue in scenario.issues:
        for option in issue.options:
            if option.id == option_id:
                return option.label
    return option_id
