"""The facts of a finished game that the debrief is written from (by the offline writer or a real model).

Aims are what the student said they wanted (their own messages and speeches, read by the rule judge; the latest
statement per issue wins), else their brief's preference. An aim is met only when that option was adopted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from simulations.kinds.negotiation import judge, rules
from simulations.kinds.negotiation.debrief_facts import (
    Aim,
    Change,
    DebriefFacts,
    Holdout,
    Influence,
    IssueFacts,
    OfferNeed,
    OptionFact,
    TradeFact,
    Unlock,
    UnusedOffer,
)
from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import GameState, IssueState
from simulations.models import Event, Game, TranscriptEntry

QUOTE_CHARS = 140
_SENTENCE = re.compile(r"(?<=[.!?;])\s+")


@dataclass(frozen=True)
class StudentLine:
    seq: int
    kind: str  # message | speech
    text: str
    audience: list[str]
    issue: str


def debrief_facts(game: Game, scenario: Scenario, state: GameState) -> DebriefFacts:
    """Precondition: every issue is resolved (the game is in REVIEW)."""
    assert state.human_role is not None
    rows = TranscriptEntry.objects.filter(
        game=game, speaker=state.human_role, kind__in=["message", "speech"]
    ).order_by("seq")
    lines = [
        StudentLine(seq, kind, text, list(audience), issue)
        for seq, kind, text, audience, issue in rows.values_list("seq", "kind", "text", "audience", "issue")
    ]
    changes: list[dict[str, object]] = []
    for recorded in (
        Event.objects.filter(game=game)
        .exclude(stance_changes=[])
        .order_by("seq")
        .values_list("stance_changes", flat=True)
    ):
        changes += recorded
    return build_debrief(scenario, state, lines, changes)


def build_debrief(
    scenario: Scenario, state: GameState, lines: list[StudentLine], changes: list[dict[str, object]]
) -> DebriefFacts:
    """The debrief's facts from the final state, the student's own lines and the game's stance changes."""
    human = state.human_role
    assert human is not None and state.human_variant is not None
    role = scenario.role(human)
    aims = stated_aims(scenario, lines, speaker=human)
    issues = [_issue_facts(scenario, state, issue_state, aims, lines) for issue_state in state.round3.issues]
    return DebriefFacts(
        student=role.name,
        persona=role.opening(state.human_variant).persona.name,
        votes=role.votes,
        issues=issues,
        influence=_influence(scenario, human, lines, changes),
        trades=_trades(scenario, state),
        unused_offers=_unused_offers(scenario, state, issues),
        talks_held=[scenario.display_name(c.partner) for c in state.round2.conversations],
        talks_declined=[
            scenario.display_name(r)
            for r in state.round2.requests
            if r not in {c.partner for c in state.round2.conversations}
        ],
    )


def stated_aims(
    scenario: Scenario, lines: list[StudentLine], *, speaker: str | None = None
) -> dict[str, tuple[str, str]]:
    """Issue id -> (option, quote) the student last said they wanted; an issue they never named is absent."""
    aims: dict[str, tuple[str, str]] = {}
    for line in lines:  # in order: a later statement replaces an earlier one
        signals = judge.read_signals(scenario, line.text, speaker=speaker)  # their own words, not reports
        for issue_id, opposed in signals.oppose.items():
            if issue_id in aims and aims[issue_id][0] in opposed:
                del aims[issue_id]  # they turned against what they had asked for
        # Conditional support ("we support X if Y is offered") still says what they want; plain support outranks
        # it within one message. Two options of one issue in one message state no single aim.
        for bucket in (signals.conditional, signals.support):
            for issue_id, options in bucket.items():
                if len(options) == 1:
                    aims[issue_id] = (options[0], quote(scenario, line.text, options[0]))
    return aims


def quote(scenario: Scenario, text: str, option_id: str | None = None, *, offer: bool = False) -> str:
    """A short excerpt of a message: the sentence making an offer (`offer`) or backing `option_id` if there is
    one, else its first sentence."""
    sentences = [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()] or [text.strip()]
    chosen = sentences[0]
    for sentence in sentences:
        signals = judge.read_signals(scenario, sentence)
        named = {
            o for bucket in (signals.support, signals.conditional) for opts in bucket.values() for o in opts
        }
        if (offer and signals.offers) or (not offer and option_id in named):
            chosen = sentence
            break
    # An excerpt goes into the debrief prompt: it must never carry the markers of a prompt's facts block.
    # On one line too, so a quote can never start a heading or a bullet of the debrief.
    chosen = " ".join(chosen.replace("<<", "‹‹").replace(">>", "››").split())
    if len(chosen) <= QUOTE_CHARS:
        return chosen
    return chosen[:QUOTE_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + " …"


def _option(scenario: Scenario, option_id: str) -> OptionFact:
    for issue in scenario.issues:
        for option in issue.options:
            if option.id == option_id:
                return OptionFact(id=option.id, label=option.label)
    raise KeyError(option_id)


def _issue_number(scenario: Scenario, issue_id: str) -> int:
    return [i.id for i in scenario.issues].index(issue_id) + 1


def _issue_of_option(scenario: Scenario, option_id: str) -> str:
    for issue in scenario.issues:
        if any(o.id == option_id for o in issue.options):
            return issue.id
    raise KeyError(option_id)


def _issue_facts(
    scenario: Scenario,
    state: GameState,
    issue_state: IssueState,
    aims: dict[str, tuple[str, str]],
    lines: list[StudentLine],
) -> IssueFacts:
    human = state.human_role
    assert human is not None and issue_state.proposal is not None and issue_state.adopted is not None
    issue_id, proposal = issue_state.issue_id, issue_state.proposal
    if issue_id in aims:
        aim_id, said = aims[issue_id]
        aim = Aim(option=_option(scenario, aim_id), source="said", quote=said)
    else:
        aim_id = scenario.role(human).stances[issue_id].preferred
        aim = Aim(option=_option(scenario, aim_id), source="brief")
    if aim_id == proposal:
        result = "met" if issue_state.adopted else "failed"
    else:
        result = "missed" if issue_state.adopted else "blocked"
    against = [r for r in issue_state.vote_order if issue_state.ballots.get(r) == "no"]
    aim_holdouts = []
    if result in ("blocked", "missed"):
        aim_holdouts = [
            holdout(scenario, state, r, issue_id, aim_id)
            for r in scenario.voters
            if r != human and aim_id not in state.stances[r][issue_id].acceptable
        ]
    ballot = issue_state.ballots.get(human)
    own_unlocks = []
    if ballot == "no":
        for cond in scenario.role(human).stances[issue_id].conditions:
            if cond.accept == proposal and cond.if_offered:
                needs = [_offer_need(scenario, o, human, human, set()) for o in cond.if_offered]
                own_unlocks.append(Unlock(kind="offer", offers=needs))
    return IssueFacts(
        number=_issue_number(scenario, issue_id),
        title=scenario.issue(issue_id).title,
        aim=aim,
        proposal=_option(scenario, proposal),
        supporters=[scenario.display_name(r) for r in issue_state.supporters],
        set_aside=_option(scenario, issue_state.set_aside) if issue_state.set_aside else None,
        blockers=[scenario.display_name(r) for r in issue_state.blockers],
        adopted=issue_state.adopted,
        result=result,
        student_vote=ballot,
        against=[holdout(scenario, state, r, issue_id, proposal) for r in against],
        aim_holdouts=aim_holdouts,
        own_unlocks=own_unlocks,
        spoke=sum(1 for line in lines if line.kind == "speech" and line.issue == issue_id),
        placement=issue_state.placement,
    )


def holdout(scenario: Scenario, state: GameState, role_id: str, issue_id: str, option_id: str) -> Holdout:
    """Why `role_id` could not accept `option_id` at the end, and what would have moved it."""
    name = scenario.display_name(role_id)
    human = state.human_role
    assert human is not None
    if role_id == human:
        return Holdout(seat=name, student=True)
    stance = state.stances[role_id][issue_id]
    red_line = option_id in stance.red_lines
    persuaded = (
        None
        if red_line
        else persuaded_band(rules.total_pressure(stance, option_id) / rules.accept_threshold(stance))
    )
    student = scenario.role(human)
    unlocks: list[Unlock] = []
    heard = set(state.offers_heard.get(role_id, []))
    for cond in stance.conditions:  # conditions still in the stance are the ones never met
        if cond.accept != option_id:
            continue
        if cond.if_offered:
            needs = [_offer_need(scenario, o, role_id, human, heard) for o in cond.if_offered]
            unlocks.append(Unlock(kind="offer", offers=needs))
        elif cond.if_adopted:
            after_issue = _issue_of_option(scenario, cond.if_adopted)
            unlocks.append(
                Unlock(
                    kind="adoption",
                    after=_option(scenario, cond.if_adopted),
                    after_issue=_issue_number(scenario, after_issue),
                )
            )
    # The judge takes a trade from a voting country when it is promised the option it prefers on another issue
    # and what it is asked for is not a red line; suggest one only with an option the student's brief accepts.
    if student.votes and not red_line:
        for other in scenario.issues:
            if other.id == issue_id:
                continue
            wanted = state.stances[role_id][other.id].preferred
            if wanted in student.stances[other.id].acceptable:
                unlocks.append(
                    Unlock(
                        kind="trade",
                        in_return=_option(scenario, wanted),
                        in_return_issue=_issue_number(scenario, other.id),
                    )
                )
                break
    return Holdout(seat=name, red_line=red_line, persuaded=persuaded, unlocks=unlocks)


def persuaded_band(ratio: float) -> Literal["far", "partway", "close"]:
    """How far pressure went towards a threshold, in three bands (below a third, below two thirds, above)."""
    if ratio < 1 / 3:
        return "far"
    return "partway" if ratio < 2 / 3 else "close"


def _offer_need(scenario: Scenario, offer: str, role_id: str, human: str, heard: set[str]) -> OfferNeed:
    """An offer `role_id` needs, and the other seats able to make it credibly."""
    return OfferNeed(
        label=scenario.offer(offer).label,
        by=[r.name for r in scenario.roles if offer in r.can_offer and r.id not in (role_id, human)],
        student_can=offer in scenario.role(human).can_offer,
        heard=offer in heard,
    )


def _cause(reason: str) -> str:
    if reason.startswith("its condition was met"):
        return "offer"
    if reason.startswith("a trade with"):
        return "trade"
    return "arguments"


def _influence(
    scenario: Scenario, human: str, lines: list[StudentLine], changes: list[dict[str, object]]
) -> list[Influence]:
    by_seq = {line.seq: line for line in lines}
    grouped: dict[int, list[Change]] = {}
    for change in changes:
        seq = change.get("cause_seq")
        if (
            not isinstance(seq, int)
            or seq not in by_seq
            or change["field"] not in ("acceptable", "preferred")
        ):
            continue
        grouped.setdefault(seq, []).append(
            Change(
                seat=scenario.display_name(str(change["role"])),
                issue=_issue_number(scenario, str(change["issue"])),
                field=change["field"],  # type: ignore[arg-type]
                option=_option(scenario, str(change["after"])),
                cause=_cause(str(change["reason"])),  # type: ignore[arg-type]
            )
        )
    out = []
    for seq in sorted(grouped):
        line = by_seq[seq]
        if line.kind == "message":
            partner = next(r for r in line.audience if r != human)
            where = f"private talk with {scenario.display_name(partner)}"
        else:
            where = f"debate on issue {_issue_number(scenario, line.issue)}"
        changed = grouped[seq]
        by_offer = all(c.cause == "offer" for c in changed)
        out.append(
            Influence(
                seq=seq,
                where=where,
                quote=quote(scenario, line.text, changed[0].option.id, offer=by_offer),
                changes=changed,
            )
        )
    return out


def _trades(scenario: Scenario, state: GameState) -> list[TradeFact]:
    out = []
    for c in state.commitments:
        if c.by != state.human_role:
            continue
        in_return_issue = _issue_of_option(scenario, c.in_return)
        voted = rules.resolved_issue(state, in_return_issue)
        partner_vote = voted.ballots.get(c.to) if voted and voted.proposal == c.in_return else None
        out.append(
            TradeFact(
                partner=scenario.display_name(c.to),
                promise=_option(scenario, c.promise),
                promise_issue=_issue_number(scenario, _issue_of_option(scenario, c.promise)),
                in_return=_option(scenario, c.in_return),
                in_return_issue=_issue_number(scenario, in_return_issue),
                status=c.status,
                partner_vote=partner_vote,
            )
        )
    return out


def _unused_offers(scenario: Scenario, state: GameState, issues: list[IssueFacts]) -> list[UnusedOffer]:
    """Offers the student could make, never heard by a seat that needed them to accept what the student wanted."""
    out: list[UnusedOffer] = []
    for issue in issues:
        if issue.result == "met":
            continue
        holdouts = issue.against if issue.result == "failed" else issue.aim_holdouts
        for held in holdouts:
            for unlock in held.unlocks:
                if unlock.kind != "offer":
                    continue
                for need in unlock.offers:
                    if need.student_can and not need.heard:
                        out.append(
                            UnusedOffer(
                                offer=need.label,
                                seat=held.seat,
                                option=issue.aim.option,
                                issue=issue.number,
                                also_needs=[n.label for n in unlock.offers if n is not need and not n.heard],
                            )
                        )
    return out
