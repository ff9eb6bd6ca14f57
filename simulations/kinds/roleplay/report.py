"""What a finished (or running) practice conversation amounts to: the score per branch (states reached of states
in the branch), every judgment in words, and the whole as Markdown for download. The export's data keeps the
scenario's ids; what people read names states and branches by their words (wording.py)."""

from __future__ import annotations

from simulations.services.files.export import inert, quoted
from simulations.services.files.export_schema import Strict

from . import graph
from .document import Judgment, RoleplayState
from .scenario import RoleplayScenario, fill
from .wording import labels, outcome_sentence, plain, stage_marked

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
    """One judgment as a reader reads it, each state by its words."""
    words = labels(scenario)

    def named(state: str) -> str:
        return f"“{words.get(state, state)}”"

    if j.is_transition:
        if j.type == "terminal":
            ended = (
                "the goal was reached"
                if j.to_state == "SUCCESS"
                else "the conversation ended without the goal"
            )
            return f"Message {j.turn}: {ended}"
        how = {"initial": "opened", "parallel": "went on to", "fork": "chose"}.get(j.type, "reached")
        text = f"Message {j.turn}: {how} {named(j.to_state)}"
        if j.blocked:
            text += f" (which closed {', '.join(named(b) for b in j.blocked)} for good)"
        return text
    text = f"Message {j.turn}: no step reached"
    if j.refused:
        which = named(j.refused) if j.refused in words else "a step"
        text += f" (the judge named {which}, which was not open: refused)"
    return text


def ending(scenario: RoleplayScenario, state: RoleplayState) -> str:
    """The terminal state's feedback as written for the character (its addprompt), for the end screen."""
    if not state.outcome:
        return ""
    spec = scenario.tstates[state.outcome]  # type: ignore[index]
    return fill(spec.addprompt, username=state.username, botname=scenario.botname)


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
        lines += [inert(outcome_sentence(scenario, state)), ""]
    lines += ["## Score per branch", "", "| Branch | Reached | Steps reached |", "|---|---|---|"]
    for row in branch_rows(scenario, state):
        reached = ", ".join(words[s] for s in row.states) or "–"
        lines.append(f"| {words[row.branch]} | {row.reached} of {row.total} | {reached} |")
    lines += ["", "## Transitions", ""]
    for j in state.judgments:
        lines.append(f"- {inert(judgment_line(scenario, j))}. {inert(plain(j.explanation, scenario))}")
    lines += ["", "## Conversation", ""]
    for m in state.messages:
        who = state.username if m.role == "student" else scenario.botname
        lines += [f"**{inert(who)}:**", *quoted_staged(m.text), ""]
    return "\n".join(lines).rstrip() + "\n"
