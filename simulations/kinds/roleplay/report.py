"""What a finished (or running) practice conversation amounts to: the score per branch (states reached of states
in the branch), every judgment in words, and the whole as Markdown for download. The export's data keeps the
scenario's ids; what people read names states and branches by their words (wording.py)."""

from __future__ import annotations

from simulations.services.files.export import inert, quoted
from simulations.services.files.export_schema import Strict

from . import graph
from .document import Judgment, RoleplayState
from .machine import LEFT
from .scenario import RoleplayScenario, fill
from .wording import debrief, labels, plain, stage_marked, step_words

# Stands in for a stage direction's asterisks while `quoted` escapes every other one (a private-use character
# no message keeps: stage_marked drops it from the text first).
_EMPHASIS = "\ue000"


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


def judgment_line(scenario: RoleplayScenario, j: Judgment) -> str:
    """One judgment as a reader reads it, each step in the scenario's plain words."""

    def named(state: str) -> str:
        return f"“{step_words(scenario, state)}”"

    if j.is_transition:
        if j.type == "terminal":
            ended = (
                "the goal was reached"
                if j.to_state == "SUCCESS"
                else "the conversation ended without the goal"
            )
            return f"Message {j.turn}: {ended}"
        how = "chose" if j.type == "fork" else "reached"
        text = f"Message {j.turn}: {how} {named(j.to_state)}"
        if j.blocked:
            text += f" (which closed {', '.join(named(b) for b in j.blocked)} for good)"
        return text
    text = f"Message {j.turn}: no step reached"
    if j.refused:
        which = named(j.refused) if j.refused in scenario.state_names() else "a step"
        text += f" (the judge named {which}, which was not open: refused)"
    return text


def steps_by_message(scenario: RoleplayScenario, state: RoleplayState) -> dict[int, list[str]]:
    """Student message number (1-based) -> the steps it reached, in plain words (an ending by its words)."""
    found: dict[int, list[str]] = {}
    for j in state.judgments:
        if j.is_transition and j.explanation != LEFT:  # leaving is no message's doing
            found.setdefault(j.turn, []).append(step_words(scenario, j.to_state))
    return found


def quoted_staged(text: str) -> list[str]:
    """A message as `quoted` writes it (plain, inside a block quote), its `*stage directions*` kept as emphasis."""
    return [line.replace(_EMPHASIS, "*") for line in quoted(stage_marked(text, _EMPHASIS))]


def render_markdown(scenario: RoleplayScenario, state: RoleplayState) -> str:
    words = labels(scenario)
    goal = plain(fill(scenario.goal, username=state.username, botname=scenario.botname), scenario)
    lines = [f"# {inert(scenario.title)} — practice conversation with {inert(scenario.botname)}", ""]
    lines += [f"**Goal:** {inert(goal)}", ""]
    outcome = words[state.outcome] if state.outcome else "not ended yet"
    lines += [f"**Outcome:** {outcome}", ""]
    if state.outcome:
        told = debrief(scenario, state)
        lines += [inert(" ".join(x for x in (told.world, told.why) if x)), ""]
        for title, items in (("What went well", told.went_well), ("What was missing", told.missing),
                             ("What set you back", told.set_back)):  # fmt: skip
            if items:
                lines += [f"## {title}", "", *[f"- {inert(item)}" for item in items], ""]
    lines += ["## Score per branch", "", "| Branch | Reached | Steps reached |", "|---|---|---|"]
    for row in branch_rows(scenario, state):
        reached = ", ".join(words[s] for s in row.states) or "–"
        lines.append(f"| {words[row.branch]} | {row.reached} of {row.total} | {reached} |")
    lines += ["", "## Each message", ""]
    for j in state.judgments:
        lines.append(f"- {inert(judgment_line(scenario, j))}. {inert(plain(j.explanation, scenario))}")
    lines += ["", "## Conversation", ""]
    for m in state.messages:
        who = state.username if m.role == "student" else scenario.botname
        lines += [f"**{inert(who)}:**", *quoted_staged(m.text), ""]
    return "\n".join(lines).rstrip() + "\n"
