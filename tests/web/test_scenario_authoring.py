"""Scenario authoring in admin: an editor clones a version into a draft, edits it as YAML, whole or one section at a
time (schema errors shown beside the editor naming their section, nothing saved), publishes it as a new version;
plain staff only read; games already running keep their version."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Group, Permission, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.headless import play_game
from simulations.models import Game, ScenarioDraft, ScenarioVersion
from simulations.services.content.scenarios import latest_version, load_scenario
from simulations.services.files.scenario_drafts import as_yaml, dump_scenarios, find_in_sections
from simulations.services.ledger.turns import create_game
from simulations.views.lobby import latest_scenarios
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
DRAFTS = "/admin/simulations/scenariodraft/"
VERSIONS = "/admin/simulations/scenarioversion/"


def _staff(name: str, *, editor: bool) -> Client:
    user = User.objects.create_user(name, password="pw", is_staff=True)
    if editor:
        user.groups.add(Group.objects.get(name="Scenario editors"))
    else:  # staff who may look, not write
        user.user_permissions.add(*Permission.objects.filter(
            codename__in=["view_scenarioversion", "view_scenariodraft"]))  # fmt: skip
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def editor() -> Client:
    return _staff("editor", editor=True)


@pytest.fixture
def staff() -> Client:
    return _staff("reader", editor=False)


def _clone(client: Client, version: ScenarioVersion) -> ScenarioDraft:
    response = client.post(
        VERSIONS, {"action": "clone_versions", "_selected_action": [version.pk]}, follow=True
    )
    assert response.status_code == 200
    return ScenarioDraft.objects.get(based_on=version)


def _save(client: Client, draft: ScenarioDraft, text: str) -> Any:
    return client.post(f"{DRAFTS}{draft.pk}/change/", {"kind": draft.kind, "based_on": draft.based_on_id or "",
                                                        "text": text})  # fmt: skip


def _edited(document: dict[str, Any], **changes: Any) -> str:
    return as_yaml({**document, **changes})


def test_an_editor_clones_edits_and_publishes_a_new_version(editor: Client) -> None:
    v1 = mercury_version()
    draft = _clone(editor, v1)
    assert draft.document == v1.document and draft.slug == v1.slug
    page = editor.get(f"{DRAFTS}{draft.pk}/change/?section=all")
    assert page.status_code == 200 and b"Scenario (YAML)" in page.content

    response = _save(editor, draft, _edited(draft.document, title="Mercury, for the Tuesday class"))
    assert response.status_code == 302
    draft.refresh_from_db()
    assert draft.title == "Mercury, for the Tuesday class"
    page = editor.get(f"{DRAFTS}{draft.pk}/change/")
    assert b"+title: Mercury, for the Tuesday class" in page.content  # the diff against v1

    editor.post(DRAFTS, {"action": "publish_drafts", "_selected_action": [draft.pk]})
    v2 = latest_version(slug=v1.slug)
    assert v2 is not None and v2.version == v1.version + 1 and v2.title == "Mercury, for the Tuesday class"
    assert v2.source == "admin draft, by editor"
    logged = LogEntry.objects.filter(user__username="editor").values_list("change_message", flat=True)
    assert f"Published as {v2}." in logged and f"Published from draft {draft.pk}." in logged

    editor.post(
        DRAFTS, {"action": "publish_drafts", "_selected_action": [draft.pk]}
    )  # nothing new to publish
    assert ScenarioVersion.objects.filter(slug=v1.slug).count() == 2


def test_schema_errors_are_shown_beside_the_editor_and_nothing_is_saved(editor: Client) -> None:
    draft = _clone(editor, mercury_version())
    before = dict(draft.document)
    roles = [dict(r) for r in draft.document["roles"]]
    roles[0] = {**roles[0], "votes": "sometimes"}
    response = _save(editor, draft, _edited(draft.document, roles=roles))
    assert response.status_code == 200
    problem = f"roles[{roles[0]['id']}].votes: Input should be a valid boolean"
    assert problem in response.content.decode()

    response = _save(editor, draft, "title: [unclosed\n")
    assert response.status_code == 200 and "line 1: not valid YAML" in response.content.decode()
    response = _save(editor, draft, "- just\n- a list\n")
    assert "the scenario must be a mapping" in response.content.decode()
    draft.refresh_from_db()
    assert draft.document == before


def test_a_deliberation_draft_is_checked_by_its_own_schema(editor: Client) -> None:
    version, _ = load_scenario(folder=ROOT / "scenarios" / "deliberation" / "code-review.yaml")
    draft = _clone(editor, version)
    personas = [dict(p) for p in draft.document["personas"]]
    personas[1] = {**personas[1], "confidence_threshold": 3}
    response = _save(editor, draft, _edited(draft.document, personas=personas))
    assert f"personas[{personas[1]['id']}].confidence_threshold" in response.content.decode()


def test_plain_staff_read_but_cannot_change_or_publish(editor: Client, staff: Client) -> None:
    draft = _clone(editor, mercury_version())
    page = staff.get(f"{DRAFTS}{draft.pk}/change/")  # a read-only view, with the scenario as text
    assert page.status_code == 200
    html = page.content.decode()
    assert '<pre class="scenario-yaml draft-reader">slug: mercury' in html and "<textarea" not in html
    html = staff.get(f"{DRAFTS}{draft.pk}/change/?section=roles.BRA").content.decode()  # a section at a time
    shown = html.split('<pre class="scenario-yaml draft-reader">')[1].split("</pre>")[0]
    # Brazil's section alone (PostgreSQL's jsonb keeps keys in its own order, so no order is asserted)
    assert {"id: BRA", "name: Brazil"} <= set(shown.splitlines()) and "id: CAN" not in html
    assert _save(staff, draft, _edited(draft.document, title="Hijacked")).status_code == 403
    staff.post(DRAFTS, {"action": "publish_drafts", "_selected_action": [draft.pk]})
    staff.post(VERSIONS, {"action": "clone_versions", "_selected_action": [draft.based_on_id]})
    assert ScenarioVersion.objects.count() == 1 and ScenarioDraft.objects.count() == 1
    assert staff.get(f"{DRAFTS}add/").status_code == 403


def test_two_versions_compared(editor: Client) -> None:
    v1 = mercury_version()
    draft = _clone(editor, v1)
    _save(editor, draft, _edited(draft.document, title="Mercury II"))
    editor.post(DRAFTS, {"action": "publish_drafts", "_selected_action": [draft.pk]})
    v2 = latest_version(slug=v1.slug)
    assert v2 is not None
    page = editor.post(VERSIONS, {"action": "compare_versions", "_selected_action": [v1.pk, v2.pk]})
    text = page.content.decode()
    assert (
        "+title: Mercury II" in text and "-title: &#x27;Mercury: negotiating" in text
    )  # the YAML quotes a colon
    assert "+title: Mercury II" in editor.get(f"{VERSIONS}{v2.pk}/change/").content.decode()


def test_publishing_leaves_a_running_game_on_its_version(editor: Client) -> None:
    v1 = mercury_version()
    game = create_game(scenario_version=v1, seed=3)
    with pytest.raises(RuntimeError, match="did not finish"):  # interrupted in the middle of the game
        play_game(game_id=game.pk, policy=make_policy("advocate", "EU"), max_turns=60)
    draft = _clone(editor, v1)
    issues = [dict(i) for i in draft.document["issues"]]
    issues[0] = {**issues[0], "title": "A renamed first issue"}
    assert _save(editor, draft, _edited(draft.document, issues=issues)).status_code == 302
    editor.post(DRAFTS, {"action": "publish_drafts", "_selected_action": [draft.pk]})
    assert latest_version(slug=v1.slug) != v1

    finished = play_game(game_id=game.pk, policy=make_policy("advocate", "EU"))  # resumed where it stopped
    assert finished.scenario_id == v1.pk and finished.phase == "REVIEW"
    fresh = play_game(
        game_id=create_game(scenario_version=v1, seed=3).pk, policy=make_policy("advocate", "EU")
    )
    assert list(finished.entries.order_by("seq").values_list("text", flat=True)) == list(
        fresh.entries.order_by("seq").values_list("text", flat=True)
    )  # the same game as one never touched by the publication
    assert "A renamed first issue" not in yaml.safe_dump(v1.document)
    review = editor.get(f"/games/{game.pk}/review/").content.decode()  # staff read it, on the game's version
    assert v1.document["issues"][0]["title"] in review and "A renamed first issue" not in review


def test_the_preview_shows_each_seat_and_what_the_briefs_allow(editor: Client, staff: Client) -> None:
    draft = _clone(editor, mercury_version())
    roles = [dict(r) for r in draft.document["roles"]]
    voter = next(r for r in roles if r["votes"])
    issue = draft.document["issues"][0]
    options = [o["id"] for o in issue["options"]]
    # The first voter accepts only one option of the first issue, and no condition leads elsewhere.
    stances = {**voter["stances"], issue["id"]: {**voter["stances"][issue["id"]], "preferred": options[0],
                                                 "acceptable": [options[0]], "conditions": []}}  # fmt: skip
    roles[roles.index(voter)] = {**voter, "stances": stances}
    assert _save(editor, draft, _edited(draft.document, roles=roles)).status_code == 302

    page = editor.get(f"{DRAFTS}{draft.pk}/preview/").content.decode()
    for role in roles:
        assert role["confidential_brief"]["interests"][:40].replace("'", "&#x27;") in page
    rows = page.split(f"<h3>{issue['id']}. ")[1].split("</table>")[0]
    cells = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td></tr>", rows)
    never = [row[3] for row in cells]  # each option's "never" column
    assert len(never) == len(options)
    assert voter["id"] not in never[0] and all(f"<strong>{voter['name']}" in cell for cell in never[1:])
    grid = page.split("<h2>Stances, by seat and issue</h2>")[1].split("</table>")[0]
    firmness = voter["stances"][issue["id"]]["firmness"]
    assert f"<tr><td>{voter['name']}</td><td><strong>{options[0]}</strong> · {firmness}</td>" in grid
    assert staff.get(f"{DRAFTS}{draft.pk}/preview/").status_code == 200  # readers may look
    assert Client().get(f"{DRAFTS}{draft.pk}/preview/").status_code == 302  # to the admin's sign-in


def test_a_rehearsal_plays_the_draft_to_the_end_offline_and_stays_out_of_the_lobby(
    editor: Client, staff: Client, settings: Any
) -> None:
    settings.MERCURY_MODEL = "openai/never-called"  # the site's model; a rehearsal always plays offline
    draft = _clone(editor, mercury_version())
    _save(editor, draft, _edited(draft.document, title="Mercury, rehearsed"))
    staff.post(DRAFTS, {"action": "rehearse_drafts", "_selected_action": [draft.pk]})
    assert not Game.objects.exists()  # readers may not rehearse

    page = editor.post(DRAFTS, {"action": "rehearse_drafts", "_selected_action": [draft.pk]}, follow=True)
    game = Game.objects.get()
    assert game.model.startswith("mercury-offline/") and game.phase == "REVIEW"
    adopted = sum(game.votes.values_list("adopted", flat=True))
    text = page.content.decode()
    assert (
        f"rehearsed to the end ({adopted} of 4 issues adopted)" in text
        and f"/games/{game.pk}/review/" in text
    )
    assert game.scenario.slug == "mercury--rehearsal" and not game.scenario.listed
    assert [s["slug"] for s in latest_scenarios()] == ["mercury"]  # the lobby offers only published versions
    assert editor.get(f"/games/{game.pk}/review/").status_code == 200  # staff read any review


def test_a_deliberation_without_samples_says_why_it_cannot_be_rehearsed(editor: Client) -> None:
    version, _ = load_scenario(folder=ROOT / "scenarios" / "deliberation" / "code-review.yaml")
    draft = _clone(editor, version)
    _save(editor, draft, _edited(draft.document, samples=[]))
    page = editor.post(DRAFTS, {"action": "rehearse_drafts", "_selected_action": [draft.pk]}, follow=True)
    assert (
        "cannot be rehearsed: a rehearsal reviews the scenario&#x27;s first sample; add one"
        in page.content.decode()
    )


def test_a_scenario_file_uploaded_in_admin_becomes_drafts_or_nothing(editor: Client, staff: Client) -> None:
    version = mercury_version()
    good = dump_scenarios([version])
    page = editor.post(f"{DRAFTS}import/", {"file": SimpleUploadedFile("m.yaml", good.encode())}, follow=True)
    assert "1 draft(s) imported from m.yaml" in page.content.decode()
    assert ScenarioDraft.objects.get().document == version.document

    bad = good.replace("votes: true", "votes: perhaps", 1)
    page = editor.post(f"{DRAFTS}import/", {"file": SimpleUploadedFile("b.yaml", bad.encode())})
    assert "document 1.scenario.roles[" in page.content.decode() and ScenarioDraft.objects.count() == 1
    assert staff.get(f"{DRAFTS}import/").status_code == 403
    assert "Import a scenario file" in editor.get(DRAFTS).content.decode()


def test_an_editor_adds_a_new_scenario_by_pasting_it(editor: Client) -> None:
    version, _ = load_scenario(folder=ROOT / "scenarios" / "deliberation" / "code-review.yaml")
    document = {**version.document, "id": "code-review-ops", "title": "Operations review"}
    page = editor.get(f"{DRAFTS}add/").content.decode()  # a new draft is pasted whole: no sections yet
    assert 'name="text"' in page and "Scenario (YAML)" in page and "draft-sections" not in page
    response = editor.post(
        f"{DRAFTS}add/", {"kind": "deliberation", "based_on": "", "text": as_yaml(document)}
    )
    assert response.status_code == 302
    draft = ScenarioDraft.objects.get()
    assert (draft.slug, draft.title, draft.based_on) == ("code-review-ops", "Operations review", None)
    editor.post(DRAFTS, {"action": "publish_drafts", "_selected_action": [draft.pk]})
    published = latest_version(slug="code-review-ops")
    assert published is not None and published.version == 1 and published.kind == "deliberation"
    response = editor.post(
        f"{DRAFTS}add/", {"kind": "negotiation", "based_on": "", "text": as_yaml(document)}
    )
    assert (
        response.status_code == 200 and "Field required" in response.content.decode()
    )  # the wrong kind's schema


def _save_section(client: Client, draft: ScenarioDraft, section: str, text: str) -> Any:
    """What the section editor posts: to the page's address (with its section), the section named again."""
    return client.post(f"{DRAFTS}{draft.pk}/change/?section={section}", {
        "kind": draft.kind, "based_on": draft.based_on_id or "", "section": section, "text": text,
        "_continue": "Save and continue editing"})  # fmt: skip


def test_a_draft_opens_on_its_first_section_with_every_section_listed(editor: Client) -> None:
    draft = _clone(editor, mercury_version())
    html = editor.get(f"{DRAFTS}{draft.pk}/change/").content.decode()
    assert "Scenario basics (YAML)" in html and "Scenario (YAML)" not in html
    area = html[html.index('<textarea name="text"') :]
    area = area[: area.index("</textarea>")]
    assert "slug: mercury" in area and "roles:" not in area and len(area) < 1_000
    assert 'rows="8"' in area and 'class="yaml-editor"' in area and "style=" not in area
    nav = html[html.index('<nav class="draft-sections"') : html.index("</nav>", html.index("draft-sections"))]
    roles = nav[nav.index(">Roles</h3>") :]
    for role in draft.document["roles"]:  # one section each, listed under their list's name
        assert f'href="?section=roles.{role["id"]}">{role["name"]} ({role["id"]})</a>' in roles
    assert 'href="?section=basics" aria-current="page">Scenario basics</a>' in nav
    assert 'href="?section=all">Edit the whole document</a>' in nav

    whole = editor.get(f"{DRAFTS}{draft.pk}/change/?section=all").content.decode()
    assert f'rows="{36}"' in whole and "roles:" in whole and "Scenario (YAML)" in whole


def test_an_editor_saves_one_role_and_nothing_else_changes(editor: Client) -> None:
    draft = _clone(editor, mercury_version())
    before = copy.deepcopy(draft.document)
    at = next(n for n, r in enumerate(before["roles"]) if r["id"] == "BRA")
    page = editor.get(f"{DRAFTS}{draft.pk}/change/?section=roles.BRA").content.decode()
    assert "Roles: Brazil (BRA) (YAML)" in page and "<code>roles[BRA]</code>" in page
    text = as_yaml(before["roles"][at]).replace("name: Brazil", "name: Federative Republic of Brazil", 1)

    response = _save_section(editor, draft, "roles.BRA", text)
    assert response.status_code == 302 and response["Location"].endswith("/change/?section=roles.BRA")
    draft.refresh_from_db()
    expected = copy.deepcopy(before)
    expected["roles"][at]["name"] = "Federative Republic of Brazil"
    assert draft.document == expected and list(draft.document) == list(before)
    assert (
        "+  name: Federative Republic of Brazil" in editor.get(f"{DRAFTS}{draft.pk}/change/").content.decode()
    )


def test_a_sections_schema_error_names_the_section_and_nothing_is_saved(editor: Client) -> None:
    draft = _clone(editor, mercury_version())
    before = copy.deepcopy(draft.document)
    role = next(r for r in before["roles"] if r["id"] == "CAN")
    response = _save_section(editor, draft, "roles.CAN", as_yaml({**role, "influence": 3}))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Roles: Canada (CAN) — roles[CAN].influence: Input should be less than or equal to 1" in html
    assert 'aria-current="page">Canada (CAN)</a>' in html  # still on that section, the text as typed
    assert "influence: 3" in html
    response = _save_section(editor, draft, "basics", "slug: mercury\ntitle: [unclosed\n")
    assert "Scenario basics — line 2: not valid YAML" in response.content.decode()
    draft.refresh_from_db()
    assert draft.document == before


def test_a_search_counts_its_matches_in_each_section(editor: Client) -> None:
    draft = _clone(editor, mercury_version())
    html = editor.get(f"{DRAFTS}{draft.pk}/change/?section=chair&find=Minamata").content.decode()
    counts = find_in_sections(draft.document, "Minamata")
    assert f"{sum(counts.values())} found" in html
    link = 'href="?section=roles.BRA&amp;find=Minamata">Brazil (BRA)</a> <span class="draft-matches found">'
    assert counts["roles.BRA"] and f"{link}({counts['roles.BRA']})</span>" in html
    assert 'name="find" value="Minamata"' in html and 'name="section" value="chair"' in html
