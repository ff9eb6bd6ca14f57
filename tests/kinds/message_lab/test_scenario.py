"""Message Lab's scenario schema and the personas and briefs it ships (issue #12: at least eight distinct personas,
a moderator, an evaluator, two sample briefs; a run's defaults that make sense)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from simulations.kinds.message_lab.scenario import (
    SCENARIO_ROOT,
    MessageLabScenario,
    ScenarioError,
    load_default_scenario,
    load_scenario,
)

SHIPPED = SCENARIO_ROOT / "message-lab.yaml"


def test_the_shipped_scenario_has_eight_distinct_participants_a_moderator_an_evaluator_and_two_briefs() -> (
    None
):
    scenario = load_default_scenario()
    participants = scenario.of_role("participant")
    assert len(participants) >= 8
    assert len(scenario.of_role("moderator")) >= 1 and len(scenario.of_role("evaluator")) >= 1
    for field in ("name", "voice", "pushes_for", "critique_style"):
        values = [getattr(p, field) for p in scenario.personas]
        assert len(set(values)) == len(values), f"two personas share a {field}"
    assert all(len(p.signature_moves) >= 3 for p in participants)
    assert len(scenario.briefs) >= 2
    for brief in scenario.briefs:
        assert brief.title in brief.text or brief.product.split()[0] in brief.text
        assert len(brief.proof_points) >= 4 and len(brief.keywords) >= 6
    d = scenario.defaults
    assert (d.rounds, d.gates) == (6, [3, 6]) and 3 <= len(d.participants) <= 7


def _shipped() -> dict[str, Any]:
    data = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d["defaults"].update(gates=[3, 7]), "gates [7] fall outside rounds 1..6"),
        (lambda d: d["defaults"].update(participants=d["defaults"]["participants"][:2]), "3 to 7 participants"),
        (lambda d: d["defaults"].update(participants=[p["id"] for p in d["personas"] if p["role"] == "participant"]), "3 to 7 participants"),
        (lambda d: d["defaults"].update(moderator="nobody"), "'nobody', which is not a persona"),
        (lambda d: d["defaults"].update(evaluator=d["defaults"]["participants"][0]), "as a evaluator, but it is a participant"),
        (lambda d: d["personas"].append(dict(d["personas"][0])), "persona ids used twice"),
        (lambda d: d["briefs"][0].pop("proof_points"), "proof_points"),
        (lambda d: d["personas"][0].update(mood="grumpy"), "mood"),
    ],
)  # fmt: skip
def test_a_broken_scenario_is_refused_naming_the_file_and_the_problem(
    tmp_path: Path, change: Any, said: str
) -> None:
    data = _shipped()
    change(data)
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ScenarioError) as refused:
        load_scenario(broken)
    assert str(broken) in str(refused.value) and said in str(refused.value)


def test_unreadable_files_say_so(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenario(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("slug: [unclosed", encoding="utf-8")
    with pytest.raises(ScenarioError, match="not valid YAML"):
        load_scenario(bad)


def test_lookups() -> None:
    scenario: MessageLabScenario = load_default_scenario()
    first = scenario.personas[0]
    assert scenario.persona(first.id) is first and scenario.brief(scenario.briefs[1].id) is scenario.briefs[1]
    with pytest.raises(KeyError):
        scenario.persona("nobody")


def test_a_folder_of_one_file_scenarios_gives_each_kind_its_own(tmp_path: Path) -> None:
    import shutil

    from simulations.kinds.message_lab.scenario import SCENARIO_ROOT
    from simulations.services.content.scenarios import find_scenarios

    root = Path(__file__).resolve().parents[3]
    shutil.copy(root / "scenarios/deliberation/code-review.yaml", tmp_path)
    shutil.copy(SCENARIO_ROOT / "message-lab.yaml", tmp_path)
    found = sorted((kind.name, source.slug) for kind, source in find_scenarios(tmp_path))
    assert found == [("deliberation", "code-review"), ("message_lab", "message-lab")]
