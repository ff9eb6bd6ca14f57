"""A practice conversation in the admin: its preview, its rehearsal, and what the structured editor shows: the character (name, who they are, how
they resist, the opening, the student's goal), every state's condition and addprompt by branch, every transition's
condition and type, and the terminal states; where the document has them, the plain words of each step and ending,
each condition's cues (one paraphrase a line) and the character's voice. Adding or removing states and branches,
or giving a seed file its first plain words, cues or voice, is done in the YAML editor."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from simulations.authoring import FieldSpec

from .document import RoleplayState
from .presenters import picture, staged
from .scenario import RoleplayScenario

QUOTE_HELP = "Quote one line the character may say here, in double quotes: the offline model speaks it."
PLAIN_HELP = "What the student reads for this, in the character's world; never a state's name."
CUES_HELP = "One paraphrase a line: how a student might say it. `&` joins parts all needed, `|` alternatives."


def _extras(section: str, where: tuple[str, ...], spec: dict[str, Any], row: str) -> list[FieldSpec]:
    """The plain words and the cues of a step, a transition or an ending, as far as the document has them."""
    out = []
    if "plain" in spec:
        out.append(FieldSpec(section, (*where, "plain"), "In plain words", "text", row=row, help=PLAIN_HELP))
    for clause in spec.get("cues", {}):
        out.append(FieldSpec(section, (*where, "cues", clause), f"Cues: “{clause}”", "lines", row=row,
                             help=CUES_HELP))  # fmt: skip
    return out


def authoring_fields(document: dict[str, Any]) -> list[FieldSpec]:
    out = [
        FieldSpec("Character", ("botname",), "Name", "text"),
        FieldSpec("Character", ("goal",), "The student's goal (shown to them)", "long_text"),
        FieldSpec("Character", ("character",), "Who the character is", "long_text"),
        FieldSpec("Character", ("negprompt",), "How the character resists", "long_text",
                  help="Quote a few pushback lines in double quotes: the offline model uses them when nothing moves."),
        FieldSpec("Character", ("opening",), "Opening message", "long_text"),
    ]  # fmt: skip
    for branch, states in document["states"].items():
        for name, spec in states.items():
            where, row = ("states", branch, name), f"{branch} · {name}"
            if "condition" in spec:
                out.append(
                    FieldSpec(
                        "States", (*where, "condition"), "Condition (from the start)", "long_text", row=row
                    )
                )
            out.append(FieldSpec("States", (*where, "addprompt"), "Added to the prompt", "long_text", row=row,
                                 help=QUOTE_HELP))  # fmt: skip
            out += _extras("States", where, spec, row)
            for target in spec.get("transitions", {}):
                t_row = f"{name} → {target}"
                out += [
                    FieldSpec("Transitions", (*where, "transitions", target, "condition"), "Condition", "long_text",
                              row=t_row),
                    FieldSpec("Transitions", (*where, "transitions", target, "type"), "Type", "choice", row=t_row,
                              choices=(("parallel", "parallel"), ("fork", "fork (blocks its fork siblings)"))),
                ]  # fmt: skip
                out += _extras(
                    "Transitions", (*where, "transitions", target), spec["transitions"][target], t_row
                )
    for terminal in ("SUCCESS", "FAIL"):
        ending = ("tstates", terminal)
        out += [
            FieldSpec("Endings", (*ending, "condition"), "Condition", "long_text", row=terminal),
            FieldSpec("Endings", (*ending, "addprompt"), "Added to the prompt", "long_text", row=terminal,
                      help=QUOTE_HELP),
        ]  # fmt: skip
        out += _extras("Endings", ending, document["tstates"].get(terminal, {}), terminal)
    for intent in document.get("voice", {}):
        out.append(FieldSpec("Character", ("voice", intent), f"Lines when the student's message is: {intent}",
                             "lines", help="One line a row: what the offline character says when nothing moved."))  # fmt: skip
    return out


def rehearsal(scenario: Any) -> tuple[str | None, dict[str, Any]]:
    return "student", {"username": "Rehearsal"}  # the seeker bot heads for SUCCESS


def preview(scenario: RoleplayScenario) -> str:
    """The admin's preview: the goal, the character, the graph as the student first sees it, every condition."""
    state = RoleplayState(seed=0, username="the student")
    return render_to_string(
        "roleplay/preview.html",
        {"scenario": scenario, "picture": picture(scenario, state), "opening": staged(scenario.opening)},
    )
