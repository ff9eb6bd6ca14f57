"""Pure rule functions: speaker orders, proposal selection, tallies, AI ballots and stance arithmetic."""

from __future__ import annotations

from collections.abc import Sequence

from simulations.engine import rng
from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import Ballot, GameState, IssueState, Placement, Stance

# Pressure needed before a delegation moves, scaled by its firmness (0 = pliant, 1 = immovable-ish).
ACCEPT_BASE, ACCEPT_PER_FIRMNESS = 1.0, 2.0
PREFER_BASE, PREFER_PER_FIRMNESS = 2.0, 3.0
# One delegation's words on one option count at most this many times its influence, so repeating itself
# does not wear a listener down, and a stance's pressure map stays bounded in size.
PRESSURE_CAP = 2.5
PRIVATE_WEIGHT, PUBLIC_WEIGHT = 1.0, 0.35


def round1_speaker_order(scenario: Scenario, seed: int) -> list[str]:
    """Countries first, then NGOs; each group in a seeded random order."""
    countries = rng.shuffled(seed, "round1-order", scenario.countries, "countries")
    ngos = rng.shuffled(seed, "round1-order", scenario.ngos, "ngos")
    return countries + ngos


def debate_order(
    scenario: Scenario, seed: int, issue_id: str, debate_round: int, human: str | None, placement: Placement
) -> list[str]:
    """Countries then NGOs, seeded per (issue, round); the human is placed first, randomly, or left out."""
    groups: list[list[str]] = []
    for name, members in (("countries", scenario.countries), ("ngos", scenario.ngos)):
        others = [r for r in members if r != human]
        others = rng.shuffled(seed, "debate-order", others, issue_id, debate_round, name)
        if human in members and placement == "first":
            others.insert(0, human)
        elif human in members and placement == "random":
            slot = rng.stream(seed, "debate-slot", issue_id, debate_round).randint(0, len(others))
            others.insert(slot, human)
        groups.append(others)
    return groups[0] + groups[1]


def position(state: GameState, role: str, issue_id: str) -> str:
    """The option a seat stands for: an AI seat's current preference; the student's last public statement on the
    issue (what they said counts, not their brief), else their brief's preference."""
    if role in state.humans:
        stated = state.stated.get(role, {}).get(issue_id)
        if stated is not None:
            return stated
    return state.stances[role][issue_id].preferred


def support_counts(scenario: Scenario, state: GameState, issue_id: str) -> dict[str, list[str]]:
    """Which countries currently stand for which option (option id -> country ids), every option present."""
    counts: dict[str, list[str]] = {o.id: [] for o in scenario.issue(issue_id).options}
    for country in scenario.countries:
        counts[position(state, country, issue_id)].append(country)
    return counts


def public_statements(scenario: Scenario, state: GameState, issue_id: str) -> dict[str, list[str]]:
    """Which countries have said in public that they back which option (option id -> country ids); countries
    that have not said are under the key "" (what AI seats prefer in private is never shown)."""
    said: dict[str, list[str]] = {o.id: [] for o in scenario.issue(issue_id).options}
    said[""] = []
    for country in scenario.countries:
        said[state.stated.get(country, {}).get(issue_id, "")].append(country)
    return said


def select_proposal(scenario: Scenario, state: GameState, issue_id: str) -> tuple[str, list[str]]:
    """The option most countries prefer; ties go to the lowest option id."""
    counts = support_counts(scenario, state, issue_id)
    best = min(counts, key=lambda opt: (-len(counts[opt]), option_sort_key(opt)))
    return best, counts[best]


def option_sort_key(option_id: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in option_id.split("."))


def ai_ballot(stance: Stance, proposal: str) -> Ballot:
    return "yes" if proposal in stance.acceptable else "no"


def adopted(ballots: dict[str, Ballot], voters: Sequence[str]) -> bool:
    """Unanimity of every voter."""
    return all(ballots.get(v) == "yes" for v in voters)


def total_pressure(stance: Stance, option_id: str) -> float:
    return sum(stance.pressure.get(option_id, {}).values())


def accept_threshold(stance: Stance) -> float:
    return ACCEPT_BASE + ACCEPT_PER_FIRMNESS * stance.firmness


def prefer_threshold(stance: Stance) -> float:
    return PREFER_BASE + PREFER_PER_FIRMNESS * stance.firmness


def adopted_options(state: GameState) -> set[str]:
    return {i.proposal for i in state.round3.issues if i.adopted and i.proposal}


def resolved_issue(state: GameState, issue_id: str) -> IssueState | None:
    for issue in state.round3.issues:
        if issue.issue_id == issue_id and issue.adopted is not None:
            return issue
    return None
