"""A state committed in this process is read back without decoding it again, and only while the row holds exactly
what was written (simulations/services/ledger/stored_states.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection, transaction

from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.games import CommittedState, state_of
from simulations.kinds.negotiation.headless import play_game
from simulations.models import Game
from simulations.services.ledger import stored_states
from simulations.services.ledger.turns import commit_event, create_game, load_game
from tests.helpers import game_at_first_ai_turn, mercury_version

pytestmark = pytest.mark.django_db
SQLITE = connection.vendor == "sqlite"


def _row_text(game_id: int) -> Any:
    with connection.cursor() as cursor:
        cursor.execute("SELECT state FROM simulations_game WHERE id = %s", [game_id])
        return cursor.fetchone()[0]


def _decoded_row(game_id: int) -> Any:
    text = _row_text(game_id)
    return json.loads(text) if isinstance(text, str) else text


def test_every_state_of_a_whole_game_is_read_back_as_the_row_holds_it() -> None:
    """At every step of a game: the loaded state equals the row's own decoding; on SQLite it is the very document
    the commit wrote (with its parsed object), on PostgreSQL a fresh decoding."""
    steps = []

    def check(game: Game, what: str) -> None:
        loaded = load_game(game.pk)
        assert loaded.state == _decoded_row(game.pk)
        assert (loaded.state is game.state) is SQLITE
        assert state_of(loaded) == state_of(game)
        steps.append(what)

    game = create_game(scenario_version=mercury_version(), seed=3)
    play_game(game_id=game.pk, policy=make_policy("passive", "EU"), on_progress=check)
    assert len(steps) > 50


def test_a_row_changed_behind_the_commit_is_decoded_from_the_row() -> None:
    game = create_game(scenario_version=mercury_version(), seed=1)
    changed = dict(game.state) | {"seed": game.state["seed"] + 1}  # another process's write, say
    Game.objects.filter(pk=game.pk).update(state=changed)
    loaded = load_game(game.pk)
    assert loaded.state == changed and loaded.state is not game.state
    assert type(loaded.state) is dict  # decoded, then parsed on first use


def test_a_rolled_back_commit_is_never_served() -> None:
    game = game_at_first_ai_turn(seed=2)
    before = load_game(game.pk).state
    with pytest.raises(RuntimeError), transaction.atomic():
        commit_event(
            game_id=game.pk,
            expected_version=game.version,
            event="AI_MESSAGE_COMMITTED",
            payload={"text": "We hear you."},
        )
        raise RuntimeError("the commit's transaction fails after its writes")
    loaded = load_game(game.pk)
    assert loaded.version == game.version
    assert loaded.state == before == _decoded_row(game.pk)


def test_only_documents_that_write_their_own_text_are_kept() -> None:
    game = create_game(scenario_version=mercury_version(), seed=1)
    plain = dict(game.state)
    stored_states.remember(game.pk, plain, vendor="sqlite")  # a plain dict: anyone may change it
    assert stored_states.kept(game.pk, json.dumps(plain)) is None
    document = CommittedState(game.state)
    document.parsed = state_of(game)
    stored_states.remember(game.pk, document, vendor="postgresql")  # jsonb never hands back this text
    assert stored_states.kept(game.pk, document.json_text()) is not document
    stored_states.remember(game.pk, document, vendor="sqlite")
    assert stored_states.kept(game.pk, document.json_text()) is document
    assert stored_states.kept(game.pk, document.json_text() + " ") is None
    assert stored_states.kept(game.pk + 1, document.json_text()) is None
