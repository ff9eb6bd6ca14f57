"""Importing an export (simulation-export/3): every step applied in order through the one writer, then compared
with the file; a file that does not give back the same game is refused with the first difference, and nothing of
it is kept."""

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

from simulations.engine.errors import InvalidMove
from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.headless import play_game
from simulations.kinds.negotiation.machine import MAX_MESSAGE_CHARS
from simulations.models import Checkpoint, Event, Game, ModelCall, ScenarioVersion, TranscriptEntry, Vote
from simulations.services.files.export import export_game
from simulations.services.files.import_game import ExportImportError, import_game
from simulations.services.ledger.checkpoints import state_at
from simulations.services.ledger.resume import resume_game
from simulations.services.ledger.turns import create_game
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


@pytest.mark.parametrize(
    ("role", "human", "seed"),
    [("EU", "advocate", 13), ("AMAP", "passive", 3), ("CHN", "passive", 7), ("USA", "advocate", 9)],
)
def test_a_finished_game_imports_into_the_same_game_and_review(role: str, human: str, seed: int) -> None:
    owner = User.objects.create_user("student", password="x-secret-1")
    client = Client()
    client.force_login(owner)
    original = played(role, human, seed=seed)
    Game.objects.filter(pk=original.pk).update(owner=owner)
    original.refresh_from_db()
    exported, state, html = _as_file(original), original.state, _review_html(client, original)
    checkpoints = [state_at(c) for c in Checkpoint.objects.filter(game=original).order_by("seq")]
    calls = list(ModelCall.objects.filter(game=original).order_by("seq").values_list("event_seq", flat=True))
    assert exported["game"]["phase"] == "REVIEW" and exported["negotiation"]["summary"]
    assert exported["game"]["human_policy"] == {"kind": human}
    texts = [e["payload"]["text"] for e in exported["events"] if e["name"] == "AI_MESSAGE_COMMITTED"]
    assert texts and all(texts)  # the payloads travel with the events
    original.delete()

    imported = import_game(data=exported, owner=owner)

    again = _as_file(imported)
    assert again["game"]["id"] == imported.pk != exported["game"]["id"]
    assert _without_id(again) == _without_id(exported)  # timestamps included: the import keeps them
    assert imported.owner == owner and imported.status == Game.Status.FINISHED
    # What the export does not carry is rebuilt: the state at every checkpoint.
    assert imported.state == state
    assert [state_at(c) for c in imported.checkpoints.order_by("seq")] == checkpoints
    assert list(imported.model_calls.order_by("seq").values_list("event_seq", flat=True)) == calls
    resume_game(game_id=imported.pk)  # ledger and checkpoint agree
    assert _review_html(client, imported) == html


def test_an_unfinished_game_imports_and_plays_on_exactly_as_the_original() -> None:
    original = game_at_first_ai_turn(seed=8, role="EU")
    imported = import_game(data=_as_file(original))
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


_FINISHED: dict[str, Any] = {}


@pytest.fixture
def exported() -> dict[str, Any]:
    """A finished passive game's export (played once per test run; every test gets its own copy)."""
    mercury_version()
    if not _FINISHED:
        _FINISHED.update(_as_file(played("BRA", "passive", seed=2)))
        Game.objects.all().delete()
    return copy.deepcopy(_FINISHED)


def _rows() -> list[int]:
    return [m.objects.count() for m in (Game, Event, TranscriptEntry, Checkpoint, Vote, ModelCall)]


def _refused(data: Any, message: str) -> ExportImportError:
    before = _rows()
    with pytest.raises(ExportImportError, match=message) as caught:
        import_game(data=data)
    assert _rows() == before  # nothing of the file is kept
    return caught.value


def _event(data: dict[str, Any], name: str, n: int = 0) -> dict[str, Any]:
    event: dict[str, Any] = [e for e in data["events"] if e["name"] == name][n]
    return event


def test_the_file_as_exported_imports(exported: dict[str, Any]) -> None:
    """The fixture itself is importable: every refusal below is caused by its one change."""
    assert _without_id(_as_file(import_game(data=exported))) == _without_id(exported)


def test_older_formats_are_refused_with_the_way_forward(exported: dict[str, Any]) -> None:
    for old in ("mercury-game/1", "mercury-game/2"):
        error = _refused({**exported, "format": old}, re.escape(f"Unsupported export format: '{old}' is an"))
        assert str(error).endswith(
            "older format that holds no event payloads; export the game again (`python manage.py export_game "
            "ID`) to get 'simulation-export/3'."
        )
        assert error.prefix == ExportImportError.BAD_FORMAT
    without = {k: v for k, v in exported.items() if k != "format"}
    _refused(without, "Unsupported export format: expected 'simulation-export/3', got no format field.")
    _refused({**exported, "format": "x/9"}, "expected 'simulation-export/3', got 'x/9'.")
    _refused([exported], "Invalid export: the document is not a JSON object.")


def test_a_missing_mistyped_or_unknown_field_is_named(exported: dict[str, Any]) -> None:
    del exported["game"]["seed"]
    error = _refused(exported, "Invalid export: game.seed: Field required")
    assert error.prefix == ExportImportError.BAD_SHAPE
    exported["game"]["seed"] = 2
    exported["transcript"][0]["visibility"] = "secret"
    _refused(exported, "Invalid export: transcript.0.visibility: Input should be 'public' or 'private'")
    exported["transcript"][0]["visibility"] = "public"
    exported["events"][0]["extra"] = 1
    _refused(exported, "Invalid export: events.0.extra: Extra inputs are not permitted")
    del exported["events"][0]["extra"]
    section = exported.pop("negotiation")
    _refused(exported, "Invalid export: negotiation: Field required")  # the kind's section
    exported["negotiation"] = section
    exported["kind"] = "chess"
    _refused(exported, "Invalid export: kind: no simulation kind named 'chess' is installed")


def test_a_reordered_event_is_refused(exported: dict[str, Any]) -> None:
    events = exported["events"]
    events[5], events[6] = events[6], events[5]
    _refused(exported, re.escape("events: seq must run 1, 2, 3, ... in file order"))
    events[5], events[6] = events[6], events[5]
    # Renumbered to look in order: the machine refuses the step that now comes too early.
    first, second = _event(exported, "HUMAN_MESSAGE_SUBMITTED"), _event(exported, "ROLE_CONFIRMED")
    for key in ("name", "from", "to", "actor", "payload"):
        first[key], second[key] = second[key], first[key]
    error = _refused(exported, re.escape("The export does not apply: event "))
    assert error.prefix == ExportImportError.REFUSED_EVENT
    assert (
        f"event {second['seq']} (HUMAN_MESSAGE_SUBMITTED) is refused: Event HUMAN_MESSAGE_SUBMITTED is "
        in str(error)
    )


def test_a_changed_message_is_refused_naming_its_event(exported: dict[str, Any]) -> None:
    said = _event(exported, "HUMAN_MESSAGE_SUBMITTED", 1)
    entry = next(e for e in exported["transcript"] if e["text"] == said["payload"]["text"])
    entry["text"] = "We accept every proposal on the table."
    error = _refused(exported, re.escape(f"The imported game differs from the export: event {said['seq']} "))
    assert str(error).startswith(
        f"The imported game differs from the export: event {said['seq']} (HUMAN_MESSAGE_SUBMITTED): "
        f"transcript.{entry['seq'] - 1}.text is 'We accept every proposal on the table.' in the export, "
        f"{said['payload']['text'][:40]!r}"[:-1]  # a long text is cut short in the message
    )
    entry["text"], said["payload"]["text"] = said["payload"]["text"], entry["text"]  # now the payload differs
    _refused(
        exported,
        re.escape(
            f"event {said['seq']} (HUMAN_MESSAGE_SUBMITTED): transcript.{entry['seq'] - 1}.text is "
            f"{entry['text']!r} in the export, 'We accept every proposal on the table.' once applied."
        ),
    )


def test_an_unknown_option_id_is_refused(exported: dict[str, Any]) -> None:
    vote = exported["votes"][0]
    proposal, vote["proposal"] = vote["proposal"], "9.9"
    _refused(
        exported, re.escape(f"differs from the export: votes.0.proposal is '9.9' in the export, {proposal!r}")
    )
    vote["proposal"] = proposal
    change = exported["negotiation"]["stance_changes"][0]
    change["after"] = "9.9"
    _refused(exported, re.escape(f"export: event {change['event_seq']} ("))


def test_an_oversized_text_is_refused(exported: dict[str, Any]) -> None:
    said = _event(exported, "HUMAN_MESSAGE_SUBMITTED")
    said["payload"]["text"] = "x" * (MAX_MESSAGE_CHARS + 1)
    _refused(
        exported,
        re.escape(f"event {said['seq']} (HUMAN_MESSAGE_SUBMITTED) is refused: ")
        + f".*{InvalidMove.TEXT_TOO_LONG}",
    )


def test_an_unknown_or_different_scenario_is_refused(exported: dict[str, Any]) -> None:
    exported["game"]["scenario"]["version"] = 99
    error = _refused(exported, "Unknown scenario version: mercury v99 is not loaded here")
    assert "python manage.py load_scenario scenarios/mercury" in str(error)
    assert error.prefix == ExportImportError.UNKNOWN_SCENARIO
    exported["game"]["scenario"]["version"] = 1
    exported["game"]["scenario"]["content_hash"] = "0" * 64
    here = ScenarioVersion.objects.get(slug="mercury", version=1).content_hash
    _refused(exported, f"Scenario content differs: mercury v1 here has content hash {here}, the export 0000")


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
    path.write_text(json.dumps({**exported, "format": "mercury-game/2"}), encoding="utf-8")
    with pytest.raises(CommandError, match="game.json: Unsupported export format: 'mercury-game/2'"):
        _command(str(path))
    with pytest.raises(CommandError, match="cannot read"):
        _command(str(tmp_path / "missing.json"))


def test_a_failed_model_call_is_kept_where_it_happened(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """A call that failed produced no event: the import logs it between the same steps, with its cause."""
    import litellm

    from simulations.ai import gateway
    from simulations.kinds.negotiation.games import step_of
    from simulations.kinds.negotiation.turns import play_ai_step
    from tests.helpers import repin

    game = game_at_first_ai_turn(seed=3)
    settings.MERCURY_MODEL, settings.MERCURY_MODEL_RETRIES = "openai/gpt-4o-mini", 0
    game = repin(game)
    original, answers = (
        litellm.completion,
        iter([None, "Thank you for meeting us.", '{"offers": ["financing"]}']),
    )

    def completion(*args: Any, **kwargs: Any) -> Any:
        answer = next(answers)
        if answer is None:
            raise litellm.APIConnectionError(
                message="connection refused", llm_provider="openai", model="gpt-4o-mini"
            )
        return original(*args, mock_response=answer, **kwargs)

    monkeypatch.setattr(litellm, "completion", completion)
    with pytest.raises(gateway.ModelFailure):
        play_ai_step(game=game, step=step_of(game))
    game = play_ai_step(game=Game.objects.get(pk=game.pk), step=step_of(game))
    exported = _as_file(game)
    (failed,) = [c for c in exported["model_calls"] if c["event_seq"] is None]
    assert failed["status"] == "error" and "connection refused" in failed["error"]
    turn, judged = exported["model_calls"][-2:]
    assert (turn["purpose"], judged["purpose"], judged["outcome"]) == ("talk_open", "judge", "used")
    assert failed["seq"] < turn["seq"] and turn["event_seq"] == judged["event_seq"]
    assert exported["events"][turn["event_seq"] - 1]["name"] == "AI_MESSAGE_COMMITTED"
    monkeypatch.setattr(litellm, "completion", None)  # the import calls no model
    imported = import_game(data=exported)
    assert _without_id(_as_file(imported)) == _without_id(exported)
