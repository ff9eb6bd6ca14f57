"""Importing a game export: a replay through the engine that must give back the same game, or a typed error."""

from __future__ import annotations

import copy
import json
import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from simulations.bots import make_policy
from simulations.models import Checkpoint, Game, ModelCall
from simulations.services.export import export_game
from simulations.services.import_game import ExportImportError, import_game
from simulations.services.play import play_game
from simulations.services.resume import resume_game
from simulations.services.turns import create_game
from tests.helpers import game_at_first_ai_turn, mercury_version, normalised, played

pytestmark = pytest.mark.django_db


def _as_file(game: Game) -> dict[str, Any]:
    """The export as another database would read it: through JSON."""
    data: dict[str, Any] = json.loads(json.dumps(export_game(game=Game.objects.get(pk=game.pk))))
    return data


def _without_id(data: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(data)
    data["game"].pop("id")
    return data


def _review_html(client: Client, game: Game) -> str:
    response = client.get(f"/games/{game.pk}/review/")
    assert response.status_code == 200
    page = response.content.decode()
    page = page.replace(f"/games/{game.pk}/", "/games/N/").replace(f"#{game.pk}", "#N")
    page = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', 'name="csrfmiddlewaretoken"', page)
    return re.sub(r'"X-CSRFToken": "[^"]*"', '"X-CSRFToken": ""', page)


@pytest.mark.parametrize(("role", "human", "seed"), [("EU", "advocate", 13), ("AMAP", "passive", 3)])
def test_a_finished_game_imports_into_the_same_game_and_review(role: str, human: str, seed: int) -> None:
    owner = User.objects.create_user("student", password="x-secret-1")
    client = Client()
    client.force_login(owner)
    original = played(role, human, seed=seed)
    Game.objects.filter(pk=original.pk).update(owner=owner)
    original.refresh_from_db()
    exported, state, html = _as_file(original), original.state, _review_html(client, original)
    checkpoints = list(
        Checkpoint.objects.filter(game=original).order_by("seq").values_list("state", flat=True)
    )
    calls = list(ModelCall.objects.filter(game=original).order_by("seq").values_list("event_seq", flat=True))
    assert exported["game"]["status"] == "REVIEW" and exported["summary"]
    original.delete()

    imported = import_game(data=exported, owner=owner)

    again = _as_file(imported)
    assert again["game"]["id"] == imported.pk != exported["game"]["id"]
    assert _without_id(again) == _without_id(exported)  # timestamps included: the import keeps them
    assert imported.owner == owner and imported.status == Game.Status.FINISHED
    # What the export does not carry is rebuilt: the state at every checkpoint and each model call's turn.
    assert imported.state == state
    assert list(imported.checkpoints.order_by("seq").values_list("state", flat=True)) == checkpoints
    assert list(imported.model_calls.order_by("seq").values_list("event_seq", flat=True)) == calls
    resume_game(game_id=imported.pk)  # ledger and checkpoint agree
    assert _review_html(client, imported) == html


def test_an_unfinished_game_imports_and_plays_on_exactly_as_the_original() -> None:
    original = game_at_first_ai_turn(seed=8, role="EU")
    exported = _as_file(original)
    imported = import_game(data=exported)
    assert imported.state == Game.objects.get(pk=original.pk).state
    assert imported.version == original.version and imported.phase == original.phase
    for game in (original, imported):
        play_game(game_id=game.pk, policy=make_policy("passive", "EU"))
    assert normalised(imported) == normalised(original)


def test_a_new_game_imports() -> None:
    game = create_game(scenario_version=mercury_version(), seed=4)
    imported = import_game(data=_as_file(game))
    assert _without_id(_as_file(imported)) == _without_id(_as_file(game))
    assert imported.state == game.state and imported.phase == "ROLE_SELECTION"


@pytest.fixture
def exported() -> dict[str, Any]:
    return _as_file(game_at_first_ai_turn(seed=2, role="BRA"))


def _refused(data: Any, message: str) -> ExportImportError:
    games = Game.objects.count()
    with pytest.raises(ExportImportError, match=message) as caught:
        import_game(data=data)
    assert Game.objects.count() == games  # nothing written
    return caught.value


def test_a_wrong_format_is_refused(exported: dict[str, Any]) -> None:
    error = _refused(
        {**exported, "format": "mercury-game/1"}, re.escape("Unsupported export format: expected ")
    )
    assert error.prefix == ExportImportError.BAD_FORMAT
    # Version 1 lacked the judge's readings, so a model-judged game could not be replayed from it.
    assert str(error) == "Unsupported export format: expected 'mercury-game/2', got 'mercury-game/1'."
    without = {k: v for k, v in exported.items() if k != "format"}
    _refused(without, "Unsupported export format: expected 'mercury-game/2', got no format field.")
    _refused([exported], "Invalid export: the document is not a JSON object.")


def test_a_missing_or_mistyped_field_is_named(exported: dict[str, Any]) -> None:
    del exported["game"]["seed"]
    error = _refused(exported, "Invalid export: game.seed: Field required")
    assert error.prefix == ExportImportError.BAD_SHAPE
    exported["game"]["seed"] = 2
    exported["transcript"][0]["visibility"] = "secret"
    _refused(exported, "Invalid export: transcript.0.visibility: Input should be 'public' or 'private'")
    exported["transcript"][0]["visibility"] = "public"
    del exported["events"][3]
    _refused(exported, re.escape("Invalid export: events: seq must run 1, 2, 3, ..."))


def test_an_unknown_scenario_version_says_to_load_it(exported: dict[str, Any]) -> None:
    exported["game"]["scenario"]["version"] = 99
    error = _refused(exported, "Unknown scenario version: mercury v99 is not loaded here")
    assert "python manage.py load_scenario scenarios/mercury" in str(error)
    assert error.prefix == ExportImportError.UNKNOWN_SCENARIO


def test_other_scenario_content_is_refused(exported: dict[str, Any]) -> None:
    exported["issues"][0]["title"] = "Something else"
    _refused(exported, "Scenario content differs: mercury v1 here has other issues than the export.")


def test_an_edited_transcript_does_not_replay(exported: dict[str, Any]) -> None:
    opening = next(e for e in exported["transcript"] if e["kind"] == "opening")
    opening["text"] = "We have changed our minds about everything."
    error = _refused(exported, "The export does not replay: replaying it from seed 2 diverges at event ")
    assert f"transcript entry {opening['seq']} differs in text" in str(error)


def test_a_forged_vote_does_not_replay() -> None:
    exported = _as_file(played("TZA", seed=6))
    vote = exported["votes"][0]
    vote["adopted"] = not vote["adopted"]
    _refused(exported, f"diverges at event .*: the vote on issue {vote['issue']} differs")


def _command(*args: str) -> str:
    out = StringIO()
    call_command("import_game", *args, stdout=out)
    return out.getvalue()


def test_the_command_imports_a_file(tmp_path: Path, exported: dict[str, Any]) -> None:
    owner = User.objects.create_user("teacher", password="x-secret-1")
    path = tmp_path / "game.json"
    path.write_text(json.dumps(exported), encoding="utf-8")
    result = json.loads(_command(str(path), "--owner", "teacher"))
    game = Game.objects.get(pk=result["game_id"])
    assert game.owner == owner
    assert _without_id(_as_file(game)) == _without_id(exported)
    with pytest.raises(CommandError, match="No user 'nobody'"):
        _command(str(path), "--owner", "nobody")
    path.write_text("{", encoding="utf-8")
    with pytest.raises(CommandError, match="not JSON"):
        _command(str(path))
    path.write_text(json.dumps({**exported, "format": "x"}), encoding="utf-8")
    with pytest.raises(CommandError, match="game.json: Unsupported export format"):
        _command(str(path))
    with pytest.raises(CommandError, match="cannot read"):
        _command(str(tmp_path / "missing.json"))
