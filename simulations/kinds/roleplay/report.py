"""What a finished (or running) practice conversation amounts to: the score per branch (states reached of states
in the branch), every judgment in words, and the whole as Markdown for download."""

from __future__ import annotations

from simulations.services.export import inert, quoted
from simulations.services.export_schema import Strict

from . import graph
from .document import Judgment, RoleplayState
from .scenario import RoleplayScenario, fill


class BranchRow(Strict):
    branch: str
    reached: int
    total: int
    states: list[str]  # the branch's states reached, in visit order


def branch_rows(scenario: RoleplayScenario, state: RoleplayState) -> list[BranchRow]:
    rows = []
    for score in graph.branch_scores(scenario, state.visited):
        mine = scenario.states[score.branch]
        rows.append(BranchRow(branch=score.branch, reached=score.reached, total=score.total,
                              states=[s for s in state.visited if s in mine]))  # fmt: skip
    return rows


def judgment_line(j: Judgment) -> str:
    """One judgment as a reader reads it."""
    if j.is_transition:
        how = {"initial": "opened", "parallel": "went on to", "fork": "chose", "terminal": "ended in"}.get(
            j.type, "reached"
        )
        text = f"Message {j.turn}: {how} {j.to_state}"
        if j.blocked:
            text += f" (which closed {', '.join(j.blocked)} for good)"
        return text
    text = f"Message {j.turn}: no transition"
    if j.refused:
        text += f" (the judge named {j.refused}, which was not open: refused)"
    return text


def ending(scenario: RoleplayScenario, state: RoleplayState) -> str:
    """The terminal state's feedback as written for the character (its addprompt), for the end screen."""
    if not state.outcome:
        return ""
    spec = scenario.tstates[state.outcome]  # type: ignore[index]
    return fill(spec.addprompt, username=state.username, botname=scenario.botname)


def render_markdown(scenario: RoleplayScenario, state: RoleplayState) -> str:
    lines = [f"# {inert(scenario.title)} — practice conversation with {inert(scenario.botname)}", ""]
    lines += [
        f"**Goal:** {inert(fill(scenario.goal, username=state.username, botname=scenario.botname))}",
        "",
    ]
    lines += [f"**Outcome:** {state.outcome or 'not ended yet'}", ""]
    lines += ["## Score per branch", "", "| Branch | Reached | States |", "|---|---|---|"]
    for row in branch_rows(scenario, state):
        lines.append(f"| {row.branch} | {row.reached} of {row.total} | {', '.join(row.states) or '–'} |")
    lines += ["", "## Transitions", ""]
    for j in state.judgments:
        lines.append(f"- {inert(judgment_line(j))}. {inert(j.explanation)}")
    lines += ["", "## Conversation", ""]
    for m in state.messages:
        who = state.username if m.role == "student" else scenario.botname
        lines += [f"**{inert(who)}:**", *quoted(m.text), ""]
    return "\n".join(lines).rstrip() + "\n"
