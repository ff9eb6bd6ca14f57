"""`play_class` plays a whole class headless (bot students join with the code, each plays their own game to the
end); `export_class` writes its results. Whole games, offline model."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from simulations.models import ClassSession, Vote
from simulations.services.people.class_sessions import session_games

pytestmark = pytest.mark.django_db
SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_a_class_of_bots_plays_every_game_to_the_end_and_its_results_export() -> None:
    _run("load_scenario", str(SCENARIOS / "mercury"))
    result = json.loads(_run("play_class", "--scenario", "mercury", "--students", "2", "--roles", "CAN,TZA",
                             "--human", "advocate").splitlines()[-1])  # fmt: skip
    session = ClassSession.objects.get(pk=result["session"])
    games = {g.pk: g for g in session_games(session)}
    assert sorted(games) == sorted(g["game_id"] for g in result["games"]) and len(games) == 2
    assert [(g["seat"], g["status"]) for g in result["games"]] == [("CAN", "REVIEW"), ("TZA", "REVIEW")]
    assert all(game.finished_at for game in games.values())
    rows = list(csv.DictReader(io.StringIO(_run("export_class", str(session.pk)))))
    assert len(rows) == Vote.objects.filter(game__in=games).count() == 8  # four issues, two tables
    assert {r["student"] for r in rows} == {g["student"] for g in result["games"]}
    students = json.loads(_run("export_class", str(session.pk), "--format", "json"))["students"]
    assert sorted(s["game_id"] for s in students) == sorted(games)


def test_a_practice_conversation_class_and_the_refusals() -> None:
    _run("load_scenario", str(SCENARIOS / "roleplay"))
    result = json.loads(_run("play_class", "--scenario", "cafe-barista", "--students", "2").splitlines()[-1])
    assert [g["status"] for g in result["games"]] == ["ENDED", "ENDED"]
    with pytest.raises(CommandError, match="not loaded"):
        _run("play_class", "--scenario", "no-such-scenario")
    with pytest.raises(CommandError, match="No class session"):
        _run("export_class", "999999")
