"""Checkpoints as keyframes and changes (services/ledger/checkpoints.py): exact, small, and cheap to restore."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simulations.kinds.negotiation.fork import fork_at_checkpoint
from simulations.models import Checkpoint
from simulations.services.ledger.checkpoints import KEYFRAME_EVERY, apply_changes, changes_between, state_at
from simulations.services.ledger.resume import resume_game
from tests.helpers import played

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=2), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(before=json_values, after=json_values)
@example(before=[[True, False]], after=[[True, False], None])  # a list that grew, at the document's root
@example(before={"a": [1, 2]}, after={"a": [1.0, 2]})  # equal to Python, not as JSON
@example(before={"a": {"b": True}}, after={"a": {"b": 1}})
@example(before=[[1], [2], 3], after=[[1], [0], 3, 4])  # a list that grew while one of its items changed
def test_the_changes_between_two_documents_rebuild_the_second_exactly(before: Any, after: Any) -> None:
    ops = changes_between(before, after)
    rebuilt = apply_changes(before, ops)
    assert json.dumps(rebuilt, sort_keys=True) == json.dumps(after, sort_keys=True)  # types too: 1 is not 1.0
    assert (ops == []) == (json.dumps(before, sort_keys=True) == json.dumps(after, sort_keys=True))
    json.dumps(ops)  # storable as JSON


def test_equal_documents_keyed_in_another_order_or_holding_other_values_are_still_equal() -> None:
    """The diff tells equal subtrees by their marshal encodings first; where those differ or cannot be made, the
    types are walked: keys in another order (jsonb's) and values marshal cannot write change nothing."""
    moment = datetime.date(2026, 11, 28)
    assert changes_between({"a": {"x": 1, "yy": [1.0]}}, {"a": {"yy": [1.0], "x": 1}}) == []
    assert changes_between({"a": [moment]}, {"a": [moment], "b": 2}) == [["set", ["b"], 2]]
    assert changes_between({"a": {"x": 1}}, {"a": {"x": True}}) == [["set", ["a", "x"], True]]


def test_a_list_that_grew_while_a_few_of_its_items_changed_stores_those_changes_not_the_list() -> None:
    """A feed's round: a new post, and a like on an old one. Item by item, then the new items; a list whose old
    items mostly changed (shifted by an insertion at the front) is stored whole, which costs less."""
    posts = [{"id": n, "text": f"post {n} " * 20, "likes": 0} for n in range(50)]
    grown = [*(dict(p, likes=1) if p["id"] == 7 else p for p in posts), {"id": 50, "text": "new", "likes": 0}]
    ops = changes_between({"posts": posts}, {"posts": grown})
    assert ops == [["set", ["posts", 7, "likes"], 1], ["add", ["posts"], [grown[-1]]]]
    assert apply_changes({"posts": posts}, ops) == {"posts": grown}
    shifted = [{"id": -1, "text": "first", "likes": 0}, *posts]
    assert changes_between({"posts": posts}, {"posts": shifted}) == [["set", ["posts"], shifted]]


def test_applying_changes_leaves_the_earlier_state_untouched() -> None:
    before = {"a": [1, 2], "b": {"c": 1}}
    after = apply_changes(before, changes_between(before, {"a": [1, 2, 3], "b": {"c": 2}}))
    assert before == {"a": [1, 2], "b": {"c": 1}} and after == {"a": [1, 2, 3], "b": {"c": 2}}


@pytest.mark.django_db
def test_a_finished_game_stores_a_fifth_of_its_whole_states_and_every_checkpoint_restores_exactly() -> None:
    game = played("USA", "advocate", seed=3)
    rows = list(Checkpoint.objects.filter(game=game).order_by("seq"))
    assert len(rows) > 3 * KEYFRAME_EVERY  # a whole game spans several keyframes
    assert [r.seq for r in rows if r.state is not None] == list(range(1, len(rows) + 1, KEYFRAME_EVERY))
    states = [state_at(r) for r in rows]
    assert states[-1] == game.state
    for earlier, later in zip(states, states[1:], strict=False):
        assert earlier != later  # every checkpoint is a turn that changed something
    size = lambda value: len(json.dumps(value, separators=(",", ":")))  # noqa: E731
    stored = sum(size(r.state) if r.state is not None else size(r.changes) for r in rows)
    whole = sum(size(s) for s in states)
    assert stored * 5 <= whole, f"{stored} bytes stored for {whole} bytes of whole states"


@pytest.mark.django_db
def test_restoring_the_last_checkpoint_reads_one_query_of_at_most_a_keyframe_span() -> None:
    game = played("EU", "passive", seed=4)
    last = Checkpoint.objects.filter(game=game).order_by("-seq").first()
    assert last is not None and last.state is None  # the worst case: changes on top of a keyframe
    with CaptureQueriesContext(connection) as queries:
        state = state_at(last)
    assert len(queries) == 1 and state == game.state
    rows = Checkpoint.objects.filter(game=game, seq__gte=last.seq - (last.seq - 1) % KEYFRAME_EVERY)
    assert rows.count() <= KEYFRAME_EVERY
    resume_game(game_id=game.pk)


@pytest.mark.django_db
def test_a_fork_between_keyframes_starts_from_the_state_its_checkpoint_stands_for() -> None:
    game = played("BRA", "passive", seed=2)
    middle = Checkpoint.objects.get(game=game, seq=KEYFRAME_EVERY + 5)
    assert middle.state is None
    fork = fork_at_checkpoint(checkpoint=middle)
    assert fork.state == state_at(middle) and fork.version == middle.seq
    assert fork.checkpoints.count() == middle.seq
    resume_game(game_id=fork.pk)  # the fork's rows rebuild the same state
