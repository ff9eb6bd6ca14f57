"""The facts of a finished game that the debrief is written from (by the offline writer or a real model)."""

from __future__ import annotations

from typing import Any

from simulations.engine.scenario import Scenario
from simulations.engine.state import GameState, IssueState
from simulations.models import Event, Game, TranscriptEntry


def _why_no(scenario: Scenario, state: GameState, issue: IssueState, role: str) -> str:
    if role == state.human_role:
        return "your own vote"
    assert issue.proposal is not None
    stance = state.stances[role][issue.issue_id]
    for cond in stance.conditions:
        if cond.accept == issue.proposal and cond.if_offered:
            return "it needed " + " and ".join(scenario.offer(o).label for o in cond.if_offered)
    if issue.proposal in stance.red_lines:
        return "a red line for it"
    return "not among the options it could accept"


def debrief_facts(game: Game, scenario: Scenario, state: GameState) -> dict[str, Any]:
    human = state.human_role or ""
    human_role = scenario.role(human) if human else None
    aims = {i: s.preferred for i, s in state.stances[human].items()} if human else {}
    results = []
    missed: list[str] = []
    for issue_state in state.round3.issues:
        issue = scenario.issue(issue_state.issue_id)
        assert issue_state.proposal is not None
        against = [r for r, b in issue_state.ballots.items() if b == "no"]
        results.append(
            {
                "title": issue.title,
                "proposal_label": issue.option(issue_state.proposal).label,
                "adopted": bool(issue_state.adopted),
                "against": ", ".join(scenario.display_name(r) for r in against),
                "why": [
                    f"{scenario.display_name(r)}: {_why_no(scenario, state, issue_state, r)}" for r in against
                ],
                "aim_met": bool(issue_state.adopted) == (issue_state.proposal == aims.get(issue.id)),
            }
        )
        for role in against:
            if role == human:
                continue
            for cond in state.stances[role][issue.id].conditions:
                if cond.accept != issue_state.proposal or not cond.if_offered:
                    continue
                offers = " and ".join(scenario.offer(o).label for o in cond.if_offered)
                yours = human_role is not None and set(cond.if_offered) <= set(human_role.can_offer)
                who = (
                    "you could have offered it"
                    if yours
                    else "a delegation able to offer it could have unlocked it"
                )
                missed.append(
                    f"{scenario.display_name(role)} would have accepted {issue.title.lower()} with {offers}: {who}"
                )
    human_seqs = set(TranscriptEntry.objects.filter(game=game, speaker=human).values_list("seq", flat=True))
    moved = []
    for changes in (
        Event.objects.filter(game=game).exclude(stance_changes=[]).values_list("stance_changes", flat=True)
    ):
        for change in changes:
            if change["cause_seq"] in human_seqs:
                moved.append(
                    {
                        "role": scenario.display_name(change["role"]),
                        "title": scenario.issue(change["issue"]).title,
                        "reason": change["reason"],
                    }
                )
    commitments = [
        f"{scenario.display_name(c.by)} promised {scenario.display_name(c.to)} to support {c.promise} "
        f"in return for {c.in_return}: {c.status}"
        for c in state.commitments
    ]
    return {
        "purpose": "summary",
        "seed": state.seed,
        "turn": state.event_seq + 1,
        "role": {"id": "debrief"},
        "human": {
            "name": scenario.display_name(human) if human else "the student",
            "aims": [
                {"title": scenario.issue(i).title, "label": scenario.issue(i).option(o).label}
                for i, o in aims.items()
            ],
        },
        "results": results,
        "moved_by_human": moved,
        "commitments": commitments,
        "missed": missed,
    }
