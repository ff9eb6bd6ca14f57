"""Scenario files: every shipped scenario of every kind exports and imports back to the same version, in YAML and
JSON; a broken file is refused whole, naming the document and the field."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from simulations.models import ScenarioDraft, ScenarioVersion
from simulations.services.content.scenarios import load_scenarios

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(p for p in (ROOT / "scenarios").iterdir() if p.is_dir())


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_every_shipped_scenario_round_trips(tmp_path: Path) -> None:
    versions = [v for folder in SHIPPED for v, _ in load_scenarios(path=folder)]
    kinds = {"negotiation", "deliberation", "message_lab", "roleplay", "social_feed"}
    assert {v.kind for v in versions} == kinds and len(versions) >= 9
    for version in versions:
        for fmt in ("yaml", "json"):
            path = tmp_path / f"{version.slug}.{fmt}"
            _run("export_scenario", version.slug, "--format", fmt, "--out", str(path))
            said = _run("import_scenario", str(path))
            assert said.strip() == f"Unchanged, already stored as {version.slug} v1 ({version.kind})"
            again = tmp_path / f"again.{fmt}"
            _run("export_scenario", version.slug, "--format", fmt, "--out", str(again))
            assert again.read_text(encoding="utf-8") == path.read_text(encoding="utf-8")
    assert ScenarioVersion.objects.count() == len(versions)


def test_an_edited_file_imports_as_a_new_version_or_a_draft(tmp_path: Path) -> None:
    load_scenarios(path=ROOT / "scenarios" / "deliberation")
    text = _run("export_scenario", "code-review")
    edited = tmp_path / "edited.yaml"
    edited.write_text(text.replace("title: ", "title: Friday review of ", 1), encoding="utf-8")
    assert "Draft " in _run("import_scenario", str(edited), "--draft")
    assert ScenarioDraft.objects.get().title.startswith("Friday review of")
    assert "Imported new version code-review v2" in _run("import_scenario", str(edited))


def test_a_broken_file_is_refused_whole(tmp_path: Path) -> None:
    load_scenarios(path=ROOT / "scenarios" / "deliberation")
    good = _run("export_scenario", "code-review")
    bad = good.replace("confidence_threshold: 0.", "confidence_threshold: 7.", 1)
    both = tmp_path / "two.yaml"
    both.write_text(good.replace("id: code-review", "id: code-review-b", 1) + "---\n" + bad, encoding="utf-8")
    with pytest.raises(CommandError, match=r"document 2\.scenario\.personas\[\w+\]\.confidence_threshold"):
        _run("import_scenario", str(both))
    assert ScenarioVersion.objects.count() == 1  # not even the valid first document
    (tmp_path / "x.yaml").write_text("kind: chess\nscenario: {}\n", encoding="utf-8")
    with pytest.raises(CommandError, match="not a kind this site plays"):
        _run("import_scenario", str(tmp_path / "x.yaml"))
    with pytest.raises(CommandError, match="No scenario 'nope'"):
        _run("export_scenario", "nope")


def test_admin_downloads_a_version_as_a_file_import_reads(tmp_path: Path, admin_client: Client) -> None:
    ((version, _),) = load_scenarios(path=ROOT / "scenarios" / "mercury")
    response = admin_client.post("/admin/simulations/scenarioversion/",
                                 {"action": "download_yaml", "_selected_action": [version.pk]})  # fmt: skip
    assert response["Content-Disposition"] == 'attachment; filename="mercury.yaml"'
    path = tmp_path / "mercury.yaml"
    path.write_bytes(response.content)
    assert "Unchanged, already stored as mercury v1" in _run("import_scenario", str(path))
