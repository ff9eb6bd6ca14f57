"""The relay's frames: coalesced to one per FRAME_INTERVAL, the held-back words sent after a pause, none after
close or for a voided attempt; the timers behind it all run on one thread."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from simulations.services import deadlines, drive
from simulations.services.deadlines import Deadlines


class _Kind:
    """Shows the words as they are (the negotiation's output screen is tested with its kind)."""

    def stream_view(self, text: str) -> str:
        return text


@pytest.fixture
def frames(monkeypatch: pytest.MonkeyPatch) -> list[tuple[float, str]]:
    sent: list[tuple[float, str]] = []

    def notify_stream(game_id: int, *, speaker: str, text: str, **_: Any) -> None:
        sent.append((time.monotonic(), text))

    monkeypatch.setattr(drive, "notify_stream", notify_stream)
    monkeypatch.setattr(drive, "FRAME_INTERVAL", 0.2)
    return sent


def _relay() -> drive.StreamRelay:
    return drive.StreamRelay(game_id=1, speaker="Canada", kind=_Kind())  # type: ignore[arg-type]


def test_words_that_come_too_soon_go_out_together_after_the_interval(frames: list[tuple[float, str]]) -> None:
    relay = _relay()
    start = time.monotonic()
    for word in ("Canada ", "supports ", "a ", "binding "):
        relay.chunk(word)
    assert [text for _, text in frames] == ["Canada "]  # the first at once, the rest held back
    time.sleep(0.5)
    assert [text for _, text in frames] == ["Canada ", "Canada supports a binding "]
    assert frames[1][0] - start >= 0.19  # not before the interval
    relay.close()


def test_close_and_restart_drop_the_held_back_words(frames: list[tuple[float, str]]) -> None:
    closed = _relay()
    closed.chunk("First ")
    closed.chunk("words ")
    closed.close()
    retried = _relay()
    retried.chunk("A void ")
    retried.chunk("attempt ")
    retried.restart()
    time.sleep(0.4)
    assert [text for _, text in frames] == ["First ", "A void "]


def test_timers_run_in_order_on_one_thread_and_a_cancelled_one_never_runs() -> None:
    timers = Deadlines("test-deadlines")
    ran: list[tuple[str, str]] = []
    done = threading.Event()

    def note(name: str) -> Any:
        return lambda: ran.append((name, threading.current_thread().name))

    timers.call_later(0.15, note("late"))
    timers.call_later(0.05, note("early"))  # earlier than what the thread already waits for
    timers.call_later(0.10, note("cancelled")).cancel()
    timers.call_later(0.05, lambda: 1 / 0)  # a failing callback does not stop the others
    timers.call_later(0.2, done.set)
    assert done.wait(5)
    assert ran == [("early", "test-deadlines"), ("late", "test-deadlines")]


def test_the_relays_share_one_timer_thread(frames: list[tuple[float, str]]) -> None:
    before = threading.active_count()
    relays = [_relay() for _ in range(20)]
    for relay in relays:
        relay.chunk("Opening ")
        relay.chunk("words ")
    assert threading.active_count() <= before + 1  # at most the shared thread, if it was not running yet
    time.sleep(0.4)
    assert len(frames) == 40
    assert {t.name for t in threading.enumerate()} >= {deadlines.frames.name}


@pytest.mark.django_db
def test_frames_are_stamped_with_when_the_words_left_the_model_not_when_they_reached_the_relay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """bench/load.py measures a frame's delay from the `at` stamps: a word that waited for the drive's thread
    (here behind a slow first relay) must carry the time the model said it."""
    from simulations.ai import gateway
    from simulations.ai.model_spec import ModelSpec

    stamped: list[tuple[str, tuple[float, float], float]] = []

    def notify_stream(game_id: int, *, text: str, at: tuple[float, float], **_: Any) -> None:
        stamped.append((text, at, time.time()))

    said: list[float] = []

    def model(litellm: Any, kwargs: dict[str, Any], results: Any, stop: Any) -> None:
        for word in ("First. ", "Second. "):
            said.append(time.time())
            gateway._said(results, word)
        results.put(("usage", None))
        results.put(("end", "stop"))

    monkeypatch.setattr(drive, "notify_stream", notify_stream)
    monkeypatch.setattr(drive, "FRAME_INTERVAL", 0.0)  # every word its own frame
    monkeypatch.setattr(gateway, "_stream_worker", model)  # a real model's call, in its own thread
    relay = _relay()

    def slow_relay(words: str) -> None:
        relay.chunk(words)
        if words == "First. ":
            time.sleep(0.2)  # the drive is busy: the second word waits in the queue

    gateway.complete(
        [{"role": "user", "content": "Speak."}],
        spec=ModelSpec(model="openai/gpt-4o-mini"),
        on_chunk=slow_relay,
        retries=0,
    )
    assert [text for text, _, _ in stamped] == ["First. ", "First. Second. "]
    (_, first_at, _), (_, second_at, second_sent) = stamped
    assert first_at == pytest.approx((said[0], said[0]), abs=0.01)
    assert second_at == pytest.approx((said[1], said[1]), abs=0.01)  # its words' time, not the relay's
    assert second_sent - second_at[1] >= 0.15  # the wait in the drive's queue is inside the measured delay
    assert gateway.words_left_model_at() is None  # outside a relay, nothing
