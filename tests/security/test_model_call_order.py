"""Finding 1: cheap checks (length, version, a used key, a copy of the move already being judged) come before any
judge call; every model call made is recorded and charged to the game's budget, whether or not its move commits.
Real model strings, answered by litellm's own mock_response; a wrapper counts every call litellm receives."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from simulations.kinds.negotiation.games import step_of
from simulations.kinds.negotiation.human_turns import submit_human_event
from simulations.kinds.negotiation.turns import play_ai_step
from simulations.models import Event, Game, ModelCall
from simulations.services.ledger.turns import StaleTurn
from simulations.services.play.budget import BudgetExhausted, check_budget
from tests.helpers import game_at_first_ai_turn

JUDGE_PROMPT = "You read one message"
JUDGE_ANSWER = '{"support": {"2": ["2.1"]}}'


class Counting:
    """litellm.completion answered by mock_response after `latency` seconds; counts every call by purpose."""

    def __init__(self, latency: float) -> None:
        self.latency, self.lock = latency, threading.Lock()
        self.judge = self.turns = 0

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import litellm

        original = litellm.completion

        def completion(*args: Any, **kwargs: Any) -> Any:
            judging = kwargs["messages"][0]["content"].startswith(JUDGE_PROMPT)
            with self.lock:
                if judging:
                    self.judge += 1
                else:
                    self.turns += 1
            time.sleep(self.latency)
            answer = JUDGE_ANSWER if judging else "We can support 2.1 if financing is offered."
            return original(*args, mock_response=answer, **kwargs)

        monkeypatch.setattr(litellm, "completion", completion)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Counting:
    counter = Counting(latency=0.3)
    counter.install(monkeypatch)
    settings.MERCURY_MODEL = "openai/gpt-4o-mini"
    return counter


def _students_turn(owner: User | None = None) -> Game:
    game = game_at_first_ai_turn(seed=12, owner=owner)
    game = play_ai_step(game=game, step=step_of(game))  # the partner speaks; the student's message is next
    assert "HUMAN_MESSAGE_SUBMITTED" in step_of(game).events
    return game


def _judge_rows(game: Game) -> int:
    return ModelCall.objects.filter(game=game, purpose="judge").count()


@pytest.mark.django_db(transaction=True)
def test_concurrent_copies_of_a_move_make_one_judge_call_and_every_call_is_recorded(
    counting: Counting,
) -> None:
    game = _students_turn()
    version, before = game.version, counting.judge
    recorded_before = _judge_rows(game)

    def submit(n: int) -> str:
        try:
            submit_human_event(
                game=Game.objects.get(pk=game.pk), event="HUMAN_MESSAGE_SUBMITTED",
                payload={"text": "We support 2.1."}, expected_version=version, idempotency_key=f"tab-{n % 2}",
            )  # fmt: skip
            return "committed"
        except StaleTurn:
            return "refused"
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(submit, range(20)))
    assert outcomes.count("committed") == 1
    assert Event.objects.filter(game=game, name="HUMAN_MESSAGE_SUBMITTED").count() == 1
    assert counting.judge - before == 1  # the copies were refused before their model call
    assert _judge_rows(game) - recorded_before == counting.judge - before


@pytest.mark.django_db(transaction=True)  # the model call runs on a worker thread, which must see the game
def test_a_judge_call_whose_move_does_not_commit_is_still_recorded_and_charged(
    counting: Counting, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge is called, then another copy of the move commits first (here: a commit made during the call)."""
    import litellm

    game = _students_turn()
    version, made, answering = game.version, counting.judge, litellm.completion

    def commit_meanwhile(*args: Any, **kwargs: Any) -> Any:
        result = answering(*args, **kwargs)
        if kwargs["messages"][0]["content"].startswith(JUDGE_PROMPT):
            Game.objects.filter(pk=game.pk).update(version=version + 1)  # as if another process committed
        connection.close()
        return result

    monkeypatch.setattr(litellm, "completion", commit_meanwhile)
    with pytest.raises(StaleTurn):
        submit_human_event(game=game, event="HUMAN_MESSAGE_SUBMITTED", payload={"text": "We support 2.1."})
    assert counting.judge == made + 1
    lost = ModelCall.objects.filter(game=game, purpose="judge", event_seq=None).get()
    assert lost.status == "error" and lost.error.startswith("not committed") and lost.prompt_tokens > 0
    used = sum(m.prompt_tokens + m.completion_tokens for m in ModelCall.objects.filter(game=game))
    with pytest.MonkeyPatch.context() as patch:
        from django.conf import settings

        patch.setattr(
            settings, "MERCURY_MAX_TOKENS_PER_GAME", used - lost.prompt_tokens - lost.completion_tokens + 1
        )
        with pytest.raises(
            BudgetExhausted
        ):  # the unused call counts: without it the budget would not be spent
            check_budget(game)


@pytest.mark.django_db
def test_an_ai_turn_that_loses_the_race_still_records_its_calls(counting: Counting) -> None:
    game = game_at_first_ai_turn(seed=12)
    stale = Game.objects.get(pk=game.pk)
    play_ai_step(game=game, step=step_of(game))  # one driver commits the turn
    rows = ModelCall.objects.filter(game=game).count()
    made = counting.turns + counting.judge
    with pytest.raises(StaleTurn):
        play_ai_step(game=stale, step=step_of(stale))  # a second driver had started the same turn
    assert counting.turns + counting.judge - made == 2  # the seat's answer and the judge's reading
    assert ModelCall.objects.filter(game=game).count() == rows + 2
    assert set(ModelCall.objects.filter(game=game, event_seq=None).values_list("purpose", flat=True)) == {
        "judge",
        step_of(stale).purpose,
    }


@pytest.mark.django_db
@pytest.mark.parametrize(
    "form",
    [
        {"text": "x" * 2_400_000},  # the 2.4 MB message: refused on length, never sent to a model
        {"text": "x" * 2001},
        {"text": "We support 2.1.", "version": "stale"},
        {"text": "We support 2.1.", "version": None},
        {"text": "\u200b\u200b"},
        {"text": "We support 2.1.\x00"},
    ],
)
def test_a_move_refused_by_a_cheap_check_makes_no_model_call(
    counting: Counting, form: dict[str, Any]
) -> None:
    owner = User.objects.create_user("o", password="a-long-test-passphrase-42")
    game = _students_turn(owner)
    client = Client()
    client.force_login(owner)
    made = counting.judge + counting.turns
    post = {"event": "HUMAN_MESSAGE_SUBMITTED", "version": str(game.version), **form}
    post = {k: v for k, v in post.items() if v is not None}
    if post.get("version") == "stale":
        post["version"] = str(game.version - 1)
    response = client.post(f"/games/{game.pk}/move/", post, HTTP_HX_REQUEST="true")
    assert response.status_code in (400, 409)
    assert counting.judge + counting.turns == made
    assert Game.objects.get(pk=game.pk).version == game.version
