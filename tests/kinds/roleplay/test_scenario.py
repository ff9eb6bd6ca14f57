"""The scenario format is seed 001's JSON as it is: every shipped file validates, is stored unchanged and exports
back to the same file; malformed ones are refused with the path of each bad field."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from simulations.engine.errors import ScenarioError
from simulations.kinds import get_kind
from simulations.kinds.roleplay.scenario import SCENARIO_ROOT, describe, load_file, validate_scenario

from .tiny import tiny

SHIPPED = sorted(SCENARIO_ROOT.glob("*.json"))


def test_four_scenarios_ship_with_both_endings_and_a_fork_each() -> None:
    assert {p.stem for p in SHIPPED} >= {
        "market-entry-case",
        "cafe-barista",
        "salary-negotiation",
        "coalition-building",
    }
    for path in SHIPPED:
        scenario, _ = load_file(path)
        types = {
            t.type for b in scenario.states.values() for st in b.values() for t in st.transitions.values()
        }
        assert "fork" in types, path.name


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_a_shipped_file_is_stored_as_written(path: Path) -> None:
    written = json.loads(path.read_text(encoding="utf-8"))
    [source] = get_kind("roleplay").scenarios.read(path)
    assert source.document == written


@pytest.mark.django_db
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_the_importer_round_trips_every_shipped_json(path: Path) -> None:
    from simulations.services.content.scenarios import store_scenario
    from simulations.services.files.scenario_drafts import dump_scenarios, parse_scenario_file

    text = path.read_text(encoding="utf-8")
    [(kind, source)] = parse_scenario_file(text, fmt="json")
    assert kind == "roleplay"
    version, _ = store_scenario(kind=get_kind(kind), source=source, origin="test")
    exported = dump_scenarios([version], fmt="json")
    assert json.loads(exported) == json.loads(text)  # the bare document, not wrapped
    [(_, again)] = parse_scenario_file(exported, fmt="json")
    assert again.content_hash == source.content_hash


def broken(change: Any) -> list[str]:
    doc = copy.deepcopy(tiny())
    change(doc)
    with pytest.raises(ValidationError) as caught:
        validate_scenario(doc)
    return [describe(caught.value)]


BAD = {
    "a transition's type": (
        lambda d: d["states"]["CalmBranch"]["Apology"]["transitions"]["Remake"].update(type="maybe"),
        "states.CalmBranch.Apology.transitions.Remake.type",
    ),
    "an unknown target": (
        lambda d: d["states"]["CalmBranch"]["Apology"]["transitions"].update(
            Nowhere={"condition": "x", "type": "parallel"}
        ),
        "states.CalmBranch.Apology.transitions.Nowhere: no state named 'Nowhere'",
    ),
    "a missing terminal": (lambda d: d["tstates"].pop("FAIL"), "tstates.FAIL: missing"),
    "a field the format does not have": (
        lambda d: d.update(mood="grumpy"),
        "mood: Extra inputs are not permitted",
    ),
    "a name that disagrees with its key": (
        lambda d: d["states"]["InfoBranch"]["Question"].update(name="Query"),
        "states.InfoBranch.Question.name: must equal the state's key 'Question'",
    ),
    "an unreachable state": (
        lambda d: d["states"]["InfoBranch"].update(
            Orphan={"name": "Orphan", "addprompt": "x", "transitions": {}}
        ),
        "states.InfoBranch.Orphan: no condition and no transition leads here",
    ),
    "a stray placeholder": (
        lambda d: d.update(goal="Serve {customer} well"),
        "goal: unknown placeholder {customer}",
    ),
    "a missing required field": (lambda d: d.pop("opening"), "opening: Field required"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_a_malformed_scenario_is_refused_naming_the_field(name: str) -> None:
    change, expected = BAD[name]
    [message] = broken(change)
    assert expected in message


@pytest.mark.django_db
def test_the_admins_import_names_the_document_and_the_path() -> None:
    from simulations.services.files.scenario_drafts import DraftInvalid, parse_scenario_file

    doc = tiny()
    doc["states"]["CalmBranch"]["Apology"]["transitions"]["Remake"]["type"] = "maybe"
    with pytest.raises(DraftInvalid) as caught:
        parse_scenario_file(json.dumps(doc), fmt="json")
    assert "document 1.scenario.states.CalmBranch.Apology.transitions.Remake.type" in str(caught.value)


def test_a_file_that_is_not_json_is_refused_with_its_name(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ScenarioError, match="bad.json: not valid JSON"):
        load_file(bad)
