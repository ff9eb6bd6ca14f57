"""`play_class` plays a whole class headless (bot students join with the code, each plays their own game to the
end); `export_class` writes its results. Whole games, offline model."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from simulations.models import ClassSession, Game, Vote
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


def test_groups_of_bots_share_a_game_each_student_in_a_seat_of_their_own() -> None:
    _run("load_scenario", str(SCENARIOS / "mercury"))
    result = json.loads(_run("play_class", "--scenario", "mercury", "--groups", "2", "--students-per-group", "3",
                             "--seed", "1", "--human", "advocate").splitlines()[-1])  # fmt: skip
    session = ClassSession.objects.get(pk=result["session"])
    assert session.students_per_group == 3 and session.members.count() == 6
    assert [g["status"] for g in result["games"]] == ["REVIEW", "REVIEW"]
    for played in result["games"]:
        seats = played["human_seats"]
        assert len(seats) == len(set(seats)) == 3 and played["seat"] == seats[0]
        game = Game.objects.get(pk=played["game_id"])
        assert game.state["human_role"] == seats[0] and game.state["co_players"] == seats[1:]
        moved = {e.actor for e in game.events.all() if e.actor.startswith("human:")}
        assert moved == {f"human:{seat}" for seat in seats}  # every student moved in their own seat
    students = {s for g in result["games"] for s in g["students"].values()}
    assert students == set(session.members.values_list("student__username", flat=True))
    rows = list(csv.DictReader(io.StringIO(_run("export_class", str(session.pk)))))
    assert {r["student"] for r in rows} == students  # every student's row, their own seat's ballot
    for row in rows:
        game = Game.objects.get(pk=row["game_id"])
        assert row["seat"] in game.state["co_players"] + [game.state["human_role"]]


def test_the_teachers_results_set_every_group_side_by_side_and_download_whole() -> None:
    _run("load_scenario", str(SCENARIOS / "mercury"))
    result = json.loads(_run("play_class", "--scenario", "mercury", "--groups", "2", "--students-per-group", "2",
                             "--seed", "3").splitlines()[-1])  # fmt: skip
    session = ClassSession.objects.get(pk=result["session"])
    teacher, stranger = Client(), Client()
    teacher.force_login(session.teacher)
    stranger.force_login(User.objects.create_user("stranger", is_staff=True))
    base = f"/classes/{session.pk}"
    for path in ("/results/", "/results-by-game.csv", "/games.zip"):
        assert stranger.get(base + path).status_code == 404
    page = teacher.get(base + "/results/").content.decode()
    votes = list(Vote.objects.filter(game__in=[g["game_id"] for g in result["games"]]))
    for game in result["games"]:
        assert f"Game #{game['game_id']}" in page
    for issue in {v.issue for v in votes}:
        adopted = sum(v.adopted for v in votes if v.issue == issue)
        assert f"{adopted} of 2</text>" in page  # the chart's count for that issue
    rows = list(csv.DictReader(io.StringIO(teacher.get(base + "/results-by-game.csv").content.decode())))
    assert sorted((int(r["game_id"]), r["issue"], r["adopted"]) for r in rows) == sorted(
        (v.game_id, v.issue, "yes" if v.adopted else "no") for v in votes
    )
    archive = zipfile.ZipFile(io.BytesIO(teacher.get(base + "/games.zip").content))
    names = set(archive.namelist())
    assert names == {f"class-{session.code}.csv"} | {f"game-{g['game_id']}.json" for g in result["games"]}
    exported = json.loads(archive.read(f"game-{result['games'][0]['game_id']}.json"))
    assert exported["game"]["id"] == result["games"][0]["game_id"] and exported["transcript"]


def test_students_read_the_class_results_without_names_when_the_teacher_shares_them() -> None:
    _run("load_scenario", str(SCENARIOS / "mercury"))
    result = json.loads(_run("play_class", "--scenario", "mercury", "--groups", "2", "--students-per-group", "2",
                             "--seed", "2").splitlines()[-1])  # fmt: skip
    session = ClassSession.objects.get(pk=result["session"])
    first = result["games"][0]
    ada = User.objects.get(username=first["students"][first["seat"]])
    reader = Client()
    reader.force_login(ada)
    url = f"/classes/{session.pk}/class-results/"
    assert reader.get(url).status_code == 404  # not shared
    ClassSession.objects.filter(pk=session.pk).update(results_shared=True)
    page = reader.get(url).content.decode()
    assert "Your game" in page and "Game 2" in page and f"/games/{first['game_id']}/review/" in page
    names = {name for g in result["games"] for name in g["students"].values()}
    table = page[page.index("<table") : page.index("</table>")]
    assert not any(name in table for name in names)  # nobody's name, not even theirs (the header has theirs)
    assert (
        f"/games/{result['games'][1]['game_id']}/review/" not in page
    )  # another group's game: not a click away
    outsider = Client()
    outsider.force_login(User.objects.create_user("outsider"))
    assert outsider.get(url).status_code == 404
