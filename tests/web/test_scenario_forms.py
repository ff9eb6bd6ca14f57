"""The admin's forms editor for scenario drafts (issue #15): a kind's main fields as forms, stances as a grid,
checked by the kind's schema with its errors beside the fields at fault; one part a page under a table of contents
(issue #69)."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.admin.models import LogEntry
from django.test import Client

from simulations.authoring import FieldSpec, StructuredForm, get_at, parts
from simulations.kinds import get_kind
from simulations.models import ScenarioDraft
from simulations.services.content.scenarios import load_scenario
from tests.helpers import mercury_version
from tests.web.test_scenario_authoring import DRAFTS, _clone, _staff

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def editor() -> Client:
    return _staff("editor", editor=True)


def _specs(draft: ScenarioDraft) -> list[FieldSpec]:
    return get_kind(draft.kind).admin.authoring_fields(draft.document)


def _posted(draft: ScenarioDraft, changes: dict[tuple[Any, ...], Any]) -> dict[str, Any]:
    """What the browser posts: every field as the page shows it, with `changes` (by document path) made."""
    specs = _specs(draft)
    form = StructuredForm(specs, draft.document)
    data: dict[str, Any] = {}
    for n, spec in enumerate(specs):
        value = changes.get(spec.path, form.fields[f"f{n}"].initial)
        if spec.value == "flag":
            if value:
                data[f"f{n}"] = "on"
        elif spec.value == "lines" and isinstance(value, list):
            data[f"f{n}"] = "\n".join(value)
        else:
            data[f"f{n}"] = value
    return data


def _field_name(draft: ScenarioDraft, path: tuple[Any, ...]) -> str:
    return f"f{[s.path for s in _specs(draft)].index(path)}"


def part_url(draft: ScenarioDraft, path: tuple[Any, ...]) -> str:
    """The forms editor's page of the part that holds the field at `path`."""
    n = [s.path for s in _specs(draft)].index(path)
    part = next(p for p in parts(_specs(draft)) if n in p.fields)
    return f"{DRAFTS}{draft.pk}/fields/?part={part.key}"


def test_an_editor_edits_stances_briefs_and_chair_lines_in_forms(editor: Client) -> None:
    draft = _clone(editor, mercury_version())
    before = copy.deepcopy(draft.document)
    page = editor.get(f"{DRAFTS}{draft.pk}/fields/?part=stances")
    assert page.status_code == 200
    html = page.content.decode()
    grid = html[html.index('<table class="scenario-grid">') :]
    for issue in before["issues"]:  # a column per issue, a row per delegation
        assert f"{issue['id']}: {issue['title']}" in grid
    for role in before["roles"]:
        assert f'<th scope="row">{role["name"]} ({role["id"]})</th>' in grid

    bra = next(i for i, r in enumerate(before["roles"]) if r["id"] == "BRA")
    issue = before["issues"][0]
    stance = ("roles", bra, "stances", issue["id"])
    other = next(
        o["id"]
        for o in issue["options"]
        if o["id"] != before["roles"][bra]["stances"][issue["id"]]["preferred"]
    )
    changes = {
        (*stance, "preferred"): other,
        (*stance, "acceptable"): [other],
        (*stance, "red_lines"): [],
        (*stance, "firmness"): 0.9,
        ("roles", bra, "public_brief"): "Brazil speaks for the Amazon's artisanal miners.\nA second line.",
        ("roles", bra, "confidential_brief", "priorities"): ["Funding first", "Time to phase out"],
        ("chair", "lines", "round1_close"): ["Thank you all; the openings are done."],
    }
    # One part at a time: each post saves its own part's fields (and ignores the others').
    edited: list[tuple[Any, ...]] = [
        (*stance, "firmness"),
        ("roles", bra, "public_brief"),
        ("chair", "lines", "round1_close"),
    ]
    for path in edited:
        response = editor.post(part_url(draft, path), _posted(draft, changes))
        assert response.status_code == 302, response.content.decode()[:2000]
        assert response["Location"] == part_url(draft, path)
        draft.refresh_from_db()
    expected = copy.deepcopy(before)
    for path, value in changes.items():
        node = expected
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    assert draft.document == expected  # the edits, and nothing else changed
    assert LogEntry.objects.filter(
        object_id=str(draft.pk), change_message="Edited in the forms editor (Delegations: Brazil (BRA))."
    ).exists()


def test_the_schemas_errors_show_beside_the_field_at_fault_and_nothing_is_saved(editor: Client) -> None:
    draft = _clone(editor, mercury_version())
    before = copy.deepcopy(draft.document)
    issue = before["issues"][1]
    stance = ("roles", 0, "stances", issue["id"])
    preferred = before["roles"][0]["stances"][issue["id"]]["preferred"]
    elsewhere = next(o["id"] for o in issue["options"] if o["id"] != preferred)
    # The preferred option made a red line too: the stance's own check refuses it.
    changes = {(*stance, "acceptable"): [preferred], (*stance, "red_lines"): [preferred, elsewhere]}
    response = editor.post(part_url(draft, (*stance, "preferred")), _posted(draft, changes))
    assert response.status_code == 200
    html = response.content.decode()
    assert "The scenario was not saved" in html
    cell = html[: html.index(f'id="id_{_field_name(draft, (*stance, "preferred"))}"')]
    cell = cell[cell.rindex('<div class="cell-field') :]
    assert "errors" in cell.split(">")[0] and "cannot be both acceptable and a red line" in cell
    draft.refresh_from_db()
    assert draft.document == before

    # A value out of its range is refused by the form itself, beside its field.
    response = editor.post(
        part_url(draft, (*stance, "firmness")), _posted(draft, {(*stance, "firmness"): 1.5})
    )
    html = response.content.decode()
    name = _field_name(draft, (*stance, "firmness"))
    at = html[: html.index(f'id="id_{name}"')]
    assert "less than or equal to 1" in at[at.rindex('<div class="cell-field') :]
    draft.refresh_from_db()
    assert draft.document == before


def test_staff_who_may_only_read_see_the_forms_disabled_and_cannot_save(editor: Client) -> None:
    draft = _clone(editor, mercury_version())
    reader = _staff("reader", editor=False)
    page = reader.get(f"{DRAFTS}{draft.pk}/fields/?part=stances")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'value="Save this part"' not in html
    assert re.search(r'<select name="f\d+"[^>]* disabled', html)
    assert reader.post(f"{DRAFTS}{draft.pk}/fields/", _posted(draft, {})).status_code == 403
    assert Client().get(f"{DRAFTS}{draft.pk}/fields/").status_code == 302  # to the log-in


def test_a_deliberation_draft_has_its_own_fields(editor: Client) -> None:
    version, _ = load_scenario(folder=ROOT / "scenarios" / "deliberation" / "code-review.yaml")
    draft = _clone(editor, version)
    roles = [p["role"] for p in draft.document["personas"]]
    member, proposer = ("personas", roles.index("security")), ("personas", roles.index("proposer"))
    changes = {(*member, "brief"): "Reads every diff twice.", (*member, "confidence_threshold"): 0.7}
    response = editor.post(part_url(draft, (*member, "brief")), _posted(draft, changes))
    assert response.status_code == 302
    draft.refresh_from_db()
    assert get_at(draft.document, (*member, "brief")) == "Reads every diff twice."
    assert get_at(draft.document, (*member, "confidence_threshold")) == 0.7

    # The scenario's own rule (the proposer never vetoes) is shown above the forms, and nothing is saved.
    before = copy.deepcopy(draft.document)
    response = editor.post(
        part_url(draft, (*proposer, "can_veto")), _posted(draft, {(*proposer, "can_veto"): True})
    )
    assert response.status_code == 200
    assert "the proposer and the chairperson neither vote nor veto" in response.content.decode()
    draft.refresh_from_db()
    assert draft.document == before


def test_a_negotiations_forms_are_one_part_a_page_under_a_table_of_contents(editor: Client) -> None:
    draft = _clone(editor, mercury_version())
    specs = _specs(draft)
    pages = parts(specs)
    roles = [
        f"delegations-{r['name'].lower().replace(' ', '-')}-{r['id'].lower()}"
        for r in draft.document["roles"]
    ]
    assert [p.key for p in pages] == ["scenario", "issues", *roles, "stances", "chair"]
    assert sorted(n for p in pages for n in p.fields) == list(range(len(specs)))  # each field in one part
    assert max(len(p.fields) for p in pages if p.section != "Stances") <= 40  # the grid alone stays whole

    html = editor.get(f"{DRAFTS}{draft.pk}/fields/").content.decode()  # the first part
    toc = html[html.index('<nav class="scenario-parts"') : html.index("</nav>", html.index("scenario-parts"))]
    assert 'aria-current="page">Scenario</a>' in toc
    for page in pages[1:]:
        assert f'href="{DRAFTS}{draft.pk}/fields/?part={page.key}"' in toc
    form = html[html.index('<form method="post" class="scenario-fields"') :]
    assert sorted(set(re.findall(r'name="(f\d+)"', form))) == [f"f{n}" for n in pages[0].fields]

    brazil = next(p for p in pages if p.key.endswith("-bra"))
    html = editor.get(f"{DRAFTS}{draft.pk}/fields/?part={brazil.key}").content.decode()
    form = html[html.index('<form method="post" class="scenario-fields"') :]
    assert sorted(set(re.findall(r'name="f(\d+)"', form)), key=int) == [str(n) for n in brazil.fields]
    assert '<h2 id="part-heading">Delegations: Brazil (BRA)</h2>' in form
    assert (
        'value="Save this part"' in form and f"?part={pages[pages.index(brazil) + 1].key}" in form
    )  # next part


def test_a_problem_in_another_part_is_shown_above_the_form_naming_that_part() -> None:
    from simulations.services.files.scenario_drafts import Problem

    document = {"title": "T", "roles": [{"name": "A", "brief": "b"}]}
    specs = [
        FieldSpec("Scenario", ("title",), "Title", "text"),
        FieldSpec("Roles", ("roles", 0, "name"), "Name", "text", row="A"),
        FieldSpec("Roles", ("roles", 0, "brief"), "Brief", "long_text", row="A"),
    ]
    form = StructuredForm(specs, document, {"f0": "T"}, only=(0,))
    assert list(form.fields) == ["f0"] and form.is_valid()
    assert form.edited(document) == document
    form.add_problems([Problem("roles[0].brief", "Field required", ("roles", 0, "brief")),
                       Problem("title", "Too short", ("title",))])  # fmt: skip
    assert form.errors == {
        "__all__": ["In Roles: A — roles[0].brief: Field required"],
        "f0": ["Too short"],
    }
