"""Several students in one negotiation (issue #67): a teacher's session with groups makes one game a group, each
student moves only their own seat, sees their own talks and never another pair's, and the AI's prompts leave out
the talks they were not in."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from simulations.kinds import NextStep
from simulations.kinds.negotiation.bots import BySeat, make_policy
from simulations.kinds.negotiation.games import scenario_of, state_of
from simulations.kinds.negotiation.headless import student
from simulations.kinds.negotiation.human_turns import submit_human_event
from simulations.kinds.negotiation.state import GameState
from simulations.models import ClassSession, Game, GameSeat
from simulations.services.people.access import TEACHERS
from simulations.services.people.class_sessions import session_games
from simulations.services.play.headless import play_to_end
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db
PASSWORD = "a-long-test-passphrase-42"


def _client(name: str, *, staff: bool = False) -> tuple[User, Client]:
    user = User.objects.create_user(name, password=PASSWORD, is_staff=staff)
    if staff:
        user.groups.add(Group.objects.get_or_create(name=TEACHERS)[0])
    client = Client()
    client.force_login(user)
    return user, client


def _group_game(students: int, per_game: int) -> tuple[ClassSession, Client, dict[str, Client], list[Game]]:
    """A session with groups, its students joined (ada, bo, cy, …) and started: its games."""
    _, room = _client("teacher", staff=True)
    version = mercury_version()
    posted = room.post("/classes/new/", {"scenario": version.slug, "title": "Groups", "max_students": students,
                                         "students_per_group": per_game, "model": "default"})  # fmt: skip
    assert posted.status_code == 302, posted.content.decode()[:600]
    session = ClassSession.objects.get(pk=int(posted["Location"].strip("/").split("/")[-1]))
    clients = {}
    for name in ("ada", "bo", "cy", "dee", "eli", "fay")[:students]:
        _, clients[name] = _client(name)
        assert clients[name].post("/join/", {"code": session.code}).status_code == 302
    assert room.post(f"/classes/{session.pk}/start/").status_code == 302
    session.refresh_from_db()
    games = list(session_games(session).order_by("pk"))
    return session, room, clients, games


class _Stop(Exception):
    pass


def _play_until(game: Game, stop: Callable[[GameState, NextStep], bool]) -> Game:
    """Every seat played by an advocate bot (the AI by the offline model) until `stop` holds before a move; the
    first student's first talk is with the second student."""
    bot = student(game, BySeat([make_policy("advocate", seat) for seat in state_of(game).humans]))

    def move(played: Game, step: NextStep, failure: BaseException | None) -> Game:
        state = state_of(played)
        if stop(state, step):
            raise _Stop
        if state.status == "ROUND_2_SELECT_CONVO_1" and not state.round2.conversations:
            partner = {"partner": state.humans[1], "starter": "human"}
            return submit_human_event(game=played, event="CONVO_1_STARTED", payload=partner)
        return bot(played, step, failure)

    try:
        return play_to_end(game, bot=move)
    except _Stop:
        return Game.objects.select_related("scenario").get(pk=game.pk)


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
        holders = holders or {game.owner.username}
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
    game = _play_until(game, lambda state, step: step.seat == seat)  # the second student's seat acts
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
    assert "data-socket-move" in clients[other].get(f"/games/{game.pk}/").content.decode()


def _talk_between_students(state: GameState, step: NextStep) -> bool:
    convos = state.round2.conversations
    return bool(convos) and convos[-1].partner in state.humans and convos[-1].phase == "CLOSED"


def test_a_talk_between_two_students_is_hidden_from_the_third_and_from_every_ai_prompt() -> None:
    _, _, clients, games = _group_game(3, 3)
    game = _play_until(games[0], _talk_between_students)
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
    game = _play_until(game, lambda state, step: False)  # to the end: every AI call of the game on record
    assert game.phase == "REVIEW"
    private = {e.seq for e in said}
    calls = list(game.model_calls.exclude(role__in=parties).exclude(role=""))
    assert len(calls) > 20
    assert all(not private & set(call.context) for call in calls)  # no seat's prompt held the pair's words
    heard = [c for c in game.model_calls.filter(role__in=parties) if private & set(c.context)]
    assert not heard  # the students' seats are played by them: the AI never spoke for them
    texts = list(game.entries.values_list("text", flat=True))
    for seat, name in holders.items():  # the finished game's review and downloads, read by each student
        review = clients[name].get(f"/games/{game.pk}/review/").content.decode()
        exported = clients[name].get(f"/games/{game.pk}/export.json").json()["transcript"]
        markdown = clients[name].get(f"/games/{game.pk}/export.md").content.decode()
        for found in (
            [f'id="entry-{e.seq}"' in review for e in said],
            [any(row["seq"] == e.seq for row in exported) for e in said],
            [e.text in markdown for e in said if texts.count(e.text) == 1],  # a bot may say it in two talks
        ):
            assert all(found) if seat in parties else not any(found), (name, seat, found)
