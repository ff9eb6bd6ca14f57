"""The stance judge: what a message says (`read_signals`, the rules in `reading.py`, or a model's reading from the
event payload), and how it moves the seats that heard it.

Deterministic and pure. Support, opposition and conditional support are read for the speaker alone (reports of
others and questions say nothing), in public debate only on the issue under discussion. Support and conditional
support (half weight) add pressure on listeners, up to a cap per speaker; offers count only from seats that can
make them (`can_offer`) and unlock listeners' conditions; trades ("if you support X, we will support Y") are
considered in private talks, and only a voting country can promise a vote.

A real model may judge a message instead (see ``simulations.kinds.negotiation.llm_judge``); its output arrives as ``Signals`` in
the event payload, is validated again here (`judge_message`: refused signals fall back to the rules, and the
judgement says so) and is applied by exactly the same code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from simulations.kinds.negotiation import dialogue, reading, rules
from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import Commitment, GameState, IssueState, Stance

# Pressure from a conditional "we support X if Y" counts half: it is support, with strings attached.
CONDITIONAL_WEIGHT = 0.5
JudgeSource = Literal["rules", "llm", "fallback"]


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

    MESSAGE = "the model judge named options or offers the scenario does not have"


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


def read_signals(
    scenario: Scenario,
    text: str,
    *,
    speaker: str | None = None,
    issue: str | None = None,
    meaning: bool = False,
) -> Signals:
    """What a message says for its speaker (memoised per scenario: prompts re-read older entries). With `meaning`
    (for a student's own words only: the AI's are the scenario's, which the rules read), a sentence in which the
    rules read no position and name no option is read again by meaning (`reading.read`).

    `speaker` lets the reader tell the speaker naming itself ("Canada supports 2.1" from Canada) from a report of
    another delegation; without it, a delegation named as the subject is taken to be the speaker. `issue` limits
    support, opposition and conditional support to the issue under discussion (public debate)."""
    return _fresh(shared_signals(scenario, text, speaker=speaker, issue=issue, meaning=meaning))


def shared_signals(
    scenario: Scenario,
    text: str,
    *,
    speaker: str | None = None,
    issue: str | None = None,
    meaning: bool = False,
) -> Signals:
    """`read_signals` without the copy: the memo's own object, for callers that only read it (the prompt's facts
    and memory read every older entry again at every turn, some 7,000 reads a game). Never change it."""
    memo = scenario.memo()
    key = ("signals", text, speaker, issue, meaning)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _signals_of(
            reading.read(scenario, text, speaker=speaker, issue=issue, meaning=meaning)
        )
    assert isinstance(found, Signals)
    return found


def _fresh(signals: Signals) -> Signals:
    """A copy the caller may change while the memo keeps the original: new containers, the (frozen) trades shared.
    By hand, not `model_copy(deep=True)`: prompts re-read every older entry, some 7,000 reads a game, and pydantic's
    deep copy of them was a fifth of a headless game's CPU."""
    return Signals.model_construct(
        support={i: list(o) for i, o in signals.support.items()},
        oppose={i: list(o) for i, o in signals.oppose.items()},
        conditional={i: list(o) for i, o in signals.conditional.items()},
        offers=list(signals.offers),
        asks=list(signals.asks),
        trades=list(signals.trades),
    )


def _signals_of(found: reading.Reading) -> Signals:
    return Signals(
        support={i: sorted(o, key=rules.option_sort_key) for i, o in sorted(found.support.items()) if o},
        oppose={i: sorted(o, key=rules.option_sort_key) for i, o in sorted(found.oppose.items()) if o},
        conditional={
            i: sorted(o, key=rules.option_sort_key) for i, o in sorted(found.conditional.items()) if o
        },
        offers=sorted(found.offers),
        asks=sorted(found.asks),
        trades=[Trade(want=w, promise=p) for w, p in found.trades],
    )


@dataclass(frozen=True)
class Judgement:
    """The reading the engine applied to one message, and where it came from."""

    signals: Signals
    source: (
        JudgeSource  # rules: offline; llm: a model's reading, accepted; fallback: rules after a refused one
    )
    note: str = ""  # why a model's reading was refused


def judge_message(
    scenario: Scenario,
    *,
    speaker: str,
    text: str,
    issue: str | None,
    payload: dict[str, object],
    meaning: bool = False,
) -> Judgement:
    """The reading of a committed message: a model's signals from the payload when valid, else the rules.

    A payload without a "signals" key was judged by the rules (the offline model); "signals": null means the
    model judge failed or answered unusably; signals naming ids outside the scenario are refused here too (never
    trusted because they passed the service), and the message is read by the rules instead. `meaning`: the
    speaker is a student (a human seat), whose words the rules may not know (`read_signals`)."""
    ruled = read_signals(scenario, text, speaker=speaker, issue=issue, meaning=meaning)
    if "signals" not in payload:
        return Judgement(ruled, "rules")
    raw = payload["signals"]
    if raw is None:
        return Judgement(ruled, "fallback", MODEL_UNUSABLE)
    try:
        signals = check_signals(scenario, Signals.model_validate(raw))
    except (ValueError, ValidationError):
        return Judgement(ruled, "fallback", InvalidSignals.MESSAGE)
    if issue is not None:  # in public debate only the issue under discussion counts, whoever read it
        for bucket in (signals.support, signals.oppose, signals.conditional):
            for other in [i for i in bucket if i != issue]:
                del bucket[other]
    return Judgement(signals, "llm")


MODEL_UNUSABLE = "the model judge gave no usable reading"


def describe(scenario: Scenario, speaker: str, judgement: Judgement) -> dict[str, object]:
    """One message's reading for the export: each item with its kind, what it names, and whose words."""
    signals, items = judgement.signals, []
    for kind in ("support", "oppose", "conditional"):
        for issue_id, options in getattr(signals, kind).items():
            items += [{"kind": kind, "issue": issue_id, "option": o} for o in options]
    credible = set(credible_offers(scenario, speaker, signals))
    items += [{"kind": "offer", "offer": o, "credible": o in credible} for o in signals.offers]
    items += [{"kind": "ask", "offer": o} for o in signals.asks]
    items += [{"kind": "trade", "want": t.want, "promise": t.promise} for t in signals.trades]
    out: dict[str, object] = {"source": judgement.source, "items": items}
    if judgement.note:
        out["note"] = judgement.note
    return out


def stated_options(signals: Signals) -> dict[str, str]:
    """The option a message backs on each issue, where it backs exactly one (conditional backing counts when it
    is the message's only backing on that issue); opposition alone states no position."""
    out: dict[str, str] = {}
    for issue_id in sorted({*signals.support, *signals.conditional}):
        backed = signals.support.get(issue_id) or signals.conditional.get(issue_id) or []
        if len(backed) == 1:
            out[issue_id] = backed[0]
    return out


def record_statements(
    state: GameState, speaker: str, signals: Signals, *, heard_by: str | None = None
) -> None:
    """Remember what `speaker` said it backs: in public, or (with `heard_by`) privately to one listener."""
    said = stated_options(signals)
    if not said:
        return
    if heard_by is None:
        state.stated.setdefault(speaker, {}).update(said)
    else:
        state.stated_in_talks.setdefault(speaker, {}).setdefault(heard_by, {}).update(said)


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
    convo = state.active_conversation if private else None
    if (
        convo is not None
        and speaker in state.humans
        and dialogue.is_hostile(text, dialogue.names_pattern(scenario))
    ):
        convo.cooled = (
            True  # relations cool for the rest of the talk: read from the words, never from a model
        )
    if signals.empty:
        return []
    offers = credible_offers(scenario, speaker, signals)
    influence = scenario.role(speaker).influence
    weight = influence * (rules.PRIVATE_WEIGHT if private else rules.PUBLIC_WEIGHT)
    cap = influence * rules.PRESSURE_CAP
    speaker_name = scenario.display_name(speaker)
    changes: list[StanceChange] = []
    for listener in listeners:
        if listener in (speaker, scenario.chair.id):
            continue
        if offers:
            heard = state.offers_heard.setdefault(listener, [])
            heard.extend(o for o in sorted(offers) if o not in heard)
        if listener in state.humans:
            continue  # the student hears offers like anyone (the record says so); their stance is theirs to move
        if offers:
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
    """An AI takes a trade when it wants what is promised and can bear what is asked (not a red line), from a
    partner who has not insulted it in this talk."""
    if not scenario.role(speaker).votes:
        return []  # only a voting country can promise a vote
    if cooled(state):
        return []  # an insulted delegation does not bargain for the rest of the talk
    want_issue, promise_issue = _issue_of(scenario, trade.want), _issue_of(scenario, trade.promise)
    if (
        want_issue == promise_issue
        or rules.resolved_issue(state, want_issue)
        or rules.resolved_issue(state, promise_issue)
    ):
        return []
    wanted = state.stances[listener][promise_issue].preferred == trade.promise
    stance = state.stances[listener][want_issue]
    # A red line an offer has since unlocked (its option is now acceptable) no longer stands in the way.
    if not wanted or (trade.want in stance.red_lines and trade.want not in stance.acceptable):
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


def cooled(state: GameState) -> bool:
    """Whether the open private talk has cooled (one side insulted the other)."""
    convo = state.active_conversation
    return convo is not None and convo.cooled


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
        if role in state.humans:
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
