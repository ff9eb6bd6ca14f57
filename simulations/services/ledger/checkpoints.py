"""Checkpoints stored as keyframes and changes: a whole state every KEYFRAME_EVERY checkpoints, between them only
what the turn changed.

A finished Mercury game has some 130 checkpoints of up to 15 KB of state each; one turn changes a few hundred
bytes of it. Keyframes every 16 and changes between them cost about a tenth of storing each checkpoint whole
(`bench/storage.py`; docs/benchmarks.md). Any checkpoint's state is its keyframe plus at most
KEYFRAME_EVERY - 1 changes, so restoring one (resume, a fork at any turn) costs the same at turn 10 as at turn
130. The game's row keeps the latest state whole, as before.

A change is a list of operations, each a JSON array (the ledger stays readable in the admin):
- ``["set", path, value]``: the value at `path` (a list of keys and list indexes) becomes `value`;
- ``["del", path]``: the key at `path` goes;
- ``["add", path, items]``: `items` are appended to the list at `path` (a list that grew; changes to the items it
  had come before it, as operations of their own).
"""

from __future__ import annotations

import marshal
from typing import Any

from simulations.models import Checkpoint

KEYFRAME_EVERY = 16

Path = tuple[str | int, ...]


def is_keyframe(seq: int) -> bool:
    """Checkpoint 1 is whole, then every KEYFRAME_EVERY-th: 1, 17, 33, ..."""
    return (seq - 1) % KEYFRAME_EVERY == 0


def changes_between(before: Any, after: Any, path: Path = ()) -> list[list[Any]]:
    """The operations that turn `before` into `after` (an empty list when they are equal)."""
    if isinstance(before, dict) and isinstance(after, dict):
        ops: list[list[Any]] = [["del", [*path, k]] for k in before if k not in after]
        for key, value in after.items():
            if key not in before:
                ops.append(["set", [*path, key], value])
            elif not same(before[key], value):
                ops.extend(changes_between(before[key], value, (*path, key)))
        return ops
    if isinstance(before, list) and isinstance(after, list):
        if len(after) > len(before) and same(after[: len(before)], before):
            return [["add", list(path), after[len(before) :]]]
        if len(after) == len(before):
            return [
                op
                for i, (b, a) in enumerate(zip(before, after, strict=True))
                for op in changes_between(b, a, (*path, i))
            ]
        if len(after) > len(before):
            # The items it had, item by item, then the new ones: a feed's posts gain posts and change their counts
            # in one round, and storing the list whole would store every post again. A list whose old items mostly
            # changed (shifted by an insertion, say) is stored whole: item by item would cost more.
            changed = [
                changes_between(b, a, (*path, i))
                for i, (b, a) in enumerate(zip(before, after[: len(before)], strict=True))
            ]
            if 2 * sum(1 for ops in changed if ops) <= len(before):
                return [*(op for ops in changed for op in ops), ["add", list(path), after[len(before) :]]]
    return [] if same(before, after) else [["set", list(path), after]]


def same(a: Any, b: Any) -> bool:
    """Equal as JSON documents: Python's == takes 1, 1.0 and True for one value, JSON (and a rebuilt state)
    does not. Python's own comparison first (fast, in C). Where it says equal, equal `marshal` encodings settle it,
    in C too: they tell 1, 1.0 and True apart (version 2 has no back-references, so equal documents built from
    different objects encode alike). They also follow key order, so where they differ (a state read back from
    PostgreSQL's jsonb has its keys in another order) the types are walked in Python. A commit diffs two
    consecutive states this way, so the common case stays in C."""
    return a == b and (_encoded_alike(a, b) or _same_types(a, b))


def _encoded_alike(a: Any, b: Any) -> bool:
    try:
        return marshal.dumps(a, 2) == marshal.dumps(b, 2)
    except ValueError:  # a value marshal cannot write (states are JSON, so none today): the walk decides
        return False


def _same_types(a: Any, b: Any) -> bool:
    """Precondition: a == b. Scalars are compared in the loop, not by a call each: a state is mostly lists and
    dicts of strings and numbers, and a call per value was a tenth of a headless game's CPU (cProfile)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        pairs: Any = ((v, b[k]) for k, v in a.items())
    elif isinstance(a, list):
        pairs = zip(a, b, strict=True)  # equal lists: of one length
    else:
        return True
    for x, y in pairs:
        kind = type(x)
        if kind is not type(y):
            return False
        if isinstance(x, (dict, list)) and not _same_types(x, y):
            return False
    return True


def apply_changes(state: Any, ops: list[list[Any]]) -> Any:
    """`state` with `ops` applied; neither argument is changed."""
    import copy

    return _apply_in_place(copy.deepcopy(state), copy.deepcopy(ops))


def _apply_in_place(state: Any, ops: list[list[Any]]) -> Any:
    """Apply `ops` to `state`, reusing both (rows freshly read from the database need no copy)."""
    for op in ops:
        kind, path = op[0], op[1]
        if not path:  # the document itself: replaced, or (a list) grown
            if kind == "add":
                state.extend(op[2])
            else:
                state = op[2]
            continue
        parent = state
        for key in path[:-1]:
            parent = parent[key]
        last = path[-1]
        if kind == "set":
            parent[last] = op[2]
        elif kind == "del":
            del parent[last]
        elif kind == "add":
            parent[last].extend(op[2])
        else:
            raise ValueError(f"unknown checkpoint operation {kind!r}")
    return state


def stored_fields(*, seq: int, before: dict[str, Any] | None, after: dict[str, Any]) -> dict[str, Any]:
    """What a new checkpoint row stores: the whole state at a keyframe (or with nothing before it), else the
    changes from the state before."""
    if before is None or is_keyframe(seq):
        return {"state": after, "changes": None}
    return {"state": None, "changes": changes_between(before, after)}


def state_at(checkpoint: Checkpoint) -> dict[str, Any]:
    """The whole state a checkpoint stands for: its keyframe with the changes up to it applied."""
    if checkpoint.state is not None:
        return checkpoint.state
    rows = list(
        Checkpoint.objects.filter(game_id=checkpoint.game_id, seq__lte=checkpoint.seq)
        .filter(seq__gte=_keyframe_floor(checkpoint))
        .order_by("seq")
        .values_list("seq", "state", "changes")
    )
    keyframes = [i for i, (_, state, _) in enumerate(rows) if state is not None]
    if not keyframes:
        raise LookupError(
            f"checkpoint {checkpoint.seq} of game {checkpoint.game_id} has no keyframe before it"
        )
    start = keyframes[-1]
    state = rows[start][1]
    assert isinstance(state, dict)  # a keyframe row holds a whole state
    for _, _, changes in rows[start + 1 :]:
        state = _apply_in_place(state, changes or [])  # fresh from the query: nobody else holds them
    return state


def _keyframe_floor(checkpoint: Checkpoint) -> int:
    """The seq of the keyframe scheduled at or before `checkpoint` (rows are never read further back)."""
    return checkpoint.seq - (checkpoint.seq - 1) % KEYFRAME_EVERY
