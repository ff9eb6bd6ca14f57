"""The contract every kind keeps with the platform (issue #65), parametrized over every registered kind and using
only the registry and the platform's services: a kind that breaks it fails here.

For each kind, its shipped scenario with its rehearsal's seat and options (made as small as the kind allows) and
its default bot, played by the offline model:
1. started and played headless to the end, the game is FINISHED and its export validates;
2. its export, imported (`services.files.import_game`), gives a game whose export is the same apart from ids and
   timestamps;
3. a game of the same seed stopped part way (a crash after a few committed steps), then resumed headless to the
   end, exports the same as the uninterrupted game apart from ids and timestamps (replay determinism).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from simulations.kinds import Seat, all_kinds, get_kind
from simulations.models import Game, ScenarioVersion
from simulations.services.content.scenarios import find_scenarios, parsed_scenario, store_scenario
from simulations.services.files.export import build_export, export_game
from simulations.services.files.import_game import import_game
from simulations.services.ledger.resume import resume_game
from simulations.services.ledger.turns import create_game
from simulations.services.play.headless import play_to_end

pytestmark = pytest.mark.django_db
SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
KINDS = sorted(kind.name for kind in all_kinds())
SEED = 5

# The smallest runs each kind allows, on top of its rehearsal's options (kinds not named keep them as they are).
SMALL: dict[str, dict[str, Any]] = {
    "message_lab": {"rounds": 2},
    "social_feed": {"agents": 0, "max_rounds": 3, "checkpoint_frequency": 1},
}
# Timestamps: wall-clock values that differ between two plays of the same game (the game's own, a social feed's
# `started_at` and its rounds' `at`), dropped by key, and any other whole ISO-8601 date-time value, blanked.
TIMESTAMPS = frozenset({"created_at", "finished_at", "started_at"})
ISO_DATETIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)?")


class _Crash(Exception):
    """The simulated crash: raised from `on_progress` once a few steps are committed."""


def _version(kind: str) -> ScenarioVersion:
    folder = SCENARIOS / ("mercury" if kind == "negotiation" else kind)
    found = [(k, s) for k, s in find_scenarios(folder) if k.name == kind]
    assert found, f"no shipped scenario of {kind}"
    return store_scenario(kind=found[0][0], source=found[0][1], origin="tests")[0]


def _start(kind: str) -> tuple[Game, str | None]:
    version = _version(kind)
    role, options = get_kind(kind).admin.rehearsal(parsed_scenario(version))
    game = create_game(scenario_version=version, seed=SEED, options={**options, **SMALL.get(kind, {})})
    return game, role


def _play(
    game: Game, role: str | None, *, resumed: bool = False, crash_after: int | None = None
) -> tuple[Game, int]:
    """Play headless as `manage.py play` does: human=None is each kind's default bot (a negotiation's passive
    student, a roleplay's seeker, the offline persona or gate-approving bot elsewhere). Returns the game and how
    many steps `on_progress` was told of; with `crash_after`, raises `_Crash` once it was told of that many."""
    steps = 0

    def progress(g: Game, what: str) -> None:
        nonlocal steps
        steps += 1
        if crash_after is not None and steps >= crash_after:
            raise _Crash

    said: list[str] = []
    bot = get_kind(game.scenario.kind).headless.bot(
        game, Seat(role=role, human=None, resumed=resumed, say=said.append)
    )
    game = play_to_end(game, bot=bot, on_progress=progress)
    return game, steps


def _without_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if k not in TIMESTAMPS}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    if isinstance(value, str) and ISO_DATETIME.fullmatch(value):
        return "<time>"
    return value


def _normalised(game: Game) -> dict[str, Any]:
    """The export as another database reads it (through JSON), without ids and timestamps."""
    data: dict[str, Any] = json.loads(json.dumps(export_game(game=Game.objects.get(pk=game.pk))))
    data["game"].pop("id")
    result: dict[str, Any] = _without_times(data)
    return result


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            if (found := _first_difference(a.get(key), b.get(key), f"{path}.{key}")) is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for n in range(max(len(a), len(b))):
            x, y = (a[n] if n < len(a) else None), (b[n] if n < len(b) else None)
            if (found := _first_difference(x, y, f"{path}[{n}]")) is not None:
                return found
        return None
    return None if a == b else f"{path}: {a!r:.200} != {b!r:.200}"


def _assert_same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a == b, _first_difference(a, b)


def _finished(kind: str) -> tuple[Game, int]:
    game, role = _start(kind)
    game, steps = _play(game, role)
    game.refresh_from_db()
    return game, steps


@pytest.mark.parametrize("kind", KINDS)
def test_a_game_played_headless_finishes_and_its_export_validates(kind: str) -> None:
    game, _ = _finished(kind)
    assert game.status == Game.Status.FINISHED
    doc = build_export(game=game)
    again = get_kind(kind).exports.export_model.model_validate(json.loads(doc.model_dump_json()))
    assert (again.kind, again.game.id, again.game.status) == (kind, game.pk, Game.Status.FINISHED)
    assert again.events and again.checkpoints


@pytest.mark.parametrize("kind", KINDS)
def test_an_export_imports_into_the_same_game(kind: str) -> None:
    original, _ = _finished(kind)
    exported: dict[str, Any] = json.loads(json.dumps(export_game(game=original)))

    imported = import_game(data=exported)

    assert imported.pk != original.pk and imported.status == Game.Status.FINISHED
    _assert_same(_normalised(imported), _normalised(original))


@pytest.mark.parametrize("kind", KINDS)
def test_a_game_resumed_after_a_crash_ends_as_an_uninterrupted_one(kind: str) -> None:
    uninterrupted, steps = _finished(kind)
    assert steps >= 2, f"on_progress was told of {steps} step(s): too few to crash between two of them"
    game, role = _start(kind)
    with pytest.raises(_Crash):
        _play(game, role, crash_after=steps // 2)  # half way
    game.refresh_from_db()
    assert game.status != Game.Status.FINISHED, "the crash came too late to interrupt the game"
    resume_game(game_id=game.pk)  # the checkpoint agrees with the ledger: the game is resumable

    resumed, _ = _play(game, game.human_role or role, resumed=True)

    resumed.refresh_from_db()
    assert resumed.status == Game.Status.FINISHED
    _assert_same(_normalised(resumed), _normalised(uninterrupted))


@pytest.mark.parametrize("kind", KINDS)
def test_the_owner_shares_a_finished_games_review_and_the_link_reads_it(kind: str) -> None:
    game, _ = _finished(kind)
    owner = User.objects.create_user(f"{kind}-owner", password="a-long-test-passphrase-42")
    Game.objects.filter(pk=game.pk).update(owner=owner)
    client = Client()
    client.force_login(owner)
    review = client.get(f"/games/{game.pk}/review/").content.decode()
    assert "Create a read-only link for an instructor" in review
    shared = client.post(f"/games/{game.pk}/share/", follow=True).content.decode()
    link = re.search(r'class="share" type="text" readonly value="([^"]+)"', shared)
    assert link is not None and "Revoke this link" in shared
    token = html.unescape(link.group(1)).split("#", 1)[1]  # after '#': the entry page's script posts it
    reader = Client()
    assert reader.get(f"/games/{game.pk}/review/").status_code in (302, 403, 404)  # not without the link
    opened = reader.post("/shared/", {"token": token}, follow=True)
    assert opened.status_code == 200 and opened.redirect_chain[-1][0] == f"/games/{game.pk}/review/"
