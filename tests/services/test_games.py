from __future__ import annotations

import pytest

from simulations.engine.errors import IllegalEvent, InvalidMove
from simulations.kinds.negotiation import machine, prompts
from simulations.kinds.negotiation.games import scenario_of_version, state_of
from simulations.models import AppendOnlyError, Checkpoint, Event, Game, ModelCall, TranscriptEntry, Vote
from simulations.services.ledger.checkpoints import state_at
from simulations.services.ledger.turns import StaleTurn, commit_event, create_game
from tests.helpers import mercury_version, played

pytestmark = pytest.mark.django_db


def test_a_new_game_waits_for_role_selection_with_a_checkpoint() -> None:
    game = create_game(scenario_version=mercury_version(), seed=3)
    assert game.phase == "ROLE_SELECTION" and game.version == 1
    assert list(Event.objects.filter(game=game).values_list("name", flat=True)) == ["NEW_GAME_CREATED"]
    assert state_at(Checkpoint.objects.get(game=game)) == game.state


def test_role_confirmation_commits_setup_and_round_1_in_one_turn() -> None:
    game = create_game(scenario_version=mercury_version(), seed=3)
    game = commit_event(game_id=game.pk, expected_version=1, event="ROLE_CONFIRMED", payload={"role": "CHN"})
    assert game.phase == "ROUND_1_OPENING_STATEMENTS" and game.version == 2
    names = list(Event.objects.filter(game=game).values_list("name", flat=True))
    assert names == ["NEW_GAME_CREATED", "ROLE_CONFIRMED", "ROUND_1_READY"]
    assert TranscriptEntry.objects.filter(game=game, kind="chair").count() == 1
    checkpoint = Checkpoint.objects.filter(game=game).order_by("-seq").first()
    assert checkpoint is not None and state_at(checkpoint)["round1"]["speaker_order"]
    assert checkpoint.transcript_seq == 1 and checkpoint.after_event == 3


def test_illegal_events_write_nothing() -> None:
    game = create_game(scenario_version=mercury_version(), seed=3)
    before = (TranscriptEntry.objects.count(), Event.objects.count(), Checkpoint.objects.count())
    with pytest.raises(IllegalEvent):
        commit_event(game_id=game.pk, expected_version=1, event="HUMAN_VOTE_CAST", payload={"ballot": "yes"})
    with pytest.raises(InvalidMove):
        commit_event(game_id=game.pk, expected_version=1, event="ROLE_CONFIRMED", payload={"role": "JPN"})
    game.refresh_from_db()
    assert game.version == 1 and game.phase == "ROLE_SELECTION"
    assert (TranscriptEntry.objects.count(), Event.objects.count(), Checkpoint.objects.count()) == before


def test_a_stale_turn_is_refused() -> None:
    game = create_game(scenario_version=mercury_version(), seed=3)
    commit_event(game_id=game.pk, expected_version=1, event="ROLE_CONFIRMED", payload={"role": "EU"})
    with pytest.raises(StaleTurn, match="This turn was already played; the game has moved on."):
        commit_event(game_id=game.pk, expected_version=1, event="ROLE_CONFIRMED", payload={"role": "EU"})


def test_a_whole_game_keeps_its_ledger_consistent() -> None:
    game = played("TZA", "advocate", seed=9)
    assert game.phase == "REVIEW" and game.status == Game.Status.FINISHED and game.finished_at
    entries = list(TranscriptEntry.objects.filter(game=game).order_by("seq"))
    assert [e.seq for e in entries] == list(range(1, len(entries) + 1))
    events = list(Event.objects.filter(game=game).order_by("seq"))
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    for a, b in zip(events, events[1:], strict=False):
        assert a.to_state == b.from_state
    checkpoints = list(Checkpoint.objects.filter(game=game).order_by("seq"))
    assert len(checkpoints) == game.version
    assert state_at(checkpoints[-1]) == game.state and checkpoints[-1].transcript_seq == entries[-1].seq
    # Every checkpoint sits at a turn boundary: the next step is never an automatic system event.
    scenario = scenario_of_version(game.scenario)
    for checkpoint in checkpoints:
        step = machine.next_step(scenario, machine.resume(scenario, state_at(checkpoint)))
        assert step.kind != "system"
    votes = list(Vote.objects.filter(game=game).order_by("issue"))
    assert [v.issue for v in votes] == ["1", "2", "3", "4"]
    assert all(set(v.ballots) == {"BRA", "CAN", "CHN", "EU", "TZA", "USA"} for v in votes)
    assert state_of(game).summary


def test_no_model_call_in_round_1_and_one_per_ai_turn() -> None:
    game = played("USA", "advocate", seed=4)
    calls = list(ModelCall.objects.filter(game=game))
    assert not [c for c in calls if c.phase.startswith("ROUND_1")]
    ai_texts = TranscriptEntry.objects.filter(game=game, kind__in=["message", "speech"]).exclude(
        speaker="USA"
    )
    ai_passes = Event.objects.filter(game=game, name="AI_TURN_SKIPPED").count()
    # One call per AI message or speech, one per AI pass (the seat's model chose to pass), one debrief.
    assert len([c for c in calls if c.purpose != "summary"]) == ai_texts.count() + ai_passes
    assert ai_passes > 0
    assert [c.purpose for c in calls].count("summary") == 1
    for call in calls:
        assert call.status == "ok" and call.prompt_tokens > 0 and call.completion_tokens > 0
        assert call.prompt_version == prompts.prompt_version() and call.model == "mercury-offline/default"


def test_private_talks_stay_private() -> None:
    game = played("BRA", "advocate", seed=2)
    private = TranscriptEntry.objects.filter(game=game, visibility="private")
    assert private.exists()
    partners = {c["partner"] for c in game.state["round2"]["conversations"]}
    for entry in private:
        assert entry.round == 2 and len(entry.audience) == 2 and "BRA" in entry.audience
        assert set(entry.audience) - {"BRA"} <= partners
    # An AI call's context never includes a private entry its role was not part of.
    private_seqs = {e.seq: set(e.audience) for e in private}
    for call in ModelCall.objects.filter(game=game).exclude(purpose="summary"):
        for seq in call.context:
            if seq in private_seqs:
                assert call.role in private_seqs[seq]


def test_ledger_rows_are_append_only() -> None:
    game = played("MFF", seed=1)
    entry = TranscriptEntry.objects.filter(game=game).first()
    assert entry is not None
    entry.text = "rewritten"
    with pytest.raises(AppendOnlyError):
        entry.save()
    event = Event.objects.filter(game=game).first()
    assert event is not None
    with pytest.raises(AppendOnlyError):
        event.save()
