"""A draft edited section by section (issue #69): a document cut into sections and put back together is the same
document, to the character of its YAML; a section's edit replaces that section and nothing else; the schema's
problems name the section they are in. Pure functions: no database."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from simulations.kinds import get_kind
from simulations.services.files.scenario_drafts import (
    BASICS,
    DraftInvalid,
    Section,
    as_editor_yaml,
    as_yaml,
    edit_section,
    find_in_sections,
    find_section,
    parse_yaml,
    section_of,
    section_value,
    sections,
    with_section,
)

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = [
    ("negotiation", "scenarios/mercury"),
    ("negotiation", "scenarios/plastics"),
    ("deliberation", "scenarios/deliberation"),
    ("message_lab", "scenarios/message_lab"),
    ("roleplay", "scenarios/roleplay"),
    ("social_feed", "scenarios/social_feed"),
]


def _documents(kind: str, folder: str) -> list[dict[str, Any]]:
    return [source.document for source in get_kind(kind).scenarios.read(ROOT / folder)]


@pytest.fixture(scope="module")
def mercury() -> dict[str, Any]:
    return _documents("negotiation", "scenarios/mercury")[0]


@pytest.mark.parametrize(("kind", "folder"), SHIPPED)
def test_every_shipped_scenario_cut_into_sections_and_put_back_is_the_same_text(
    kind: str, folder: str
) -> None:
    for document in _documents(kind, folder):
        whole = as_yaml(document)
        cut = sections(document)
        assert cut and len({s.key for s in cut}) == len(cut)
        rebuilt = copy.deepcopy(document)
        for section in cut:  # each section's text, as the editor shows it, saved back as it is
            text = as_editor_yaml(section_value(document, section))
            rebuilt = with_section(rebuilt, section, parse_yaml(text))
            assert as_yaml(rebuilt) == whole
        assert parse_yaml(as_editor_yaml(document)) == document  # the whole document's editor, too
        # Every top-level field is in exactly one section (a split list: in one section per item).
        held = [(f, s.item) for s in cut for f in s.fields]
        assert sorted({f for f, _ in held}) == sorted(document)
        assert len(held) == len(set(held))


def test_a_negotiation_is_its_basics_the_chair_the_issues_the_offers_and_each_role(
    mercury: dict[str, Any],
) -> None:
    cut = sections(mercury)
    roles = [f"roles.{r['id']}" for r in mercury["roles"]]
    # The issues, with their options' plain-word cues, are a long list too: one issue a section.
    issues = [f"issues.{i['id']}" for i in mercury["issues"]]
    assert [s.key for s in cut] == [BASICS, "chair", *issues, "offers", *roles]
    assert cut[0] == Section(BASICS, "Scenario basics", ("slug", "title", "summary", "talk_messages_each"))
    brazil = find_section(mercury, "roles.BRA")
    assert brazil is not None and brazil.title == "Roles: Brazil (BRA)" and brazil.path == "roles[BRA]"
    assert (brazil.group, brazil.name) == ("Roles", "Brazil (BRA)")
    assert section_value(mercury, brazil) is mercury["roles"][brazil.item or 0]
    longest = max(len(as_yaml(section_value(mercury, s))) for s in cut)
    assert longest < len(as_yaml(mercury)) / 8  # each far smaller than the 186,000 characters of the whole


def test_a_role_edited_changes_that_role_and_nothing_else(mercury: dict[str, Any]) -> None:
    before = copy.deepcopy(mercury)
    brazil = find_section(mercury, "roles.BRA")
    assert brazil is not None and brazil.item is not None
    role = parse_yaml(as_yaml(section_value(mercury, brazil)))
    role["public_brief"] = "Brazil speaks for the Amazon's artisanal miners."
    edited = with_section(mercury, brazil, role)

    assert mercury == before  # the document given is not changed
    assert list(edited) == list(mercury)  # the same fields, in the same order
    assert all(edited[k] is mercury[k] for k in mercury if k != "roles")
    assert [r is o for r, o in zip(edited["roles"], mercury["roles"], strict=True)] == [
        n != brazil.item for n in range(len(mercury["roles"]))
    ]
    assert edited["roles"][brazil.item] == role
    assert {k for k in role if role[k] != mercury["roles"][brazil.item][k]} == {"public_brief"}
    restored = with_section(edited, brazil, mercury["roles"][brazil.item])
    assert as_yaml(restored) == as_yaml(mercury)  # the old value put back: the same text to the character


def test_the_basics_keep_their_place_lose_what_is_removed_and_refuse_another_sections_field(
    mercury: dict[str, Any],
) -> None:
    basics = sections(mercury)[0]
    value = {"slug": "mercury", "title": "Mercury II", "summary": mercury["summary"], "extra": 1}
    edited = with_section(mercury, basics, value)  # talk_messages_each removed, `extra` new
    # A new field takes the place of the last of the basics (talk_messages_each, here removed).
    assert list(edited) == ["slug", "title", "summary", "chair", "extra", "issues", "offers", "roles"]
    assert edited["title"] == "Mercury II" and "talk_messages_each" not in edited

    with pytest.raises(DraftInvalid) as refused:
        with_section(mercury, basics, {**value, "roles": []})
    assert [str(p) for p in refused.value.problems] == [
        "Scenario basics — roles: has its own section: edit it there"
    ]
    with pytest.raises(DraftInvalid) as not_a_mapping:
        with_section(mercury, basics, ["a", "list"])
    assert (
        str(not_a_mapping.value) == "Scenario basics — this section must be a mapping of fields (name: value)"
    )


def test_a_short_list_is_one_section_and_items_without_ids_are_numbered() -> None:
    long_text = "x" * 6_000
    document = {"title": "T", "notes": [{"text": long_text}, {"text": long_text}], "tags": [{"id": "a"}]}
    assert [s.key for s in sections(document)] == [BASICS, "notes.1", "notes.2", "tags"]
    assert [s.title for s in sections(document)][1:3] == ["Notes: item 1", "Notes: item 2"]
    dup = {"roles": [{"id": "A", "name": "x" * 6_000}, {"id": "A", "name": "y" * 6_000}]}
    assert [s.key for s in sections(dup)] == ["roles.1", "roles.2"]  # ids that repeat cannot name a section


def test_a_location_in_the_document_is_in_one_section(mercury: dict[str, Any]) -> None:
    def key(loc: tuple[str | int, ...]) -> str | None:
        found = section_of(mercury, loc)
        return found.key if found else None

    assert key(("title",)) == BASICS
    assert key(("roles", 2, "stances", "1", "firmness")) == f"roles.{mercury['roles'][2]['id']}"
    assert key(("issues", 0, "options")) == "issues.1"
    assert key(("chair",)) == "chair"
    assert key(()) is None and key(("nowhere",)) is None


def test_an_edit_is_checked_whole_and_its_problems_name_their_section(mercury: dict[str, Any]) -> None:
    text = as_yaml(mercury["roles"][0]).replace("votes: true", "votes: sometimes", 1)
    with pytest.raises(DraftInvalid) as invalid:
        edit_section(kind="negotiation", document=mercury, key="roles.BRA", text=text)
    assert [str(p) for p in invalid.value.problems] == [
        "Roles: Brazil (BRA) — roles[BRA].votes: Input should be a valid boolean, unable to interpret input"
    ]
    with pytest.raises(DraftInvalid) as not_yaml:
        edit_section(kind="negotiation", document=mercury, key="chair", text="id: [unclosed\n")
    assert str(not_yaml.value).startswith("Chair — line 2: not valid YAML")  # the line in the section's text
    with pytest.raises(DraftInvalid) as removed:  # a required field taken out of the basics
        edit_section(kind="negotiation", document=mercury, key=BASICS, text="slug: mercury\nsummary: s\n")
    assert "Scenario basics — title: Field required" in [str(p) for p in removed.value.problems]
    with pytest.raises(DraftInvalid, match="no longer in the scenario"):
        edit_section(kind="negotiation", document=mercury, key="roles.XXX", text="{}")

    source = edit_section(kind="negotiation", document=mercury, key=BASICS,
                          text=as_yaml({**section_value(mercury, sections(mercury)[0]), "title": "Mercury II"}))  # fmt: skip
    assert source.title == "Mercury II" and source.document["roles"] == mercury["roles"]


def test_a_search_counts_its_matches_in_each_section(mercury: dict[str, Any]) -> None:
    found = find_in_sections(mercury, "MINAMATA")
    assert list(found) == [s.key for s in sections(mercury)]
    assert sum(found.values()) == as_editor_yaml(mercury).casefold().count("minamata") > 0
    assert find_in_sections(mercury, "no such words anywhere") == dict.fromkeys(found, 0)
