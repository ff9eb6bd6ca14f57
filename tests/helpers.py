"""Helpers for database-level tests: load the scenario, play games, normalise exports."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User
from django.test import Client

from simulations.kinds import NextStep
from simulations.kinds.negotiation.bots import BySeat, make_policy, own_talks
from simulations.kinds.negotiation.games import state_of, step_of
from simulations.kinds.negotiation.headless import play_game, student
from simulations.kinds.negotiation.human_turns import submit_human_event
from simulations.kinds.negotiation.state import GameState
from simulations.models import Game, ScenarioVersion
from simulations.services.content.model_choice import pinned_fields
from simulations.services.content.scenarios import load_scenario
from simulations.services.files.export import export_game
from simulations.services.ledger.turns import create_game
from simulations.services.play.headless import play_to_end
from tests.conftest import SCENARIO_DIR


def mercury_version() -> ScenarioVersion:
    version, _ = load_scenario(folder=SCENARIO_DIR)
    return version


def played(role: str, human: str = "passive", seed: int = 5) -> Game:
    game = create_game(scenario_version=mercury_version(), seed=seed)
    return play_game(game_id=game.pk, policy=make_policy(human, role))


def normalised(game: Game) -> dict[str, Any]:
    """The export without ids and timestamps: what must be equal between replays of the same game."""
    data = export_game(game=Game.objects.get(pk=game.pk))
    data["game"] = {k: v for k, v in data["game"].items() if k not in ("id", "created_at", "finished_at")}
    return data


class _Stop(Exception):
    pass


def _passive_until(stop: Callable[[Game], bool], *, seed: int, role: str, owner: User | None = None) -> Game:
    """A passive game played until `stop` holds for it (before the step it would play next)."""
    game = create_game(scenario_version=mercury_version(), seed=seed, owner=owner)

    def check(g: Game, what: str) -> None:
        if stop(g):
            raise _Stop

    try:
        play_game(game_id=game.pk, policy=make_policy("passive", role), on_progress=check)
    except _Stop:
        game.refresh_from_db()
        return game
    raise AssertionError("the game finished before it got there")


def game_at_first_ai_turn(*, seed: int, owner: User | None = None, role: str = "EU") -> Game:
    """A passive game played up to its first AI turn (the first talk partner speaks first)."""
    return _passive_until(lambda g: step_of(g).kind == "ai", seed=seed, role=role, owner=owner)


def game_at_the_first_debate(*, seed: int = 5, role: str = "EU") -> Game:
    """A passive game played up to the first AI speech of the first issue's debate: many AI steps follow."""
    return _passive_until(
        lambda g: g.phase == "ISSUE_DEBATE_ROUND_1" and step_of(g).kind == "ai", seed=seed, role=role
    )


def repin(game: Game) -> Game:
    """Pin `game` to the settings' model as they are now, as if it had been started with it (games keep the
    model they started with, so a test that changes the model mid-game must say so)."""
    Game.objects.filter(pk=game.pk).update(**pinned_fields(None))
    game.refresh_from_db()
    return game


def game_in_private_talk(
    client: Client, owner: User, *, role: str = "CAN", partner: str = "AMAP", seed: int = 4
) -> Game:
    """A game started through the page's moves (as `client`, logged in as `owner`) up to the student's first
    message of a private talk they open: no model call on the way."""
    game = create_game(scenario_version=mercury_version(), seed=seed, owner=owner)
    client.post(f"/games/{game.pk}/move/", {"event": "ROLE_CONFIRMED", "role": role, "version": 1})
    game.refresh_from_db()
    while game.phase == "ROUND_1_OPENING_STATEMENTS":
        client.post(f"/games/{game.pk}/move/", {"event": "OPENING_PRESENTED", "version": game.version})
        game.refresh_from_db()
    client.post(
        f"/games/{game.pk}/move/",
        {"event": "CONVO_1_STARTED", "partner": partner, "starter": "human", "version": game.version},
    )
    game.refresh_from_db()
    assert game.phase == "ROUND_2_CONVERSATION_ACTIVE"
    return game


class _GroupStop(Exception):
    pass


def play_group_until(game: Game, stop: Callable[[GameState, NextStep], bool]) -> Game:
    """Every seat played by an advocate bot (the AI by the offline model) until `stop` holds before a move; the
    first student's first talk is with the second student (in Round 2's lanes, the first move of the round)."""
    bot = student(game, BySeat([make_policy("advocate", seat) for seat in state_of(game).humans]))

    def move(played: Game, step: NextStep, failure: BaseException | None) -> Game:
        state = state_of(played)
        if stop(state, step):
            raise _GroupStop
        first, second = state.humans[:2]
        if step.detail.purpose == "partner" and step.detail.role == first and not own_talks(state, first):
            partner = {"partner": second, "starter": "human"}
            return submit_human_event(game=played, event="CONVO_1_STARTED", payload=partner)
        return bot(played, step, failure)

    try:
        return play_to_end(game, bot=move)
    except _GroupStop:
        return Game.objects.select_related("scenario").get(pk=game.pk)


PASSWORD = "a-long-test-passphrase-42"


def logged_in(name: str, *, staff: bool = False) -> tuple[User, Client]:
    """A student, or with `staff` a teacher: staff in the Teachers group (who read only their classes' games)."""
    from django.contrib.auth.models import Group

    from simulations.services.people.access import TEACHERS

    user = User.objects.create_user(name, password=PASSWORD, is_staff=staff)
    if staff:
        user.groups.add(Group.objects.get_or_create(name=TEACHERS)[0])
    client = Client()
    client.force_login(user)
    return user, client
