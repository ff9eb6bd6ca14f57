"""What a negotiation came to, for a class's results (`Kind.outcomes`): for each student's seat, its aim on each
issue met or not and the student's words that moved a delegation's position.

Read from the debrief's facts (debrief.py), which the review's summary card shows too: the aims (what the student
last said they wanted, else their brief's preference) with their results, and the stance changes the game recorded
with the message that caused each. Nothing is judged again, so the class's results and each student's review agree.
A class group's other students get the facts of the game seen from their own seat (`games.seen_from`).
"""

from __future__ import annotations

from simulations.kinds import Aim, MovingWords, Outcomes, SeatResult
from simulations.models import Game, TranscriptEntry

from .debrief import debrief_facts
from .debrief_facts import Change, DebriefFacts
from .games import scenario_of, seen_from, state_of
from .machine import STAND_IN_MARK, Status
from .scenario import Scenario


def outcomes(game: Game) -> Outcomes:
    """Precondition: `game` is a negotiation. Empty until its last vote is counted (the aims are decided then)."""
    scenario, state = scenario_of(game), state_of(game)
    if state.status != Status.REVIEW or not state.humans:
        return Outcomes()
    # A move the seat's AI stand-in made is marked in the transcript: its words are not the student's.
    stood_in = set(
        TranscriptEntry.objects.filter(
            game=game, speaker__in=state.humans, text__startswith=STAND_IN_MARK
        ).values_list("seq", flat=True)
    )
    seats = {}
    for seat in state.humans:
        facts = debrief_facts(game, scenario, state if seat == state.human_role else seen_from(state, seat))
        seats[seat] = _seat_result(scenario, facts, stood_in)
    adopted = sum(1 for issue in state.round3.issues if issue.adopted)
    verdict = f"{adopted} of {len(state.round3.issues)} proposals adopted"
    return Outcomes(verdict=verdict, seats=seats)


def _seat_result(scenario: Scenario, facts: DebriefFacts, stood_in: set[int]) -> SeatResult:
    ids = [issue.id for issue in scenario.issues]
    aims = tuple(
        Aim(
            words=f"{i.aim.option.id} {i.aim.option.label}",
            met="met" if i.result == "met" else "not met",
            issue=ids[i.number - 1],
        )
        for i in facts.issues
    )
    moved = []
    for influence in facts.influence:
        if influence.seq in stood_in:
            continue
        by_issue: dict[int, list[Change]] = {}
        for change in influence.changes:
            by_issue.setdefault(change.issue, []).append(change)
        for number, changes in by_issue.items():
            moved.append(
                MovingWords(
                    words=influence.quote,
                    moved="; ".join(_how(c) for c in changes),
                    where=influence.where,
                    issue=ids[number - 1],
                    private=influence.where.startswith("private"),
                )  # fmt: skip
            )
    return SeatResult(aims=aims, moved=tuple(moved))


CAUSES = {"offer": " (an offer met its condition)", "trade": " (in a trade)", "arguments": ""}


def _how(change: Change) -> str:
    """One stance change in words: whose position, to what."""
    option = f"{change.option.id} {change.option.label}"
    verb = "came to accept" if change.field == "acceptable" else "moved to prefer"
    return f"{change.seat} {verb} {option}{CAUSES[change.cause]}"
