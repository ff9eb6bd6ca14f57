"""Several students on one code-review committee (issue #67): a class session's group shares one deliberation, each
student holding a committee seat; only the student whose seat has the floor moves, the others' pages wait for
them, and a student past the turn limit is stood in for by the seat's offline persona, marked as such."""

from __future__ import annotations

import html
import json
import re
from datetime import timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from simulations.kinds import Actor, kind_of
from simulations.kinds.deliberation.games import state_of
from simulations.models import ClassSession, Game, GameSeat, ScenarioVersion
from simulations.services.content.scenarios import load_scenarios
from simulations.services.people.class_results import class_results
from simulations.services.people.class_sessions import session_games
from simulations.services.play.drive import drive_game
from tests.helpers import logged_in

pytestmark = pytest.mark.django_db
COMMITTEE = Path(__file__).resolve().parents[2] / "scenarios" / "deliberation"


def _committee() -> ScenarioVersion:
    ((version, _),) = load_scenarios(path=COMMITTEE)
    return version


def _group(**fields: Any) -> tuple[Game, dict[str, Client]]:
    """A committee session of two students a game, seats listed by the teacher (in the form's own case), both
    joined and started: the group's game and the students' clients (ada holds security, bo the maintainer)."""
    _, room = logged_in("teacher", staff=True)
    version = _committee()
    posted = room.post("/classes/new/", {"scenario": version.slug, "title": "Review", "max_students": 2,
                                         "students_per_group": 2, "model": "default",
                                         "seats": "Security, maintainer"} | fields)  # fmt: skip
    assert posted.status_code == 302, posted.content.decode()[:600]
    session = ClassSession.objects.get(pk=int(posted["Location"].strip("/").split("/")[-1]))
    clients = {}
    for name in ("ada", "bo"):
        _, clients[name] = logged_in(name)
        assert clients[name].post("/join/", {"code": session.code}).status_code == 302
    assert room.post(f"/classes/{session.pk}/start/").status_code == 302
    session.refresh_from_db()
    (game,) = session_games(session)
    return game, clients


def _until_seat(game: Game, seat: str) -> Game:
    """The committee's AI plays until `seat` (a student's) has the floor."""
    for _ in range(40):
        game = Game.objects.select_related("scenario").get(pk=game.pk)
        step = kind_of(game).next_step(game)
        if step.actor is Actor.HUMAN and step.seat == seat:
            return game
        assert step.actor is Actor.AI, f"{step} before {seat} spoke"
        drive_game(game_id=game.pk, max_steps=1, stream=False)
    raise AssertionError(f"{seat} never had the floor")


def _move(client: Client, game: Game, text: str) -> Any:
    return client.post(f"/games/{game.pk}/move/", {"event": "OPINION_GIVEN", "version": game.version,
                                                  "idem": f"k{game.version}{text[:3]}", "stance": "OBJECT",
                                                  "confidence": "0.9", "text": text})  # fmt: skip


def test_a_groups_students_hold_committee_seats_and_each_moves_only_their_own() -> None:
    game, clients = _group()
    assert {s.role: s.student.username for s in GameSeat.objects.filter(game=game)} == {
        "security": "ada", "maintainer": "bo"}  # fmt: skip
    state = state_of(game)
    assert (state.human_seat, state.co_players) == ("security", ["maintainer"])
    assert state.submission.label  # the group reviews the scenario's first sample
    game = _until_seat(game, "security")
    ada, bo = (clients[n].get(f"/games/{game.pk}/").content.decode() for n in ("ada", "bo"))
    assert 'data-action="opinion"' in ada and 'data-action="waiting"' in bo
    assert "another student of your group" in bo
    assert re.search(
        r"Maintainer[^<]*</strong> <span class=\"flag\">you</span>", bo
    )  # bo's own seat is marked

    refused = _move(clients["bo"], game, "Not my seat, but here is my view.")
    assert Game.objects.get(pk=game.pk).version == game.version  # nothing committed
    assert refused.status_code == 409 and "turn, not yours" in html.unescape(refused.content.decode())

    assert _move(clients["ada"], game, "Line 3 holds a secret in the code; it must go.").status_code == 302
    moved = Game.objects.get(pk=game.pk)
    assert moved.version > game.version
    assert moved.events.filter(actor="security", name="OPINION_GIVEN").exists()
    game = _until_seat(moved, "maintainer")
    assert 'data-action="opinion"' in clients["bo"].get(f"/games/{game.pk}/").content.decode()
    assert _move(clients["bo"], game, "I agree with the security reviewer on line 3.").status_code == 302
    assert Game.objects.get(pk=game.pk).events.filter(actor="maintainer", name="OPINION_GIVEN").exists()


def test_a_committee_seat_past_the_turn_limit_is_played_by_its_stand_in_for_that_turn() -> None:
    game, _ = _group(turn_seconds=60)
    game = _until_seat(game, "security")
    Game.objects.filter(pk=game.pk).update(updated_at=timezone.now() - timedelta(seconds=61))
    game = Game.objects.select_related("scenario").get(pk=game.pk)
    step = kind_of(game).next_step(game)
    assert step.actor is Actor.AI and step.seat == "security" and "(AI stand-in)" in step.speaker
    assert drive_game(game_id=game.pk, max_steps=1, stream=False).steps == 1
    stood = Game.objects.get(pk=game.pk)
    assert stood.events.filter(actor="stand-in:security").count() == 1
    assert stood.entries.filter(speaker="security", text__startswith="(AI stand-in) ").count() == 1


def test_play_class_plays_committee_groups_to_their_verdict_every_student_in_their_seat() -> None:
    out = StringIO()
    call_command("load_scenario", str(COMMITTEE), stdout=StringIO())
    call_command("play_class", "--scenario", "code-review", "--groups", "2", "--students-per-group", "2",
                 "--seed", "3", stdout=out)  # fmt: skip
    result = json.loads(out.getvalue().splitlines()[-1])
    assert [g["status"] for g in result["games"]] == ["CONCLUSION", "CONCLUSION"]
    for played in result["games"]:
        seats = played["human_seats"]
        assert len(set(seats)) == 2 and set(played["students"]) == set(seats)
        game = Game.objects.get(pk=played["game_id"])
        state = state_of(game)
        assert state.humans == seats and state.verdict is not None
        # Each student's seat gave opinions of its own (no stand-in) and voted in every round that voted.
        opined = {e.actor for e in game.events.filter(name="OPINION_GIVEN")}
        for seat in seats:
            assert seat in opined, (seat, opined)
            assert all(seat in r.ballots for r in state.rounds if r.ballots), seat
    results = class_results(ClassSession.objects.get(pk=result["session"]))
    assert [sorted(seat for _, seat in g.students) for g in results.games] == [
        sorted(g["human_seats"]) for g in result["games"]
    ]  # the teacher's results list each group's students in their seats
