"""The relay's frames: paced to one per FRAME_INTERVAL on average with a few back to back, the held-back words
sent after a pause, none after close or for a voided attempt; the timers behind it all run on one thread."""

from __future__ import annotations

import threading
import time
from itertools import pairwise
from typing import Any

import pytest

from simulations.services.pages import deadlines
from simulations.services.pages.deadlines import Deadlines
from simulations.services.pages.frame_pacing import FramePacer
from simulations.services.play import drive


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


def test_a_few_frames_go_at_once_then_words_that_come_too_soon_go_out_together_after_the_interval(
    frames: list[tuple[float, str]],
) -> None:
    relay = _relay()
    start = time.monotonic()
    words = ["Canada ", "supports ", "a ", "binding ", "phase-out ", "date "]
    for word in words:
        relay.chunk(word)
    burst = drive.FRAME_BURST
    assert len(frames) == burst  # the allowance, at once: each frame the text so far
    assert [text for _, text in frames] == ["".join(words[: n + 1]) for n in range(burst)]
    time.sleep(0.5)
    assert [text for _, text in frames][burst:] == ["".join(words)]  # the rest held back, then together
    assert frames[burst][0] - start >= 0.19  # not before a frame's share of the allowance came back
    relay.close()


def test_a_word_by_word_stream_settles_at_one_frame_per_interval(frames: list[tuple[float, str]]) -> None:
    relay = _relay()
    start = time.monotonic()
    while time.monotonic() - start < 1.0:  # a model saying 50 words a second for a second
        relay.chunk("word ")
        time.sleep(0.02)
    relay.close()
    # The burst, then one frame per 0.2 s: never the 50 a second the words came at.
    assert drive.FRAME_BURST + 2 <= len(frames) <= drive.FRAME_BURST + 1.0 / 0.2 + 1
    gaps = [b - a for (a, _), (b, _) in pairwise(frames[drive.FRAME_BURST :])]
    assert min(gaps) >= 0.15


def test_the_pacer_allows_a_burst_then_one_frame_per_interval_and_refills_while_idle() -> None:
    pacer = FramePacer(interval=0.2, burst=3)
    for _ in range(3):
        assert pacer.wait(10.0) == 0
        pacer.took(10.0)
    assert pacer.wait(10.0) == pytest.approx(0.2)  # the allowance is spent: a whole interval to wait
    assert pacer.wait(10.15) == pytest.approx(0.05)
    pacer.took(10.2)
    assert pacer.wait(10.2) == pytest.approx(0.2)
    assert pacer.wait(11.0) == 0  # a pause refills it, up to the burst and no more
    for _ in range(3):
        pacer.took(11.0)
    assert pacer.wait(11.0) == pytest.approx(0.2)
    unpaced = FramePacer(interval=0.0, burst=3)
    for _ in range(10):
        assert unpaced.wait(5.0) == 0
        unpaced.took(5.0)


def test_close_and_restart_drop_the_held_back_words(frames: list[tuple[float, str]]) -> None:
    burst = drive.FRAME_BURST
    closed = _relay()
    for n in range(burst):
        closed.chunk(f"w{n} ")  # sent at once: the allowance
    closed.chunk("held ")
    closed.close()
    retried = _relay()
    for n in range(burst):
        retried.chunk(f"r{n} ")
    retried.chunk("void ")
    retried.restart()
    time.sleep(0.4)
    sent = [text for _, text in frames]
    assert len(sent) == 2 * burst and not any("held" in text or "void" in text for text in sent)


def test_timers_run_in_order_on_one_thread_and_a_cancelled_one_never_runs() -> None:
    timers = Deadlines("test-deadlines")
    ran: list[tuple[str, str]] = []
    done = threading.Event()

    def note(name: str) -> Any:
        return lambda: ran.append((name, threading.current_thread().name))

    timers.call_later(0.15, note("late"))
    timers.call_later(0.05, note("early"))  # earlier than what the thread already waits for
    timers.call_later(0.10, note("cancelled")).cancel()

    def fails() -> None:
        raise ZeroDivisionError

    timers.call_later(0.05, fails)  # a failing callback does not stop the others
    timers.call_later(0.2, done.set)
    assert done.wait(5)
    assert ran == [("early", "test-deadlines"), ("late", "test-deadlines")]


def test_the_relays_share_one_timer_thread(frames: list[tuple[float, str]]) -> None:
    before = threading.active_count()
    relays = [_relay() for _ in range(20)]
    for relay in relays:
        for word in ("Opening ", "words ", "of ", "the ", "delegation "):  # more than the burst: a timer each
            relay.chunk(word)
    assert threading.active_count() <= before + 1  # at most the shared thread, if it was not running yet
    time.sleep(0.4)
    assert len(frames) == 20 * (drive.FRAME_BURST + 1)
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


def test_words_sent_at_once_cancel_the_timer_set_for_the_words_held_before(
    frames: list[tuple[float, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A word that finds the allowance back before the held words' timer ran sends them all; the timer must not
    send the same text again (the timer here never runs by itself: only its cancellation is seen)."""
    timers: list[deadlines.Scheduled] = []

    def call_later(delay: float, callback: Any) -> deadlines.Scheduled:
        timers.append(deadlines.Scheduled(time.monotonic() + delay, callback))
        return timers[-1]

    monkeypatch.setattr(drive.frames, "call_later", call_later)
    relay = _relay()
    for n in range(drive.FRAME_BURST + 1):
        relay.chunk(f"w{n} ")
    assert len(frames) == drive.FRAME_BURST and len(timers) == 1  # the last word held, a timer set for it
    time.sleep(0.25)
    relay.chunk("more ")
    assert frames[-1][1].endswith(f"w{drive.FRAME_BURST} more ") and timers[0].cancelled
    relay.close()
