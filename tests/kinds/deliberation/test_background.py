"""Finding 7 (issue #64): a deliberation started and played with plain HTML form posts (no JavaScript, so no
websocket to drive it) reaches its verdict: the set-up and each move queue the game's background drive, as the
other kinds' pages do. Real parts: django-tasks' database queue and its worker (the embedded threads), the
offline model, the real tools."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from simulations.driving.embedded import start_embedded_workers
from simulations.kinds import Actor, kind_of
from simulations.kinds.deliberation.games import state_of
from simulations.kinds.deliberation.state import Verdict
from simulations.models import Event, Game
from simulations.services.content.scenarios import load_scenarios

from .test_pages import PASSWORD, panel

pytestmark = [pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[3]

# What the person posts in each kind of turn the page can offer them.
ANSWERS = {
    "opinion": {"event": "OPINION_GIVEN", "stance": "SYNTHESIS", "confidence": "0.9", "text": "Fine by me."},
    "amend": {"event": "AMENDMENT_DECLINED", "text": "Not in this release."},
    "compromise": {"event": "COMPROMISE_DECLINED", "text": "No compromise."},
}


def _wait_for(check: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "nobody drove the deliberation: no background drive was queued"
        time.sleep(0.05)


def _actor(game_id: int) -> Actor:
    game = Game.objects.select_related("scenario").get(pk=game_id)
    return kind_of(game).next_step(game).actor


def test_a_deliberation_played_with_plain_form_posts_reaches_its_verdict_without_a_websocket() -> None:
    ((version, _),) = load_scenarios(path=ROOT / "scenarios" / "deliberation")
    client = Client()
    client.force_login(User.objects.create_user("reviewer", password=PASSWORD))
    start_embedded_workers(count=1)  # as the server's own worker; no page ever connects a websocket here
    response = client.post(
        f"/deliberation/new/{version.pk}/", {"source": "sample", "sample": "secret", "seat": "security"}
    )
    assert response.status_code == 302
    game_id = int(response["Location"].strip("/").split("/")[-1])
    # The operations manager speaks before the security lead: the queue's worker plays that turn, page or no page
    # (by now, or soon: asking who holds the floor right after the post would race the worker).
    _wait_for(lambda: _actor(game_id) is not Actor.AI)
    assert Event.objects.filter(game_id=game_id, name="OPINION_GIVEN").exists()
    moves = 0
    while True:
        _wait_for(lambda: _actor(game_id) is not Actor.AI)
        if _actor(game_id) is Actor.DONE:
            break
        shown = panel(client.get(f"/games/{game_id}/").content.decode())  # what a reload shows the person
        answer = ANSWERS[shown["action"]] | {"version": shown["version"], "idem": f"k{shown['version']}"}
        response = client.post(f"/games/{game_id}/move/", answer)  # a plain post: no HX-Request header
        assert response.status_code == 302 and response["Location"] == f"/games/{game_id}/"
        moves += 1
    state = state_of(Game.objects.get(pk=game_id))
    # The planted secret is vetoed, the AI proposer amends, the amended code is approved in round 2.
    assert (state.verdict, state.round, moves) == (Verdict.APPROVED, 2, 2)
    assert panel(client.get(f"/games/{game_id}/").content.decode())["action"] == "review"
    drives = DBTaskResult.objects.filter(args_kwargs__kwargs__game_id=game_id)
    assert drives.filter(status=TaskResultStatus.SUCCESSFUL).exists()  # played by the queue's worker
    assert not drives.filter(status=TaskResultStatus.FAILED).exists()
