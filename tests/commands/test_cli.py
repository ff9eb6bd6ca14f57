from __future__ import annotations

import json
import os
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import CommandError, call_command

from simulations.kinds.negotiation import (
    turns as drive_service,  # where the negotiation plays each AI step
)
from simulations.kinds.negotiation.bots import PASSIVE_LINES
from simulations.models import Game, ScenarioVersion, TranscriptEntry
from tests.conftest import SCENARIO_DIR

pytestmark = pytest.mark.django_db


def _run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _last_json(out: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def test_load_scenario_reports_new_then_unchanged() -> None:
    out, _ = _run("load_scenario", str(SCENARIO_DIR))
    assert out.startswith("Loaded new version mercury v1 (")
    out, _ = _run("load_scenario", str(SCENARIO_DIR))
    assert out.startswith("Unchanged, already stored as mercury v1 (")


def test_load_scenario_names_the_faulty_file(tmp_path: Path) -> None:
    (tmp_path / "chair.yaml").write_text(
        (SCENARIO_DIR / "chair.yaml").read_text()
    )  # a negotiation, half there
    with pytest.raises(CommandError, match=f"{tmp_path}/scenario.yaml: file not found"):
        _run("load_scenario", str(tmp_path))


def test_load_scenario_says_when_a_folder_holds_no_scenario(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match=f"{tmp_path}: no scenario of any installed kind here"):
        _run("load_scenario", str(tmp_path))


def test_load_scenario_loads_a_deliberation() -> None:
    out, _ = _run("load_scenario", str(SCENARIO_DIR.parent / "deliberation"))
    assert out.startswith("Loaded new version code-review v1 (deliberation, ")


def test_play_needs_a_loaded_scenario() -> None:
    with pytest.raises(
        CommandError, match="Scenario 'mercury' is not loaded: run `python manage.py load_scenario"
    ):
        _run("play", "--role", "EU", "--seed", "1")


def test_play_then_export_json_and_markdown() -> None:
    _run("load_scenario", str(SCENARIO_DIR))
    out, _ = _run("play", "--role", "CHN", "--seed", "4", "--human", "advocate", "--quiet")
    result = _last_json(out)
    assert result["status"] == "REVIEW" and set(result) == {"game_id", "status"}
    out, _ = _run("export_game", str(result["game_id"]))
    data = json.loads(out)
    assert data["format"] == "simulation-export/3" and data["kind"] == "negotiation"
    assert set(data) == {
        "format", "kind", "game", "events", "transcript", "checkpoints", "votes", "judge_readings",
        "model_calls", "token_usage", "judge_calls", "negotiation",
    }  # fmt: skip
    assert set(data["game"]) == {
        "id", "scenario", "seed", "status", "phase", "human_role", "human_policy", "model", "judge_model",
        "created_at", "finished_at",
    }  # fmt: skip
    assert data["game"]["model"] == data["game"]["judge_model"] == "mercury-offline/default"
    assert data["game"]["scenario"]["content_hash"] == ScenarioVersion.objects.get().content_hash
    assert (data["game"]["status"], data["game"]["phase"]) == ("finished", "REVIEW")
    assert data["game"]["human_role"] == "CHN" and data["game"]["human_policy"] == {"kind": "advocate"}
    kinds = {t["kind"] for t in data["transcript"]}
    assert {"chair", "opening", "message", "speech", "vote", "result"} <= kinds
    for entry in data["transcript"]:
        assert (entry["audience"] != []) == (entry["visibility"] == "private")
    section = data["negotiation"]
    assert set(section) == {"roles", "issues", "stance_changes", "commitments", "summary"}
    roles = {r["id"]: r for r in section["roles"]}
    assert roles["JPN"]["kind"] == "chair" and not roles["JPN"]["votes"] and roles["AMAP"]["kind"] == "ngo"
    assert {"issue", "proposal", "ballots", "adopted"} == set(data["votes"][0])
    assert {"seq", "name", "from", "to", "actor", "payload"} == set(data["events"][0])
    spoken = [e for e in data["events"] if e["name"] == "HUMAN_TURN_SPEAK"]
    assert spoken and all(e["payload"]["text"] for e in spoken)  # the student's words travel with the event
    assert {"seq", "after_event", "transcript_seq"} == set(data["checkpoints"][0])
    call = data["model_calls"][0]
    assert set(call) == {
        "seq", "event_seq", "role", "purpose", "phase", "context", "prompt_version", "prompt_tokens",
        "completion_tokens", "counted_by", "model", "status", "error", "cost_usd", "outcome", "outcome_reason",
    }  # fmt: skip
    assert data["events"][call["event_seq"] - 1]["actor"] == f"ai:{call['role']}"
    # Offline: no price, and no judge calls (the rules judge every message).
    assert call["counted_by"] == "offline:estimate:wordpiece" and call["cost_usd"] is None
    assert data["token_usage"]["cost_usd"] is None and data["judge_calls"]["calls"] == 0
    md, _ = _run("export_game", str(result["game_id"]), "--format", "markdown")
    assert md.startswith("# Mercury: negotiating a global instrument — game")
    assert "## Round 2: private talks" in md and "## Votes" in md and "## Debrief" in md
    assert "## Stance shifts" in md and "## Model usage" in md
    usage = data["token_usage"]
    assert usage["prompt_tokens"] == sum(c["prompt_tokens"] for c in data["model_calls"]) > 0
    assert usage["counted_by"] == ["offline:estimate:wordpiece"] and "CAN" in usage["per_role"]
    for change in section["stance_changes"]:
        assert change["reason"] and change["role"] in roles


def test_play_resumes_an_interrupted_game(monkeypatch: pytest.MonkeyPatch) -> None:
    _run("load_scenario", str(SCENARIO_DIR))
    real = drive_service.play_ai_step
    calls = {"n": 0}

    def dies_on_the_twentieth(**kwargs: object) -> Game:
        calls["n"] += 1
        if calls["n"] == 20:
            raise KeyboardInterrupt  # the process is stopped in the middle of an AI turn
        return real(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(drive_service, "play_ai_step", dies_on_the_twentieth)
    with pytest.raises(KeyboardInterrupt):
        _run("play", "--role", "TZA", "--seed", "6", "--human", "advocate", "--quiet")
    game = Game.objects.get()
    assert game.phase not in ("REVIEW", "ROLE_SELECTION")
    seen = TranscriptEntry.objects.filter(game=game).count()
    out, err = _run("play", "--resume", str(game.pk), "--human", "advocate")
    assert _last_json(out) == {"game_id": game.pk, "status": "REVIEW"}
    assert f"[game {game.pk}]" in err  # progress is shown
    assert TranscriptEntry.objects.filter(game=game).count() > seen


def test_play_with_a_script(tmp_path: Path) -> None:
    _run("load_scenario", str(SCENARIO_DIR))
    script = {
        "role": "USA",
        "variant": "USA-b",
        "talks": [{"partner": "CHN", "starter": "human", "messages": [
            "We are ready to offer a dedicated financial mechanism and transfer of technology.",
            "Will you support emissions in scope (2.1)?",
        ]}],
        "issues": {"1": {"placement": "first", "speeches": ["We support 1.1, a legally binding instrument."], "vote": "yes"}},
    }  # fmt: skip
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump(script))
    out, _ = _run("play", "--role", "USA", "--seed", "2", "--human", f"script:{path}", "--quiet")
    game = Game.objects.get(pk=_last_json(out)["game_id"])
    assert game.phase == "REVIEW" and game.state["round1"]["openings"]["USA"] == "USA-b"
    texts = list(TranscriptEntry.objects.filter(game=game, speaker="USA").values_list("text", flat=True))
    assert script["talks"][0]["messages"][0] in texts  # type: ignore[index]
    assert "We support 1.1, a legally binding instrument." in texts
    assert game.state["round2"]["conversations"][0]["partner"] == "CHN"
    assert len(game.state["round2"]["conversations"]) == 1  # no second talk scripted: skipped


@pytest.mark.parametrize("bad", ["We support 1.1.\x00", "\x1b[2J", "ok\x07"])
def test_a_script_with_control_characters_is_refused_before_any_game(tmp_path: Path, bad: str) -> None:
    """A script is stored with its game; PostgreSQL refuses NUL in JSON: the script is refused when read."""
    _run("load_scenario", str(SCENARIO_DIR))
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"talks": [{"partner": "CHN", "messages": ["Hello.", bad]}]}))
    with pytest.raises(CommandError, match="control characters"):
        _run("play", "--role", "USA", "--seed", "2", "--human", f"script:{path}", "--quiet")
    assert not Game.objects.exists()


def test_play_rejects_a_bad_policy_and_an_unknown_game() -> None:
    _run("load_scenario", str(SCENARIO_DIR))
    with pytest.raises(CommandError, match="unknown human policy 'loud'"):
        _run("play", "--role", "EU", "--human", "loud")
    with pytest.raises(CommandError, match="No game 999."):
        _run("play", "--resume", "999")
    with pytest.raises(CommandError, match="No game 999."):
        _run("export_game", "999")


@pytest.mark.skipif(
    bool(os.environ.get("DATABASE_URL")), reason="the processes play on their own SQLite files: once a run"
)
def test_the_same_game_replays_identically_in_other_processes(tmp_path: Path) -> None:
    """Same seed and inputs in two fresh processes with different hash seeds: identical exports (set order,
    dict order or anything process-specific must never leak into a game). Each process migrates its own SQLite
    file, loads the scenario, plays and exports in one interpreter (a process a command took four times the
    start-up); the two run at once."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    script = (
        "import io, json; from django.core.management import call_command; "
        "call_command('migrate', verbosity=0); "
        "call_command('load_scenario', 'scenarios/mercury', stdout=io.StringIO()); "
        "out = io.StringIO(); "
        "call_command('play', role='USA', seed=9, human='advocate', quiet=True, stdout=out); "
        "game = json.loads(out.getvalue().strip().splitlines()[-1])['game_id']; "
        "call_command('export_game', str(game))"
    )
    processes = []
    for n, hash_seed in enumerate(("1", "2")):
        env = {
            **os.environ,
            "PYTHONHASHSEED": hash_seed,
            "MERCURY_SQLITE_PATH": str(tmp_path / f"db{n}.sqlite3"),
        }
        env.pop("DATABASE_URL", None)
        processes.append(
            subprocess.Popen(
                [sys.executable, str(root / "manage.py"), "shell", "--no-imports", "-c", script],
                env=env,
                cwd=root,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )  # fmt: skip
        )
    exports = []
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        data = json.loads(out)
        data["game"] = {k: v for k, v in data["game"].items() if k not in ("created_at", "finished_at")}
        exports.append(data)
    assert exports[0]["game"]["phase"] == "REVIEW" and exports[0]["transcript"]
    assert exports[0] == exports[1]


def _interrupted(monkeypatch: pytest.MonkeyPatch, *args: str, at: int = 20) -> Game:
    """A `play` run stopped in the middle of its `at`-th AI turn; the patch is undone before returning."""
    real = drive_service.play_ai_step
    calls = {"n": 0}

    def dies(**kwargs: object) -> Game:
        calls["n"] += 1
        if calls["n"] == at:
            raise KeyboardInterrupt
        return real(**kwargs)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(drive_service, "play_ai_step", dies)
        with pytest.raises(KeyboardInterrupt):
            _run("play", *args, "--quiet")
    return Game.objects.latest("pk")


def _student_lines(game: Game) -> list[str]:
    return list(
        TranscriptEntry.objects.filter(game=game, speaker=game.human_role).values_list("text", flat=True)
    )


def test_resume_without_human_continues_with_the_stored_student(monkeypatch: pytest.MonkeyPatch) -> None:
    _run("load_scenario", str(SCENARIO_DIR))
    out, _ = _run("play", "--role", "TZA", "--seed", "6", "--human", "advocate", "--quiet")
    whole = Game.objects.get(pk=_last_json(out)["game_id"])
    game = _interrupted(monkeypatch, "--role", "TZA", "--seed", "6", "--human", "advocate", at=40)
    assert game.human_policy == {"kind": "advocate"} and game.phase != "REVIEW"
    out, err = _run("play", "--resume", str(game.pk), "--quiet")
    assert _last_json(out) == {"game_id": game.pk, "status": "REVIEW"} and err == ""
    # The resumed game is the uninterrupted one, word for word: the advocate kept arguing after the resume.
    assert _student_lines(Game.objects.get(pk=game.pk)) == _student_lines(whole)
    assert not set(_student_lines(whole)) & set(PASSIVE_LINES)


def test_resume_keeps_a_script_even_when_its_file_is_gone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _run("load_scenario", str(SCENARIO_DIR))
    speech = "We support 4.2: artisanal mining out of scope pending assessment."
    script = {"role": "BRA", "talks": [{"partner": "TZA", "messages": ["We support 2.2, emissions out of scope."]}],
              "issues": {"4": {"placement": "first", "speeches": [speech]}}}  # fmt: skip
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump(script))
    game = _interrupted(monkeypatch, "--role", "BRA", "--seed", "3", "--human", f"script:{path}")
    assert game.human_policy["kind"] == "script" and game.human_policy["path"] == str(path)
    assert speech not in _student_lines(game)  # issue 4 is still ahead
    path.unlink()
    out, _ = _run("play", "--resume", str(game.pk), "--quiet")
    assert _last_json(out)["status"] == "REVIEW"
    assert speech in _student_lines(game)


def test_resume_with_human_overrides_the_stored_student_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    _run("load_scenario", str(SCENARIO_DIR))
    game = _interrupted(monkeypatch, "--role", "CAN", "--seed", "2", "--human", "advocate", at=3)
    seen = TranscriptEntry.objects.filter(game=game).count()
    out, err = _run("play", "--resume", str(game.pk), "--human", "passive", "--quiet")
    assert _last_json(out)["status"] == "REVIEW"
    assert (
        f"Game {game.pk} was played with --human advocate; continuing with --human passive as asked." in err
    )
    game.refresh_from_db()
    assert game.human_policy == {"kind": "passive"}
    later = TranscriptEntry.objects.filter(game=game, speaker="CAN", seq__gt=seen, kind="message")
    assert later and all(text in PASSIVE_LINES for text in later.values_list("text", flat=True))


def test_play_plays_a_deliberation_with_a_bot_in_the_proposers_seat() -> None:
    _run("load_scenario", str(SCENARIO_DIR.parent / "deliberation"))
    out, _ = _run(
        "play", "--scenario", "code-review", "--option", "sample=secret", "--role", "proposer", "--quiet"
    )
    result = json.loads(out.strip().splitlines()[-1])
    game = Game.objects.get(pk=result["game_id"])
    assert result["status"] == "CONCLUSION" and game.human_role == "proposer"
    assert game.state["verdict"] == "APPROVED" and len(game.state["submissions"]) == 2  # the bot amended
    with pytest.raises(CommandError, match="A deliberation starts from one --option"):
        _run("play", "--scenario", "code-review", "--quiet")
    with pytest.raises(CommandError, match="A negotiation takes no --option"):
        _run("load_scenario", str(SCENARIO_DIR))
        _run("play", "--role", "EU", "--option", "sample=secret", "--quiet")
