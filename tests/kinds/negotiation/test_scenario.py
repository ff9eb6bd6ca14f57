from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from simulations.kinds.negotiation import rules
from simulations.kinds.negotiation.scenario import Scenario, ScenarioError, load_scenario_dir
from tests.conftest import SCENARIO_DIR


def test_mercury_has_the_seats_issues_and_options_of_the_brief(scenario: Scenario) -> None:
    assert scenario.countries == ["BRA", "CAN", "CHN", "EU", "TZA", "USA"]
    assert scenario.ngos == ["AMAP", "MFF", "WCPA"]
    assert scenario.voters == scenario.countries
    assert scenario.chair.id == "JPN"
    assert [[o.id for o in i.options] for i in scenario.issues] == [
        ["1.1", "1.2"], ["2.1", "2.2"], ["3.1", "3.2", "3.3"], ["4.1", "4.2"],
    ]  # fmt: skip
    names = {r.name for r in scenario.roles}
    assert {
        "Arctic Monitoring and Assessment Programme",
        "Mercury Free Future",
        "World Coal Power Association",
    } <= names


def test_every_role_has_three_openings_of_150_to_300_words(scenario: Scenario) -> None:
    for role in scenario.roles:
        assert len(role.openings) >= 3
        assert len({v.persona.name for v in role.openings}) == len(role.openings)
        for variant in role.openings:
            assert 150 <= len(variant.text.split()) <= 300


def test_chair_lines_name_delegations_by_name(scenario: Scenario) -> None:
    for line in scenario.chair.lines.round1_call + scenario.chair.lines.debate_pass:
        assert "{speaker}" in line


def test_initial_stances_leave_at_least_two_issues_open(scenario: Scenario) -> None:
    """With nobody persuaded, an issue is 'open' when its proposal fails but some condition could rescue it,
    or when countries are split: the game is not decided before the student speaks."""
    open_issues = 0
    for issue in scenario.issues:
        prefs = [scenario.role(c).stances[issue.id].preferred for c in scenario.countries]
        counts = {o.id: prefs.count(o.id) for o in issue.options}
        proposal = min(counts, key=lambda o: (-counts[o], rules.option_sort_key(o)))
        blockers = [
            c for c in scenario.countries if proposal not in scenario.role(c).stances[issue.id].acceptable
        ]
        rescuable = all(
            any(cond.accept == proposal for cond in scenario.role(c).stances[issue.id].conditions)
            or proposal not in scenario.role(c).stances[issue.id].red_lines
            for c in blockers
        )
        if blockers and rescuable:
            open_issues += 1
    assert open_issues >= 2


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "mercury"
    shutil.copytree(SCENARIO_DIR, target)
    return target


def test_a_bad_field_is_named_with_its_file(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    path = folder / "roles" / "BRA.yaml"
    data = yaml.safe_load(path.read_text())
    data["stances"]["1"]["firmness"] = 3
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ScenarioError) as err:
        load_scenario_dir(folder)
    assert str(err.value).startswith(f"{path}: field stances.1.firmness:")


def test_a_cross_reference_error_names_the_role(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    path = folder / "roles" / "TZA.yaml"
    data = yaml.safe_load(path.read_text())
    data["stances"]["4"]["conditions"][0]["if_offered"] = ["free_lunch"]
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ScenarioError, match="roles/TZA: stances.4 condition names unknown offer free_lunch"):
        load_scenario_dir(folder)


def test_chair_lines_with_unknown_placeholders_are_refused(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    path = folder / "chair.yaml"
    data = yaml.safe_load(path.read_text())
    data["lines"]["round1_call"] = ["{speaker} and {nobody}"]
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(
        ScenarioError, match=r"chair.yaml: field \(top level\): Value error, lines.round1_call"
    ):
        load_scenario_dir(folder)


def test_short_opening_and_broken_yaml_are_refused(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    path = folder / "roles" / "EU.yaml"
    data = yaml.safe_load(path.read_text())
    data["openings"][1]["text"] = "Too short."
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ScenarioError, match="field openings.1.text: Value error, an opening statement needs"):
        load_scenario_dir(folder)
    path.write_text("id: [unclosed")
    with pytest.raises(ScenarioError, match="EU.yaml: not valid YAML"):
        load_scenario_dir(folder)


def test_content_hash_is_stable_and_sensitive(tmp_path: Path, scenario: Scenario) -> None:
    folder = _copy(tmp_path)
    assert load_scenario_dir(folder).content_hash() == scenario.content_hash()
    path = folder / "roles" / "CAN.yaml"
    path.write_text(path.read_text().replace("influence: 0.8", "influence: 0.75", 1))
    assert load_scenario_dir(folder).content_hash() != scenario.content_hash()


def _with_cues(tmp_path: Path, edit: object) -> Path:
    folder = _copy(tmp_path)
    path = folder / "scenario.yaml"
    data = yaml.safe_load(path.read_text())
    edit(data)  # type: ignore[operator]
    path.write_text(yaml.safe_dump(data))
    return folder


@pytest.mark.parametrize(
    ("cues", "message"),
    [
        ([""], r"field issues.1.options.0.cues: Value error, a cue may not be empty"),
        (["treaty + "], r"field issues.1.options.0.cues: .*empty word choice"),
        (["treaty|pact|treaty + teeth"], r"field issues.1.options.0.cues: .*repeats a word within one group"),
        (
            ["teeth + treaty|pact", "pacts|treaty + teeth"],
            r"field issues.1.options.0.cues: .*cue 'pacts\|treaty \+ teeth' repeats cue 'teeth \+ treaty\|pact'",
        ),
    ],
)
def test_a_bad_cue_is_refused_with_its_field(tmp_path: Path, cues: list[str], message: str) -> None:
    def edit(data: dict) -> None:  # type: ignore[type-arg]
        data["issues"][1]["options"][0]["cues"] = cues

    with pytest.raises(ScenarioError, match=message):
        load_scenario_dir(_with_cues(tmp_path, edit))


def test_a_cue_that_names_another_option_of_the_issue_is_refused(tmp_path: Path) -> None:
    """A cue of 2.1 written as a keyword of 2.2 (in other words, by stem) could not tell the two apart."""

    def edit(data: dict) -> None:  # type: ignore[type-arg]
        data["issues"][1]["options"][0]["cues"] = ["excluding emission"]

    with pytest.raises(
        ScenarioError,
        match=r"issues.2.options.2.1.cues: cue 'excluding emission' is also a cue or keyword of option 2.2",
    ):
        load_scenario_dir(_with_cues(tmp_path, edit))


def test_an_offer_cue_may_not_be_another_offers(tmp_path: Path) -> None:
    def edit(data: dict) -> None:  # type: ignore[type-arg]
        data["offers"][1]["cues"] = [data["offers"][0]["cues"][0]]

    with pytest.raises(
        ScenarioError,
        match=r"offers.financing.cues: .* is also a cue or keyword of offer technology_transfer",
    ):
        load_scenario_dir(_with_cues(tmp_path, edit))


def test_every_option_and_offer_of_both_scenarios_has_cues(scenario: Scenario) -> None:
    from tests.kinds.negotiation.plastics import PLASTICS_DIR

    for each in (scenario, load_scenario_dir(PLASTICS_DIR)):
        assert all(option.cues for issue in each.issues for option in issue.options), each.slug
        assert all(offer.cues for offer in each.offers), each.slug
