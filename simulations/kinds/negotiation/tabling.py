"""What the chair tables on an issue, and why, from what the room said in public (issue #66).

The chair counts positions as it always has (`rules.select_proposal`: the option most countries stand for). What
it knows beyond that is only what delegations said in public — openings and debate speeches, as the judge read
them (`hear`, kept in `GameState.public`) — never an AI seat's private stance or a private talk:

- a voting country that said it cannot accept the leading option is a **known blocker** of it, unless it also said
  what it needs to accept it (an offer) and a seat able to make that offer has since made it in public;
- an option is **made possible by the debate** when no voting country has refused it in public, every known
  blocker of the leading option has said it backs or can accept it, and so has every country standing for the
  leading option: then the chair tables it instead, and says why;
- when the leading option is tabled although a blocker said no, or because a stated need was met in public (a
  package: the option with the offer that unlocked it), the chair says that too.

Pure and deterministic: the same words heard in the same order table the same option.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from simulations.kinds.negotiation import rules
from simulations.kinds.negotiation.offline_debrief import the
from simulations.kinds.negotiation.scenario import Issue, Scenario
from simulations.kinds.negotiation.state import GameState, PublicWord

if TYPE_CHECKING:
    from simulations.kinds.negotiation.judge import Signals


def hear(scenario: Scenario, state: GameState, speaker: str, signals: Signals) -> None:
    """Remember what `speaker` said in public: backing or accepting an option lifts its refusal and its stated
    needs; "only if" backing records the needs and leaves the option unaccepted; "cannot accept" is a refusal."""
    if speaker == scenario.chair.id:
        return
    word = state.public
    for offer in sorted(set(signals.offers) & set(scenario.role(speaker).can_offer)):
        makers = word.offered.setdefault(offer, [])
        if speaker not in makers:
            makers.append(speaker)
    for issue_id, options in sorted(signals.conditional.items()):
        for option in options:
            _drop(word.allows, speaker, issue_id, option)
            if signals.asks:
                word.needs.setdefault(speaker, {})[option] = sorted(signals.asks)
    for issue_id, options in sorted(signals.oppose.items()):
        for option in options:
            _drop(word.allows, speaker, issue_id, option)
            _add(word.refuses, speaker, issue_id, option)
    for issue_id, options in sorted(signals.support.items()):
        for option in options:
            _drop(word.refuses, speaker, issue_id, option)
            word.needs.get(speaker, {}).pop(option, None)
            _add(word.allows, speaker, issue_id, option)


def _add(record: dict[str, dict[str, list[str]]], role: str, issue_id: str, option: str) -> None:
    options = record.setdefault(role, {}).setdefault(issue_id, [])
    if option not in options:
        options.append(option)
        options.sort(key=rules.option_sort_key)


def _drop(record: dict[str, dict[str, list[str]]], role: str, issue_id: str, option: str) -> None:
    options = record.get(role, {}).get(issue_id, [])
    if option in options:
        options.remove(option)


def needs_met(word: PublicWord, role: str, option: str) -> list[str]:
    """The offers `role` said it needs for `option`, when every one of them has been made in public (else [])."""
    needed = word.needs.get(role, {}).get(option, [])
    return list(needed) if needed and all(word.offered.get(o) for o in needed) else []


def refusing(state: GameState, role: str, issue_id: str) -> set[str]:
    """The options of the issue `role` said in public it cannot accept, and still stands by as far as the chair
    knows (a stated need met in public lifts a refusal)."""
    word = state.public
    return {o for o in word.refuses.get(role, {}).get(issue_id, []) if not needs_met(word, role, o)}


def allowed(scenario: Scenario, state: GameState, role: str, issue_id: str) -> set[str]:
    """The options of the issue `role` said in public it backs or can accept, or would accept once offered what
    has since been offered in public."""
    word = state.public
    said = set(word.allows.get(role, {}).get(issue_id, []))
    options = {o.id for o in scenario.issue(issue_id).options}
    return said | {o for o in word.needs.get(role, {}) if o in options and needs_met(word, role, o)}


@dataclass(frozen=True)
class Tabled:
    """The chair's choice on one issue, with what it rests on."""

    issue: str
    option: str
    supporters: list[str]  # countries standing for `option` (the chair's count); when moved, its backers
    leading: str  # the option most countries stand for
    blockers: list[str] = field(
        default_factory=list
    )  # voting countries that said they cannot accept `leading`
    backers: list[str] = field(
        default_factory=list
    )  # when moved: voting countries that said they accept `option`
    package: list[tuple[str, str, list[str]]] = field(
        default_factory=list
    )  # (country, offer, makers) met needs

    @property
    def moved(self) -> bool:
        return self.option != self.leading


def table(scenario: Scenario, state: GameState, issue_id: str) -> Tabled:
    """The option the chair puts to the vote (see the module's docstring)."""
    counts = rules.support_counts(scenario, state, issue_id)
    leading, supporters = rules.select_proposal(scenario, state, issue_id)
    voters = scenario.voters
    blockers = [v for v in voters if leading in refusing(state, v, issue_id)]
    if blockers:
        candidates = []
        for option in (o.id for o in scenario.issue(issue_id).options if o.id != leading):
            if any(option in refusing(state, v, issue_id) for v in voters):
                continue
            backers = [v for v in voters if option in allowed(scenario, state, v, issue_id)]
            if all(v in backers for v in blockers):
                candidates.append((option, backers))
        if candidates:
            option, backers = min(
                candidates, key=lambda c: (-len(counts[c[0]]), -len(c[1]), rules.option_sort_key(c[0]))
            )
            package = _package(state, voters, option)
            # Put forward by those who said they can accept it (the count of first preferences may be empty).
            return Tabled(issue_id, option, backers, leading, blockers, backers, package)
    return Tabled(issue_id, leading, supporters, leading, blockers, [], _package(state, voters, leading))


def _package(state: GameState, voters: list[str], option: str) -> list[tuple[str, str, list[str]]]:
    word = state.public
    return [(v, o, list(word.offered[o])) for v in voters for o in needs_met(word, v, option)]


def explain(scenario: Scenario, tabled: Tabled) -> str | None:
    """Why the chair tables this option, in the chair's words; None when it is simply the option with most support
    and nobody said in public they cannot accept it."""
    name = scenario.display_name
    issue = scenario.issue(tabled.issue)
    label, leading = _label(issue, tabled.option), _label(issue, tabled.leading)
    parts = []
    if tabled.moved:
        blockers = _names([name(r) for r in tabled.blockers])
        parts.append(
            f"{_capital(leading)} has the most support, but {blockers} "
            f"{_has(tabled.blockers)} said in public that {_it(tabled.blockers)} cannot accept it. "
            f"{_names([name(r) for r in tabled.backers])} {_has(tabled.backers)} said "
            f"{_it(tabled.backers)} can accept {label}, and no voting country has refused it, so the Chair tables "
            f"{label} instead."
        )
    elif tabled.blockers:
        blockers = _names([name(r) for r in tabled.blockers])
        parts.append(
            f"{blockers} {_has(tabled.blockers)} said {_it(tabled.blockers)} cannot accept {label}, and no other "
            f"option has been accepted in public both by {_them(tabled.blockers)} and by the delegations that "
            f"back {label}. The Chair puts the option with the most support to the vote; the vote will show "
            "where the committee stands."
        )
    for country, offer, makers in tabled.package:
        offer_label = scenario.offer(offer).label
        parts.append(
            f"{name(country)} said it could accept {label} with {offer_label}; {_names([name(m) for m in makers])} "
            f"{_has(makers)} offered it in public, so the Chair tables {label} together with that offer."
        )
    if not parts:
        return None
    return " ".join(parts)


def _label(issue: Issue, option_id: str) -> str:
    label = issue.option(option_id).label
    return f"option {option_id} ({label[:1].lower()}{label[1:]})"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _names(names: list[str]) -> str:
    names = [the(n) for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _has(roles: list[str]) -> str:
    return "has" if len(roles) == 1 else "have"


def _it(roles: list[str]) -> str:
    return "it" if len(roles) == 1 else "they"


def _them(roles: list[str]) -> str:
    return "it" if len(roles) == 1 else "them"
