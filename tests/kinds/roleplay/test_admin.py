"""Practice scenarios in Django admin: a seed-001 JSON file uploaded as it is becomes a draft (a bad one is refused
with the path of the field); the preview draws the graph and lists every condition; the forms editor changes a
transition's type and the schema checks it; a rehearsal plays the draft to SUCCESS with the seeker bot."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from simulations.models import Game, ScenarioDraft
from tests.web.test_scenario_authoring import DRAFTS, _staff
from tests.web.test_scenario_forms import _posted, part_url

from .conftest import store
from .tiny import tiny

pytestmark = pytest.mark.django_db


@pytest.fixture
def editor() -> Client:
    return _staff("editor", editor=True)


def upload(editor: Client, document: dict[str, object], name: str = "tea.json") -> str:
    file = SimpleUploadedFile(name, json.dumps(document).encode())
    return editor.post(f"{DRAFTS}import/", {"file": file}, follow=True).content.decode()


def test_a_bare_json_file_imports_as_a_draft_and_a_bad_one_names_its_field(editor: Client) -> None:
    assert "1 draft(s) imported from tea.json" in upload(editor, tiny())
    draft = ScenarioDraft.objects.get()
    assert draft.kind == "roleplay" and draft.document == tiny()
    bad = tiny()
    bad["tstates"]["FAIL"]["name"] = "OOPS"
    assert "document 1.scenario.tstates.FAIL.name" in upload(editor, bad, "bad.json")
    assert ScenarioDraft.objects.count() == 1


def test_the_preview_draws_the_graph_and_lists_the_conditions(editor: Client) -> None:
    upload(editor, tiny())
    draft = ScenarioDraft.objects.get()
    html = editor.get(f"{DRAFTS}{draft.pk}/preview/").content.decode()
    assert 'class="state-graph"' in html and 'data-state="Apology" data-mark="available"' in html
    assert "Apology → Remake (fork)" in html and "{username} apologizes for the mistake" in html


def test_the_forms_editor_changes_a_transitions_type_checked_by_the_schema(editor: Client) -> None:
    upload(editor, tiny())
    draft = ScenarioDraft.objects.get()
    where = ("states", "CalmBranch", "Apology", "transitions", "Remake", "type")
    assert editor.get(f"{DRAFTS}{draft.pk}/fields/").status_code == 200
    editor.post(part_url(draft, where), _posted(draft, {where: "parallel"}))
    draft.refresh_from_db()
    assert draft.document["states"]["CalmBranch"]["Apology"]["transitions"]["Remake"]["type"] == "parallel"
    page = editor.post(part_url(draft, where), _posted(draft, {where: "sometimes"}))
    assert "Select a valid choice" in page.content.decode()
    draft.refresh_from_db()
    assert draft.document["states"]["CalmBranch"]["Apology"]["transitions"]["Remake"]["type"] == "parallel"


def test_a_rehearsal_plays_a_shipped_scenario_to_success(editor: Client) -> None:
    version = store("salary-negotiation.json")
    editor.post(
        "/admin/simulations/scenarioversion/", {"action": "clone_versions", "_selected_action": [version.pk]}
    )
    draft = ScenarioDraft.objects.get()
    page = editor.post(DRAFTS, {"action": "rehearse_drafts", "_selected_action": [draft.pk]}, follow=True)
    game = Game.objects.get()
    assert "rehearsed to the end" in page.content.decode()
    assert game.state["visited"][-1] == "SUCCESS" and game.phase == "ENDED"


def test_the_forms_editor_edits_cues_plain_words_and_voice_where_the_file_has_them(editor: Client) -> None:
    document = tiny()
    apology = document["states"]["CalmBranch"]["Apology"]
    apology["plain"] = "Say sorry for the wrong tea"
    apology["cues"] = {"apologizes for the mistake": ["sorry", "my apologies"]}
    document["voice"] = {"press": ["Well?"]}
    upload(editor, document)
    draft = ScenarioDraft.objects.get()
    cues = ("states", "CalmBranch", "Apology", "cues", "apologizes for the mistake")
    assert "Cues: “apologizes for the mistake”" in editor.get(part_url(draft, cues)).content.decode()
    editor.post(part_url(draft, cues), _posted(draft, {cues: ["sorry", "my bad"]}))
    draft.refresh_from_db()
    assert draft.document["states"]["CalmBranch"]["Apology"]["cues"] == {
        "apologizes for the mistake": ["sorry", "my bad"]
    }
    voice = ("voice", "press")
    editor.post(part_url(draft, voice), _posted(draft, {voice: ["Well?", "And then?"]}))
    draft.refresh_from_db()
    assert draft.document["voice"] == {"press": ["Well?", "And then?"]}
    assert draft.document["states"]["CalmBranch"]["Apology"]["plain"] == "Say sorry for the wrong tea"


def test_the_preview_shows_each_conditions_cues_and_plain_words(editor: Client) -> None:
    version = store("cafe-barista.json")
    editor.post(
        "/admin/simulations/scenarioversion/", {"action": "clone_versions", "_selected_action": [version.pk]}
    )
    draft = ScenarioDraft.objects.get()
    html = editor.get(f"{DRAFTS}{draft.pk}/preview/").content.decode()
    assert "<em>insists on the queue</em>: rules are rules · those are the rules" in html
    assert "Own the mix-up as the café&#x27;s mistake, without excuses" in html
