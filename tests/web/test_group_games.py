"""Several students in one negotiation (issue #67): a teacher's session with groups makes one game a group, each
student moves only their own seat, sees their own talks and never another pair's, and the AI's prompts leave out
the talks they were not in."""

from __future__ import annotations

import html
import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from simulations.kinds import Actor, NextStep, ai_acts_next, kind_of
from simulations.kinds.negotiation.games import scenario_of, state_of
from simulations.kinds.negotiation.state import GameState
from simulations.models import ClassSession, Game, GameSeat
from simulations.services.people.class_sessions import session_games
from simulations.services.play.budget import BudgetExhausted, check_budget
from simulations.services.play.drive import drive_game
from simulations.services.play.drive_queue import queue_turn_deadline
from tests.helpers import logged_in, mercury_version, play_group_until

pytestmark = pytest.mark.django_db


def _group_game(
    students: int, per_game: int, **fields: Any
) -> tuple[ClassSession, Client, dict[str, Client], list[Game]]:
    """A session with groups, its students joined (ada, bo, cy, …) and started: its games."""
    _, room = logged_in("teacher", staff=True)
    version = mercury_version()
    posted = room.post("/classes/new/", {"scenario": version.slug, "title": "Groups", "max_students": students,
                                         "students_per_group": per_game, "model": "default"} | fields)  # fmt: skip
    assert posted.status_code == 302, posted.content.decode()[:600]
    session = ClassSession.objects.get(pk=int(posted["Location"].strip("/").split("/")[-1]))
    clients = {}
    for name in ("ada", "bo", "cy", "dee", "eli", "fay")[:students]:
        _, clients[name] = logged_in(name)
        assert clients[name].post("/join/", {"code": session.code}).status_code == 302
    assert room.post(f"/classes/{session.pk}/start/").status_code == 302
    session.refresh_from_db()
    games = list(session_games(session).order_by("pk"))
    return session, room, clients, games


def _seat(game: Game, name: str) -> str:
    held = GameSeat.objects.filter(game=game, student__username=name).first()
    return held.role if held else game.human_role


def _move_fields(page: str) -> dict[str, str]:
    form = re.search(r"<form[^>]*data-socket-move[^>]*>(.*?)</form>", page, re.S)
    assert form, "no move form on the page"
    return dict(re.findall(r'<input[^>]*name="(\w+)"[^>]*value="([^"]*)"', form.group(1)))


def test_a_session_with_groups_seats_each_student_in_one_shared_game() -> None:
    session, room, clients, games = _group_game(5, 2)
    assert len(games) == 3  # two pairs, and the fifth student alone in a seat drawn as the others'
    for game in games:
        holders = set(GameSeat.objects.filter(game=game).values_list("student__username", flat=True))
        holders = holders or {str(game.owner)}
        state = state_of(game)
        assert game.phase == "ROUND_1_OPENING_STATEMENTS" and len(state.humans) == len(holders)
        for name in holders:
            page = clients[name].get(f"/games/{game.pk}/")
            assert page.status_code == 200
            you = re.search(r"You are <strong>([^<]+)</strong>", page.content.decode())
            assert you and you.group(1) == scenario_of(game).display_name(_seat(game, name))
            waiting = clients[name].get(f"/classes/{session.pk}/wait/").content.decode()
            assert f"/games/{game.pk}/" in waiting or "Back to your game" in waiting
        for name in set(clients) - holders:  # another group's student: the game does not exist for them
            assert clients[name].get(f"/games/{game.pk}/").status_code == 404
    roster = room.get(f"/classes/{session.pk}/roster/").content.decode()
    for game in games:
        for seat in state_of(game).humans:
            assert f"#{game.pk}</a> · {seat}" in roster


def test_only_the_student_whose_seat_acts_may_move_and_the_other_is_told_whose_turn_it_is() -> None:
    _, _, clients, games = _group_game(2, 2)
    game = games[0]
    owner, other = (
        GameSeat.objects.filter(game=game).order_by("pk").values_list("student__username", flat=True)
    )
    seat = _seat(game, other)
    # The second student's seat acts (a Round 3 turn: Round 2's talks run side by side, test_group_lanes.py).
    game = play_group_until(game, lambda state, step: step.seat == seat and _in_round_3(state))
    fields = _move_fields(clients[other].get(f"/games/{game.pk}/").content.decode())
    refused = clients[owner].post(f"/games/{game.pk}/move/", fields | {"text": "Not my seat.", "ballot": "yes",
                                                                        "placement": "first"})  # fmt: skip
    assert refused.status_code == 302  # a plain post: the sentence rides to the page
    told = clients[owner].get(f"/games/{game.pk}/").content.decode()
    name = scenario_of(game).display_name(seat)
    assert f"It is {name}&#x27;s turn, not yours" in told or f"It is {name}'s turn, not yours" in told
    assert Game.objects.get(pk=game.pk).version == game.version  # nothing committed
    owners_panel = re.search(r'<p id="waiting"[^>]*>(.*?)</p>', told, re.S)
    assert owners_panel and name in owners_panel.group(1)  # the owner's page waits for the other student
    theirs = clients[other].get(f"/games/{game.pk}/").content.decode()
    assert "data-socket-move" in theirs and 'http-equiv="refresh"' not in theirs  # they may be typing
    assert 'http-equiv="refresh"' in told  # without JavaScript the owner's page reloads while the other plays


def _in_round_3(state: GameState) -> bool:
    return state.status.startswith("ISSUE_")


def _talk_between_students(state: GameState, step: NextStep) -> bool:
    return any(c.partner in state.humans and c.phase == "CLOSED" for c in state.round2.conversations)


def test_a_talk_between_two_students_is_hidden_from_the_third_and_from_every_ai_prompt() -> None:
    _, _, clients, games = _group_game(3, 3)
    game = play_group_until(games[0], _talk_between_students)
    state = state_of(game)
    pair = next(c for c in state.round2.conversations if c.partner in state.humans)
    parties = {str(state.talker_of(pair)), pair.partner}
    said = [e for e in game.entries.filter(kind="message") if set(e.audience) == parties]
    assert said
    holders = {_seat(game, name): name for name in clients if GameSeat.objects.filter(game=game,
                                                                                      student__username=name)}  # fmt: skip
    third = next(name for seat, name in holders.items() if seat not in parties)
    for seat, name in holders.items():
        page = clients[name].get(f"/games/{game.pk}/").content.decode()
        shown = [f'id="entry-{e.seq}"' in page for e in said]
        assert all(shown) if seat in parties else not any(shown), (name, seat)
    assert clients[third].get(f"/games/{game.pk}/").status_code == 200
    game = play_group_until(
        game, lambda state, step: False
    )  # to the end: every AI call of the game on record
    assert game.phase == "REVIEW"
    private = {e.seq for e in said}
    calls = list(game.model_calls.exclude(role__in=parties).exclude(role=""))
    assert len(calls) > 20
    assert all(not private & set(call.context) for call in calls)  # no seat's prompt held the pair's words
    for seat, name in holders.items():  # the finished game's review and downloads, read by each student
        review = clients[name].get(f"/games/{game.pk}/review/").content.decode()
        exported = clients[name].get(f"/games/{game.pk}/export.json").json()["transcript"]
        markdown = clients[name].get(f"/games/{game.pk}/export.md").content.decode()
        for found in (
            [f'id="entry-{e.seq}"' in review for e in said],
            [any(row["seq"] == e.seq for row in exported) for e in said],
        ):
            assert all(found) if seat in parties else not any(found), (name, seat, found)
        own_private = sum(seat in audience for audience in game.entries.filter(visibility="private").values_list(
            "audience", flat=True))  # fmt: skip
        assert markdown.count("(private):") == own_private  # every private line its own talks', and no other


def _second(game: Game) -> tuple[str, str]:
    """The second student of a group's game: their name and seat."""
    held = GameSeat.objects.filter(game=game).order_by("pk").select_related("student")[1]
    return held.student.username, held.role


def _next_turn_of(game: Game, seat: str) -> NextStep:
    """The step at which `seat` is next asked to move by the headless loop (the bots play until then)."""
    seen: list[NextStep] = []

    def stop(state: GameState, step: NextStep) -> bool:
        if step.seat == seat:
            seen.append(step)
        return bool(seen)

    play_group_until(game, stop)
    assert seen, f"{seat} was not asked again"
    return seen[0]


def test_a_student_past_the_turn_limit_is_stood_in_for_that_turn_and_has_the_next() -> None:
    _, _, _, games = _group_game(2, 2, turn_seconds=60)
    name, seat = _second(games[0])
    game = play_group_until(games[0], lambda state, step: step.seat == seat and _in_round_3(state))
    assert kind_of(game).next_step(game).actor is Actor.HUMAN and not ai_acts_next(game)
    queue_turn_deadline(game)  # as every commit leaving a student the floor does
    deadline = (
        DBTaskResult.objects.filter(args_kwargs__kwargs__game_id=game.pk).order_by("-run_after").first()
    )
    assert deadline is not None and deadline.run_after > timezone.now() + timedelta(seconds=50)
    Game.objects.filter(pk=game.pk).update(
        updated_at=timezone.now() - timedelta(seconds=61)
    )  # the limit passes
    game = Game.objects.select_related("scenario").get(pk=game.pk)
    step = kind_of(game).next_step(game)
    assert (
        step.actor is Actor.AI
        and step.seat == seat
        and "(AI stand-in)" in step.speaker
        and ai_acts_next(game)
    )
    before = game.version
    assert drive_game(game_id=game.pk, max_steps=1).steps == 1
    stood = game.events.filter(seq__gt=0, actor=f"stand-in:{seat}")
    assert stood.count() == 1 and Game.objects.get(pk=game.pk).version == before + 1
    marked = game.entries.filter(text__startswith="(AI stand-in) ")
    assert marked.exists()
    _next_turn_of(game, seat)  # the student is asked again: the stand-in took that one turn only
    assert game.events.filter(actor=f"stand-in:{seat}").count() == 1


def test_the_teacher_hands_a_seat_to_the_ai_and_gives_it_back() -> None:
    session, room, clients, games = _group_game(2, 2)
    name, seat = _second(games[0])
    game = play_group_until(games[0], lambda state, step: step.seat == seat)
    url = f"/classes/{session.pk}/games/{game.pk}/seats/{seat}/stand-in/"
    for outsider in (clients[name], logged_in("other-teacher", staff=True)[1]):
        assert outsider.post(url, {"to_ai": "1"}).status_code == 404
    assert room.post(url, {"to_ai": "1"}).status_code == 302
    assert f"Give back to {name}" in room.get(f"/classes/{session.pk}/roster/").content.decode()
    game = Game.objects.select_related("scenario").get(pk=game.pk)
    assert ai_acts_next(game)
    drive_game(game_id=game.pk, max_steps=40)  # the stand-in plays the seat, the AI the others'
    assert game.events.filter(actor=f"stand-in:{seat}").count() >= 1
    assert not game.events.filter(actor=f"human:{seat}", seq__gt=game.version).exists()
    assert room.post(url, {"to_ai": "0"}).status_code == 302
    stood = game.events.filter(actor=f"stand-in:{seat}").count()
    _next_turn_of(game, seat)  # given back: the student is asked again, the stand-in plays no more
    assert game.events.filter(actor=f"stand-in:{seat}").count() == stood
    assert (
        room.post(f"/classes/{session.pk}/games/{game.pk}/seats/JPN/stand-in/", {"to_ai": "1"}).status_code
        == 404
    )


def test_the_teacher_names_the_seats_a_groups_students_take_in_join_order() -> None:
    _, _, _, games = _group_game(4, 2, seats="can, eu")
    for game in games:
        held = list(
            GameSeat.objects.filter(game=game).order_by("pk").values_list("student__username", "role")
        )
        assert [role for _, role in held] == ["CAN", "EU"]
    firsts = sorted(games[0].seats.values_list("student__username", flat=True))
    assert firsts == ["ada", "bo"]  # the first two to join, in the first game


def test_seats_the_scenario_has_not_or_too_few_are_refused_on_the_form() -> None:
    _, room = logged_in("teacher", staff=True)
    version = mercury_version()
    for seats, sentence in (
        ("CAN, JPN", "Seats are this scenario's"),
        ("CAN", "Name a seat for each student"),
    ):
        posted = room.post("/classes/new/", {"scenario": version.slug, "title": "Seats", "max_students": 4,
                                             "students_per_group": 2, "model": "default", "seats": seats})  # fmt: skip
        assert posted.status_code == 400 and sentence in html.unescape(posted.content.decode())
    assert not ClassSession.objects.exists()


def test_a_sessions_model_budget_stops_each_of_its_games_ai_at_that_many_tokens(settings: Any) -> None:
    settings.MERCURY_MAX_TOKENS_PER_GAME = 0  # the site sets no limit: the session's applies
    _, _, _, games = _group_game(2, 2, token_budget=500)
    game = Game.objects.select_related("scenario").get(pk=games[0].pk)
    assert game.token_budget == 500
    with pytest.raises(BudgetExhausted, match="its class session's budget") as stopped:
        play_group_until(game, lambda state, step: False)
    assert stopped.value.limit == 500
    used = sum(c.prompt_tokens + c.completion_tokens for c in game.model_calls.all())
    assert 500 <= used < 500 + max(c.prompt_tokens + c.completion_tokens for c in game.model_calls.all()) + 1
    settings.MERCURY_MAX_TOKENS_PER_GAME = 300  # the lower of the two applies
    with pytest.raises(BudgetExhausted, match="MERCURY_MAX_TOKENS_PER_GAME"):
        check_budget(game)


def test_students_choose_their_seats_while_they_wait_the_first_to_join_wins_a_clash() -> None:
    _, room = logged_in("teacher", staff=True)
    version = mercury_version()
    posted = room.post("/classes/new/", {"scenario": version.slug, "title": "Choice", "max_students": 2,
                                         "students_per_group": 2, "model": "default", "students_choose": "on"})  # fmt: skip
    session = ClassSession.objects.get(pk=int(posted["Location"].strip("/").split("/")[-1]))
    clients = {}
    for name in ("ada", "bo"):
        _, clients[name] = logged_in(name)
        clients[name].post("/join/", {"code": session.code})
    page = clients["ada"].get(f"/classes/{session.pk}/wait/").content.decode()
    assert 'name="seat"' in page and ">Canada</option>" in page
    for name in ("ada", "bo"):  # both ask for Canada: ada joined first
        assert clients[name].post(f"/classes/{session.pk}/seat/", {"seat": "CAN"}).status_code == 302
    assert (
        clients["bo"].post(f"/classes/{session.pk}/seat/", {"seat": "JPN"}).status_code == 302
    )  # not a seat
    room.post(f"/classes/{session.pk}/start/")
    game = Game.objects.get(owner__username="ada")
    held = dict(GameSeat.objects.filter(game=game).values_list("student__username", "role"))
    assert held["ada"] == "CAN" and held["bo"] not in ("CAN", "JPN")
    late = clients["bo"].post(f"/classes/{session.pk}/seat/", {"seat": "EU"}, follow=True).content.decode()
    assert "only before the session starts" in late
