"""Determinism and resume parity on whole games, through the database and the offline model."""

from __future__ import annotations

import contextlib

import pytest

from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.fork import fork_at_checkpoint
from simulations.kinds.negotiation.games import state_of
from simulations.kinds.negotiation.headless import play_game
from simulations.models import Checkpoint, Game
from simulations.services.ledger.checkpoints import state_at
from simulations.services.ledger.resume import resume_game
from tests.helpers import normalised, played

pytestmark = pytest.mark.django_db


def test_same_seed_and_inputs_give_the_same_game() -> None:
    first, second = played("CAN", "advocate", seed=21), played("CAN", "advocate", seed=21)
    assert first.pk != second.pk
    assert normalised(first) == normalised(second)
    other = played("CAN", "advocate", seed=22)
    assert normalised(other)["transcript"] != normalised(first)["transcript"]


def _continue_one_turn(fork: Game, policy_role: str, human: str) -> Game:
    class OneTurn(Exception):
        pass

    def stop(game: Game, what: str) -> None:
        raise OneTurn

    with contextlib.suppress(OneTurn):
        play_game(game_id=fork.pk, policy=make_policy(human, policy_role), on_progress=stop)
    return Game.objects.get(pk=fork.pk)


def test_resuming_from_every_checkpoint_continues_exactly_as_the_original() -> None:
    """Induction over the game: from every checkpoint, a resumed fork's next turn equals the original's next
    checkpoint; and from a spread of checkpoints, the fork plays to the same final export."""
    original = played("EU", "advocate", seed=13)
    checkpoints = list(Checkpoint.objects.filter(game=original).order_by("seq"))
    for k, checkpoint in enumerate(checkpoints[:-1]):
        fork = _continue_one_turn(fork_at_checkpoint(checkpoint=checkpoint), "EU", "advocate")
        expected = checkpoints[k + 1]
        assert fork.state == state_at(expected), f"diverged after checkpoint {checkpoint.seq}"
        assert fork.version == expected.seq
    final = normalised(original)
    for checkpoint in checkpoints[:: max(1, len(checkpoints) // 6)]:
        fork = fork_at_checkpoint(checkpoint=checkpoint)
        resumed = play_game(game_id=fork.pk, policy=make_policy("advocate", "EU"))
        assert normalised(resumed) == final, (
            f"final export differs when resuming at checkpoint {checkpoint.seq}"
        )


def test_resume_refuses_a_ledger_that_disagrees_with_the_checkpoint() -> None:
    game = played("AMAP", seed=3)
    resumed, state = resume_game(game_id=game.pk)
    assert state == state_of(game)
    Game.objects.filter(pk=game.pk).update(state={**game.state, "transcript_seq": 1})
    with pytest.raises(Exception, match="does not match its latest checkpoint"):
        resume_game(game_id=game.pk)
