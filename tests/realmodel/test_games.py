"""Whole games over real HTTP against the fake OpenAI-compatible server, with a fault injected per turn.

The server's answers are a function of the prompt, so a game that recovers from every fault must end with exactly
the transcript of a clean game with the same seed: nothing half-written stored, no turn doubled or lost.
"""

from __future__ import annotations

import dataclasses
import io
import json
import time
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from simulations.ai import gateway
from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.games import step_of
from simulations.kinds.negotiation.headless import play_game
from simulations.kinds.negotiation.turns import play_ai_step
from simulations.models import Game, ModelCall, TranscriptEntry
from simulations.services.ledger.turns import create_game
from tests.helpers import game_at_first_ai_turn, mercury_version

from .conftest import DEADLINE, RETRIES
from .fake_openai import FakeOpenAI, Fault, closed_port_base

pytestmark = pytest.mark.django_db
SEED, ROLE = 5, "EU"
SLACK = 1.0  # seconds per failed turn for litellm, threads and a busy machine
_reference: dict[str, list[tuple[int, str, str, str]]] = {}
_requests: dict[str, int] = {}  # turn and judge requests of the clean game


def _transcript(game: Game) -> list[tuple[int, str, str, str]]:
    rows = TranscriptEntry.objects.filter(game=game).order_by("seq")
    return list(rows.values_list("seq", "speaker", "kind", "text"))


def _clean_reference(fake: FakeOpenAI) -> list[tuple[int, str, str, str]]:
    """The transcript of a clean game over HTTP (played once per test run, headless)."""
    if "clean" not in _reference:
        game = create_game(scenario_version=mercury_version(), seed=SEED)
        game = play_game(game_id=game.pk, policy=make_policy("passive", ROLE))
        assert game.phase == "REVIEW"
        _reference["clean"] = _transcript(game)
        _requests.update(turn=len(fake.requests("turn")), judge=len(fake.requests("judge")))
    return _reference["clean"]


def test_a_clean_game_over_http_reaches_the_review(fake: FakeOpenAI) -> None:
    clean = _clean_reference(fake)
    turns, judges = _requests["turn"], _requests["judge"]
    game = Game.objects.get()
    calls = ModelCall.objects.filter(game=game)
    assert game.phase == "REVIEW" and not calls.exclude(status="ok").exists()
    assert (
        turns == calls.exclude(purpose="judge").count()
        and judges == calls.filter(purpose="judge").count() > 0
    )
    assert all(c.token_count_method == "provider" and c.model == "openai/fake-delegate" for c in calls)
    spoken = [text for _, _, kind, text in clean if kind == "message"]
    assert spoken and all(text.endswith(".") for text in spoken)  # whole sentences from the server


def test_a_streamed_game_survives_a_fault_on_every_kind_of_turn(fake: FakeOpenAI) -> None:
    """The consumer's path (on_chunk), one fault per turn, each mended by the one retry: the same game results."""
    clean = _clean_reference(fake)
    fake.reset()
    passing = [
        Fault("429", retry_after=0.2), Fault("500"), Fault("slow", delay=0.3), Fault("slow", delay=5),
        Fault("trickle", delay=0.3), Fault("stall"), Fault("cut"), Fault("no_finish"), Fault("length"),
        Fault("empty"),
    ]  # fmt: skip
    for fault in passing:  # each fault spends one attempt of a turn; the retry that follows is answered
        fake.inject(fault, Fault())
    game = create_game(scenario_version=mercury_version(), seed=SEED)
    game = play_game(game_id=game.pk, policy=make_policy("passive", ROLE), stream=True)
    assert game.phase == "REVIEW" and not fake.script.turn  # every fault was served
    assert _transcript(game) == clean
    assert [s.fault for s in fake.requests("turn")][: 2 * len(passing)] == [
        kind for f in passing for kind in (f.kind, "ok")
    ]
    assert all(s.stream for s in fake.requests("turn"))
    assert not ModelCall.objects.filter(game=game).exclude(status="ok").exists()


# Faults that outlast the retries: (label, faults for every attempt, cause, words the student reads)
FAILING: list[tuple[str, list[Fault], str, str]] = [
    ("429", [Fault("429", retry_after=0.2)] * (RETRIES + 1), "rate_limited", "busy"),
    ("500", [Fault("500")] * (RETRIES + 1), "server_error", "had an error"),
    ("refused", [], "refused_connection", "MERCURY_MODEL_API_BASE"),
    ("slow", [Fault("slow", delay=5)] * (RETRIES + 1), "timeout", "MERCURY_MODEL_TIMEOUT"),
    ("trickle", [Fault("trickle", delay=0.3)] * (RETRIES + 1), "timeout", "did not answer in time"),
    ("stall", [Fault("stall")] * (RETRIES + 1), "timeout", "did not answer in time"),
    ("cut", [Fault("cut")] * (RETRIES + 1), "truncated", "cut off"),
    ("length", [Fault("length")] * (RETRIES + 1), "truncated", "max_tokens"),
    ("empty", [Fault("empty")] * (RETRIES + 1), "empty", "empty message"),
    ("401", [Fault("401")], "auth", "MERCURY_MODEL_API_KEY"),
]


def test_failures_stop_the_play_command_with_their_cause_and_resume_to_the_same_game(
    fake: FakeOpenAI, settings: Any
) -> None:
    """Headless, through `manage.py play`: each fault outlasts the retries at a later turn; the command stops
    naming the cause and what to do, the game is untouched, the failed call keeps the provider's cause, and
    `--resume` carries on. After all of them the game is the clean game."""
    clean = _clean_reference(fake)
    fake.reset()
    mercury_version()  # the scenario, loaded as `load_scenario` would
    game_id = 0
    args = ["--role", ROLE, "--seed", str(SEED), "--quiet"]
    api_base = settings.MERCURY_MODEL_API_BASE
    for label, faults, cause, words in FAILING:
        # Let a few turns pass cleanly between faults, then fail the next turn on every attempt.
        fake.inject(*[Fault()] * 3, *faults)
        started = time.monotonic()
        out = io.StringIO()
        with pytest.raises(CommandError) as err:
            if label == "refused":
                _play_then_refuse(fake, settings, args, out)
            else:
                call_command("play", *args, stdout=out)
        took = time.monotonic() - started
        settings.MERCURY_MODEL_API_BASE = api_base
        message = str(err.value)
        game_id = json.loads(out.getvalue().splitlines()[-1])["game_id"]
        args = ["--resume", str(game_id), "--quiet"]
        assert words in message and f"--resume {game_id}" in message and cause in message, message
        failed = ModelCall.objects.filter(game_id=game_id, status="error").order_by("-seq").first()
        assert failed is not None and failed.error.startswith(f"{cause}: ")
        assert (
            gateway.CAUSES[cause].reason not in failed.error
        )  # the provider's cause, not the student's text
        game = Game.objects.get(pk=game_id)
        assert TranscriptEntry.objects.filter(game=game, seq__gt=game.state["transcript_seq"]).count() == 0
        assert step_of(game).kind == "ai"  # the failed turn is still the next one
        retried = gateway.CAUSES[cause].retryable
        bound = (
            (RETRIES + 1 if retried else 1) * DEADLINE + (0.2 + gateway.BACKOFF_BASE) * retried + 3 * SLACK
        )
        assert took <= bound, (label, took)  # three clean turns before the fault, then the failed one
    out = io.StringIO()
    call_command("play", *args, stdout=out)
    assert json.loads(out.getvalue().splitlines()[-1]) == {"game_id": game_id, "status": "REVIEW"}
    game = Game.objects.get(pk=game_id)
    assert _transcript(game) == clean
    assert ModelCall.objects.filter(game=game, status="error").count() == len(FAILING)


def _play_then_refuse(fake: FakeOpenAI, settings: Any, args: list[str], out: io.StringIO) -> None:
    """Three clean turns, then the server's address points at a closed port (the game is pinned to its model's
    address, so the playing calls' spec is changed, as a server moving away would)."""
    real = gateway.complete  # the one door's call (services/play/model_step.py), patched where it looks it up
    calls = {"n": 0}
    closed = closed_port_base()

    def complete(messages: list[dict[str, str]], **kwargs: Any) -> gateway.Completion:
        if "on_restart" in kwargs:  # a playing turn (the judge's calls pass no on_restart)
            calls["n"] += 1
            if calls["n"] > 3:  # the teacher's setting and the game's pinned address both point at it
                settings.MERCURY_MODEL_API_BASE = closed
                kwargs["spec"] = dataclasses.replace(kwargs["spec"], api_base=closed)
        return real(messages, **kwargs)

    gateway.complete = complete  # type: ignore[assignment]
    try:
        call_command("play", *args, stdout=out)
    finally:
        gateway.complete = real  # type: ignore[assignment]


@pytest.mark.parametrize(
    ("answer", "used"),
    [
        ("{}", True),
        ("not json, sorry", False),
        ('{"support": {"9": ["9.9"]}}', False),
        ('{"votes": 3}', False),
    ],
    ids=["valid", "invalid JSON", "out of range", "wrong shape"],
)
def test_a_judge_answer_that_cannot_be_used_leaves_the_turn_to_the_rules(
    fake: FakeOpenAI, answer: str, used: bool
) -> None:
    game = game_at_first_ai_turn(seed=SEED)
    fake.inject(Fault("judge_invalid", body=answer), kind="judge")
    step = step_of(game)
    game = play_ai_step(game=game, step=step)
    event = game.events.order_by("-seq").first()
    assert event is not None and event.payload["text"].endswith(".")
    assert (event.payload["signals"] is not None) is used  # None: the engine reads the text by its rules
    assert [s.kind for s in fake.requests()] == ["turn", "judge"]
