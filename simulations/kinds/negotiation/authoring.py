"""What the admin's structured editor shows of a negotiation: the scenario's text, each issue and its options,
each delegation's briefs and opening variants, every stance as a grid (delegations by issues), and the chair's
lines; each option's plain-word cues (one a line). Keywords, conditions, offers (and their cues), arguments and talk
lines stay in the YAML editor (nested lists a form handles badly)."""

from __future__ import annotations

from typing import Any

from simulations.authoring import FieldSpec

from .preview import preview as preview


def authoring_fields(document: dict[str, Any]) -> list[FieldSpec]:
    return [
        *_scenario(document),
        *_issues(document),
        *_roles(document),
        *_stances(document),
        *_chair(document),
    ]


def _scenario(document: dict[str, Any]) -> list[FieldSpec]:
    s = "Scenario"
    return [
        FieldSpec(s, ("title",), "Title", "text"),
        FieldSpec(s, ("summary",), "Summary", "long_text", help="What the lobby and the briefing say of it."),
        FieldSpec(s, ("talk_messages_each",), "Messages each in a talk", "integer", minimum=1, maximum=20),
    ]


def _issues(document: dict[str, Any]) -> list[FieldSpec]:
    out = []
    for i, issue in enumerate(document["issues"]):
        row = f"Issue {issue['id']}"
        out += [
            FieldSpec("Issues", ("issues", i, "title"), "Title", "text", row=row),
            FieldSpec("Issues", ("issues", i, "description"), "Description", "long_text", row=row),
        ]
        for o, option in enumerate(issue["options"]):
            where = ("issues", i, "options", o)
            out += [
                FieldSpec("Issues", (*where, "label"), f"Option {option['id']}: label", "text", row=row),
                FieldSpec("Issues", (*where, "description"), f"Option {option['id']}: description", "long_text",
                          row=row),
            ]  # fmt: skip
            # The plain words by which the judge recognises the option (docs/scenario-format.md), one cue a line;
            # its keywords stay in the YAML, with the offers'. A document written before cues existed has no list.
            if "cues" in option:
                out.append(
                    FieldSpec("Issues", (*where, "cues"), f"Option {option['id']}: cues", "lines", row=row,
                              help=CUES_HELP)
                )  # fmt: skip
    return out


CUES_HELP = (
    "One a line: plain words a student may use. Groups joined by ' + ' must all occur close together, in any "
    "order; words joined by '|' are alternatives (treaty|agreement + teeth|enforceable)."
)


def _roles(document: dict[str, Any]) -> list[FieldSpec]:
    out = []
    for r, role in enumerate(document["roles"]):
        row, where = f"{role['name']} ({role['id']})", ("roles", r)
        brief = (*where, "confidential_brief")
        out += [
            FieldSpec("Delegations", (*where, "name"), "Name", "text", row=row),
            FieldSpec("Delegations", (*where, "influence"), "Influence", "number", row=row, minimum=0, maximum=1,
                      help="0 to 1: how much its words move others."),
            FieldSpec("Delegations", (*where, "public_brief"), "Public brief", "long_text", row=row,
                      help="Every seat reads it."),
            FieldSpec("Delegations", (*brief, "interests"), "Confidential: interests", "long_text", row=row,
                      help="Only this seat reads the confidential brief (and its AI delegation)."),
            FieldSpec("Delegations", (*brief, "priorities"), "Confidential: priorities", "lines", row=row,
                      help="One a line."),
            FieldSpec("Delegations", (*brief, "red_lines"), "Confidential: red lines", "lines", row=row,
                      help="One a line."),
            FieldSpec("Delegations", (*brief, "can_trade"), "Confidential: can trade", "lines", row=row,
                      help="One a line."),
        ]  # fmt: skip
        if (
            "also_called" in role
        ):  # a document written before the field existed has none (the YAML editor adds it)
            out.append(
                FieldSpec("Delegations", (*where, "also_called"), "Also called", "lines", row=row,
                          help="One a line: other names students use for it (its capital, a short form).")
            )  # fmt: skip
        for v, variant in enumerate(role["openings"]):
            opening = (*where, "openings", v)
            name = f"Opening {variant['id']}"
            out += [
                FieldSpec("Delegations", (*opening, "summary"), f"{name}: summary", "text", row=row),
                FieldSpec("Delegations", (*opening, "text"), f"{name}: speech", "long_text", row=row),
            ]
    return out


def _stances(document: dict[str, Any]) -> list[FieldSpec]:
    options = {
        issue["id"]: tuple((o["id"], f"{o['id']} {o['label']}") for o in issue["options"])
        for issue in document["issues"]
    }
    out = []
    for r, role in enumerate(document["roles"]):
        row = f"{role['name']} ({role['id']})"
        for issue in document["issues"]:
            where, column, choices = (
                ("roles", r, "stances", issue["id"]),
                f"{issue['id']}: {issue['title']}",
                options[issue["id"]],
            )
            out += [
                FieldSpec("Stances", (*where, "preferred"), "Preferred", "choice", row=row, column=column,
                          choices=choices),
                FieldSpec("Stances", (*where, "acceptable"), "Acceptable", "choices", row=row, column=column,
                          choices=choices),
                FieldSpec("Stances", (*where, "red_lines"), "Red lines", "choices", row=row, column=column,
                          choices=choices),
                FieldSpec("Stances", (*where, "firmness"), "Firmness", "number", row=row, column=column,
                          minimum=0, maximum=1),
            ]  # fmt: skip
    return out


def _chair(document: dict[str, Any]) -> list[FieldSpec]:
    chair = document["chair"]
    row = f"{chair.get('name', 'The chair')}"
    return [
        FieldSpec("Chair", ("chair", "lines", key), key.replace("_", " ").capitalize(), "lines", row=row,
                  help="One line a line; the chair picks among them. Placeholders in {braces} as in the YAML.")
        for key in chair["lines"]
    ]  # fmt: skip


def rehearsal(scenario: Any) -> tuple[str | None, dict[str, Any]]:
    return scenario.voters[0], {}  # a passive student in the first voting seat: the delegations decide
