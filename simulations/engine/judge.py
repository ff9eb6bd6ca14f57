"""The rule-based stance judge: reads what a message says about options and offers, and moves listeners.

Deterministic and pure. It recognises options by id (``"4.1"``), label and the scenario's keywords (synonyms);
reads a sentence as opposition when it carries a negation cue; reads "we can accept / could live with X" as a
concession (support); reads "we support X if Y is offered" as conditional support plus a request for Y; reads an
offer when an offer keyword meets a commitment cue in an unconditional, unnegated sentence; and reads "if you
support X, we will support Y" as a trade. Only roles that can credibly make an offer (``can_offer``) count, and
only voting countries can promise a vote.

A real model may judge a message instead (see ``simulations.ai.llm_judge``); its output arrives as a validated
``Signals`` in the event payload and is applied by exactly the same code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from . import rules
from .scenario import Scenario
from .state import Commitment, GameState, IssueState, Stance

NEGATION_CUES = (
    "oppose", "cannot accept", "can't accept", "cannot support", "can't support", "reject", "against",
    "not support", "not accept", "no to ", "will not", "won't", "never", "unacceptable", "resist", "not ready",
    "do not", "don't", "cannot agree", "not agree", "premature", "could not", "cannot live",
)  # fmt: skip
COMMITMENT_CUES = (
    "offer", "provide", "commit", "pledge", "will ", "ready to", "prepared to", "guarantee", "contribute",
    "put on the table", "we can", "support a", "establish", "propose",
)  # fmt: skip
CONDITION_CUES = (" if ", "provided that", "provided ", "on condition", "as long as", "unless", "only if")
CONCESSION_CUES = (
    "we can accept", "we could accept", "can live with", "could live with", "prepared to accept",
    "willing to accept", "could support", "can support", "will not stand in the way", "would not block",
)  # fmt: skip
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_TRADE = re.compile(
    r"\bif (?:you|your delegation|your government)\b(?P<want>.+?),\s*(?:then\s+)?"
    r"(?:we|our delegation|i)\b(?P<promise>.+)"
)
_SUPPORT_VERB = re.compile(r"\b(support|accept|back|vote for|vote yes|agree to|join)\b")
# Pressure from a conditional "we support X if Y" counts half: it is support, with strings attached.
CONDITIONAL_WEIGHT = 0.5


class Trade(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    want: str  # the option the speaker asks the listener to support
    promise: str  # the option the speaker promises to support in return


class Signals(BaseModel):
    """What one message says. Also the schema an LLM judge must return."""

    model_config = ConfigDict(extra="forbid")
    support: dict[str, list[str]] = Field(default_factory=dict)  # issue id -> option ids
    oppose: dict[str, list[str]] = Field(default_factory=dict)
    conditional: dict[str, list[str]] = Field(default_factory=dict)  # supported only if something is offered
    offers: list[str] = Field(default_factory=list)
    asks: list[str] = Field(default_factory=list)  # offers the speaker asks for
    trades: list[Trade] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (
            self.support or self.oppose or self.conditional or self.offers or self.asks or self.trades
        )


class InvalidSignals(ValueError):
    """Signals naming options or offers the scenario does not have."""


def check_signals(scenario: Scenario, signals: Signals) -> Signals:
    """Validate a judge's output against the scenario (ids must exist, options under their own issue)."""
    options = {o.id: i.id for i in scenario.issues for o in i.options}
    offers = {o.id for o in scenario.offers}
    for bucket in (signals.support, signals.oppose, signals.conditional):
        for issue_id, opts in bucket.items():
            if any(options.get(o) != issue_id for o in opts):
                raise InvalidSignals(f"options {opts} do not belong to issue {issue_id}")
    if not set(signals.offers) <= offers or not set(signals.asks) <= offers:
        raise InvalidSignals("unknown offer")
    for trade in signals.trades:
        if trade.want not in options or trade.promise not in options:
            raise InvalidSignals("unknown option in a trade")
    return signals


@dataclass(frozen=True)
class StanceChange:
    role: str
    issue: str
    field: str  # "acceptable" | "preferred" | "withdrawn"
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


def _options_in(scenario: Scenario, fragment: str) -> list[str]:
    found: list[tuple[int, str]] = []
    for issue in scenario.issues:
        for option in issue.options:
            level = _mention_strength(fragment, option.id, option.label, option.keywords)
            if level:
                found.append((level, option.id))
    if not found:
        return []
    top = max(level for level, _ in found)
    return [opt for level, opt in found if level == top]


def read_signals(scenario: Scenario, text: str) -> Signals:
    """What a message says (memoised per scenario: prompts re-read older entries for memory digests)."""
    memo = scenario.memo()
    key = ("signals", text)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _read_signals(scenario, text)
    assert isinstance(found, Signals)
    return found.model_copy(deep=True)


def _read_signals(scenario: Scenario, text: str) -> Signals:
    """What a message supports, opposes, offers, asks for and trades.

    Within one message, an option named explicitly (by id or label) outranks options of the same issue that are
    only alluded to by keyword, so "binding, because voluntary partnerships fell short" reads as support for the
    binding option alone.
    """
    strength: dict[tuple[str, str, str], int] = {}  # (issue, option, kind) -> strength
    offers: set[str] = set()
    asks: set[str] = set()
    trades: list[Trade] = []
    for raw in _SENTENCE.split(text):
        sentence = " " + raw.lower().strip() + " "
        if not sentence.strip():
            continue
        trade = _read_trade(scenario, sentence)
        if trade:
            trades.append(trade)
            continue
        negated = any(cue in sentence for cue in NEGATION_CUES)
        conditional = any(cue in sentence for cue in CONDITION_CUES)
        kind = "oppose" if negated else ("conditional" if conditional else "support")
        for issue in scenario.issues:
            for option in issue.options:
                level = _mention_strength(sentence, option.id, option.label, option.keywords)
                if level:
                    key = (issue.id, option.id, kind)
                    strength[key] = max(strength.get(key, 0), level)
        named_offers = {o.id for o in scenario.offers if any(k.lower() in sentence for k in o.keywords)}
        if conditional:
            asks |= named_offers
        elif not negated and any(cue in sentence for cue in COMMITMENT_CUES):
            offers |= named_offers
    signals = Signals(offers=sorted(offers), asks=sorted(asks - offers), trades=trades)
    for issue in scenario.issues:
        for kind in ("support", "oppose", "conditional"):
            found = {opt: lvl for (iss, opt, k), lvl in strength.items() if iss == issue.id and k == kind}
            if found:
                top = max(found.values())
                getattr(signals, kind)[issue.id] = sorted(opt for opt, lvl in found.items() if lvl == top)
    # An option both supported and opposed in one message is ambiguous: it counts as neither.
    for issue_id in list(signals.support):
        kept = [o for o in signals.support[issue_id] if o not in signals.oppose.get(issue_id, [])]
        if kept:
            signals.support[issue_id] = kept
        else:
            del signals.support[issue_id]
    return signals


def _read_trade(scenario: Scenario, sentence: str) -> Trade | None:
    match = _TRADE.search(sentence)
    if not match or not _SUPPORT_VERB.search(match["want"]) or not _SUPPORT_VERB.search(match["promise"]):
        return None
    want, promise = _options_in(scenario, match["want"]), _options_in(scenario, match["promise"])
    if len(want) == 1 and len(promise) == 1 and want != promise:
        return Trade(want=want[0], promise=promise[0])
    return None


def credible_offers(scenario: Scenario, speaker: str, signals: Signals) -> list[str]:
    """The offers a speaker can really make, in a stable order (never a set's: hash order varies by process)."""
    if speaker == scenario.chair.id:
        return []
    return sorted(set(signals.offers) & set(scenario.role(speaker).can_offer))


def apply_message(
    scenario: Scenario,
    state: GameState,
    *,
    speaker: str,
    listeners: list[str],
    text: str,
    private: bool,
    cause_seq: int,
    signals: Signals | None = None,
) -> list[StanceChange]:
    """Move the stances of AI listeners in place; returns the changes with their reasons."""
    signals = signals if signals is not None else read_signals(scenario, text)
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
            changes += apply_offer_conditions(scenario, state, listener, speaker_name, cause_seq)
        for bucket, factor in ((signals.support, 1.0), (signals.conditional, CONDITIONAL_WEIGHT)):
            for issue_id, options in sorted(bucket.items()):
                if rules.resolved_issue(state, issue_id):
                    continue  # a resolved issue is closed for good
                stance = state.stances[listener][issue_id]
                for option_id in sorted(options):
                    per_speaker = stance.pressure.setdefault(option_id, {})
                    added = per_speaker.get(speaker, 0.0) + weight * factor
                    per_speaker[speaker] = round(min(cap, added), 4)
                    changes += _maybe_move(
                        scenario, listener, issue_id, option_id, stance, speaker_name, cause_seq
                    )
        if private:
            for trade in signals.trades:
                changes += _consider_trade(scenario, state, speaker, listener, trade, cause_seq)
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


def _issue_of(scenario: Scenario, option_id: str) -> str:
    for issue in scenario.issues:
        if any(o.id == option_id for o in issue.options):
            return issue.id
    raise KeyError(option_id)


def _consider_trade(
    scenario: Scenario, state: GameState, speaker: str, listener: str, trade: Trade, seq: int
) -> list[StanceChange]:
    """An AI takes a trade when it wants what is promised and can bear what is asked (not a red line)."""
    if not scenario.role(speaker).votes:
        return []  # only a voting country can promise a vote
    want_issue, promise_issue = _issue_of(scenario, trade.want), _issue_of(scenario, trade.promise)
    if (
        want_issue == promise_issue
        or rules.resolved_issue(state, want_issue)
        or rules.resolved_issue(state, promise_issue)
    ):
        return []
    wanted = state.stances[listener][promise_issue].preferred == trade.promise
    stance = state.stances[listener][want_issue]
    if not wanted or trade.want in stance.red_lines:
        return []
    if any(c.by == speaker and c.to == listener and c.in_return == trade.want for c in state.commitments):
        return []  # the same trade twice changes nothing
    added = trade.want not in stance.acceptable
    state.commitments.append(
        Commitment(by=speaker, to=listener, promise=trade.promise, in_return=trade.want, made_seq=seq,
                   added_acceptable=added)
    )  # fmt: skip
    if not added:
        return []
    stance.acceptable = sorted([*stance.acceptable, trade.want], key=rules.option_sort_key)
    want_label = scenario.issue(want_issue).option(trade.want).label
    promise_label = scenario.issue(promise_issue).option(trade.promise).label
    reason = f"a trade with {scenario.display_name(speaker)}: {want_label} in return for support for {promise_label}"
    return [StanceChange(listener, want_issue, "acceptable", "", trade.want, reason, seq)]


def settle_commitments(
    scenario: Scenario, state: GameState, issue: IssueState, seq: int
) -> list[StanceChange]:
    """After a vote: trades whose promise was on this ballot are kept or broken; a broken one is withdrawn."""
    changes: list[StanceChange] = []
    options = {o.id for o in scenario.issue(issue.issue_id).options}
    for commitment in state.commitments:
        if commitment.status != "open" or commitment.promise not in options:
            continue
        if issue.proposal != commitment.promise:
            commitment.status = "lapsed"
            continue
        commitment.status = "kept" if issue.ballots.get(commitment.by) == "yes" else "broken"
        if commitment.status == "broken" and commitment.added_acceptable:
            want_issue = _issue_of(scenario, commitment.in_return)
            stance = state.stances[commitment.to][want_issue]
            if not rules.resolved_issue(state, want_issue) and commitment.in_return in stance.acceptable:
                stance.acceptable.remove(commitment.in_return)
                if stance.preferred == commitment.in_return:
                    stance.preferred = stance.acceptable[0]
                name = scenario.display_name(commitment.by)
                changes.append(
                    StanceChange(commitment.to, want_issue, "withdrawn", commitment.in_return, "",
                                 f"{name} broke its promise to support the proposal", seq)
                )  # fmt: skip
    return changes


def apply_offer_conditions(
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
                        label = (
                            scenario.issue(_issue_of(scenario, cond.if_adopted)).option(cond.if_adopted).label
                        )
                        changes.append(
                            StanceChange(role, issue_id, "acceptable", "", cond.accept,
                                         f"its commitment applied: {label} was adopted", cause_seq)
                        )  # fmt: skip
    return changes
