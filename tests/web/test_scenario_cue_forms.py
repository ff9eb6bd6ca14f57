"""An option's plain-word cues are edited in the admin's forms (and, like its keywords, in the YAML editor), checked
like the rest of the scenario: a bad cue is refused (beside its field, or above the form when it is another
option's) and nothing is saved."""

from __future__ import annotations

import copy

import pytest
from django.test import Client

from simulations.models import ScenarioDraft
from tests.helpers import mercury_version
from tests.web.test_scenario_authoring import _clone, _staff
from tests.web.test_scenario_forms import _field_name, _posted, part_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def editor() -> Client:
    return _staff("editor", editor=True)


def _cues_of(draft: ScenarioDraft, issue: int, option: int) -> tuple[object, ...]:
    return ("issues", issue, "options", option, "cues")


def test_an_editor_edits_an_options_cues_in_the_forms(editor: Client) -> None:
    draft = _clone(editor, mercury_version())
    path = _cues_of(draft, 0, 0)
    assert draft.document["issues"][0]["options"][0]["cues"], "the published version's cues reach the draft"
    page = editor.get(part_url(draft, path))
    html = page.content.decode()
    assert "Option 1.1: cues" in html
    cues = ["pact|accord + with bite|that bites"]
    response = editor.post(part_url(draft, path), _posted(draft, {path: cues}))
    assert response.status_code in (200, 302)
    draft.refresh_from_db()
    assert draft.document["issues"][0]["options"][0]["cues"] == cues


def test_a_bad_cue_is_refused_beside_its_field(editor: Client) -> None:
    draft = _clone(editor, mercury_version())
    before = copy.deepcopy(draft.document)
    path = _cues_of(draft, 1, 0)  # option 2.1
    # A cue that does not parse is the option's own problem: shown at its field.
    response = editor.post(part_url(draft, path), _posted(draft, {path: ["smokestacks + "]}))
    html = response.content.decode()
    assert "The scenario was not saved" in html
    at = html.index(f'id="id_{_field_name(draft, path)}"')
    assert "empty word choice" in html[at - 1500 : at + 1500]
    draft.refresh_from_db()
    assert draft.document == before
    # A cue another option of the issue already has is the scenario's problem: shown above the form.
    response = editor.post(part_url(draft, path), _posted(draft, {path: ["excluding emission"]}))
    html = response.content.decode()
    assert "The scenario was not saved" in html
    assert "cue &#x27;excluding emission&#x27; is also a cue or keyword of option 2.2" in html
    draft.refresh_from_db()
    assert draft.document == before


def _also_called(draft: ScenarioDraft, role: str) -> tuple[object, ...]:
    index = next(n for n, r in enumerate(draft.document["roles"]) if r["id"] == role)
    return ("roles", index, "also_called")


def test_an_editor_edits_a_seats_other_names_and_a_shared_name_is_refused(editor: Client) -> None:
    draft = _clone(editor, mercury_version())
    path = _also_called(draft, "EU")
    assert "Also called" in editor.get(part_url(draft, path)).content.decode()
    names = ["the Union", "Brussels", "the Twenty-Seven"]
    response = editor.post(part_url(draft, path), _posted(draft, {path: names}))
    assert response.status_code in (200, 302)
    draft.refresh_from_db()
    assert draft.document["roles"][_also_called(draft, "EU")[1]]["also_called"] == names
    # Another seat's name (or another seat's other name) would read as either seat: refused, nothing saved.
    before = copy.deepcopy(draft.document)
    path = _also_called(draft, "CAN")
    html = editor.post(part_url(draft, path), _posted(draft, {path: ["Ottawa", "Brussels"]})).content.decode()
    assert "the name &#x27;Brussels&#x27; is also a name of CAN" in html
    draft.refresh_from_db()
    assert draft.document == before
