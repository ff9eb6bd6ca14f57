"""Words from a model call's thread reach the waiting drive at most once a GATHER; the end of an answer and an error
at once (simulations/ai/answer_queue.py), and the gateway relays what came together in one call, in order."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from simulations.ai import answer_queue, gateway
from simulations.ai.answer_queue import AnswerQueue
from simulations.ai.model_spec import default_spec


def _later(seconds: float, *items: tuple[str, Any], into: AnswerQueue) -> threading.Thread:
    def put() -> None:
        time.sleep(seconds)
        for item in items:
            into.put(item)

    thread = threading.Thread(target=put)
    thread.start()
    return thread


def test_words_that_come_during_a_wait_wait_for_their_time_and_are_taken_together() -> None:
    answers = AnswerQueue()
    start = time.monotonic()
    thread = _later(0.05, ("text", "One "), ("text", "two "), into=answers)
    assert answers.take(until=start + 5, words_not_before=start + 0.3) == [("text", "One "), ("text", "two ")]
    thread.join()
    assert time.monotonic() - start >= 0.3  # words alone did not wake it before their time


def test_words_already_waiting_are_taken_at_once() -> None:
    answers = AnswerQueue()
    start = time.monotonic()
    answers.put(("text", "A whole "))
    answers.put(("text", "burst."))
    assert answers.take(until=start + 30, words_not_before=start + 20) == [
        ("text", "A whole "),
        ("text", "burst."),
    ]
    assert time.monotonic() - start < 10


def test_the_end_of_an_answer_wakes_the_waiting_thread_at_once() -> None:
    answers = AnswerQueue()
    start = time.monotonic()
    thread = _later(0.05, ("text", "Last words."), ("usage", None), ("end", "stop"), into=answers)
    taken = answers.take(until=start + 30, words_not_before=start + 20)
    thread.join()
    assert taken[:2] == [
        ("text", "Last words."),
        ("usage", None),
    ]  # the usage woke it (the end may be there too)
    assert time.monotonic() - start < 10  # not at words_not_before


def test_first_words_wake_it_at_once_and_nothing_by_the_deadline_is_empty() -> None:
    answers = AnswerQueue()
    start = time.monotonic()
    thread = _later(0.05, ("text", "Hello"), into=answers)
    assert answers.take(until=start + 30) == [("text", "Hello")]
    thread.join()
    assert time.monotonic() - start < 10
    assert answers.take(until=time.monotonic() + 0.05) == []


@pytest.mark.django_db
def test_a_streamed_answer_is_relayed_in_gathers_and_words_before_an_error_go_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    words = [f"word{i} " for i in range(40)]

    def typing(litellm: Any, kwargs: dict[str, Any], results: AnswerQueue, stop: Any) -> None:
        for word in words:
            time.sleep(0.01)
            results.put(("text", word))
        results.put(("error", RuntimeError("the connection dropped")))

    monkeypatch.setattr(gateway, "_offline_worker", typing)
    relayed: list[tuple[float, str]] = []
    with pytest.raises(gateway.ModelFailure):
        gateway.complete(
            [{"role": "user", "content": "Speak."}],
            spec=default_spec(),
            on_chunk=lambda text: relayed.append((time.monotonic(), text)),
            retries=0,
        )
    assert "".join(text for _, text in relayed) == "".join(words)  # every word, in order, before the error
    # Gathered, yet streamed: 40 words over about 0.4 s, in about one relay a GATHER (a word that arrives while
    # the last ones are being relayed is taken at once, so a few more).
    assert 2 <= len(relayed) <= len(words) / 3
    gaps = [later - earlier for (earlier, _), (later, _) in zip(relayed, relayed[1:], strict=False)]
    assert max(gaps) >= answer_queue.GATHER * 0.9


def test_at_the_deadline_the_words_that_came_are_taken() -> None:
    answers = AnswerQueue()
    start = time.monotonic()
    thread = _later(0.05, ("text", "Half a"), into=answers)
    assert answers.take(until=start + 0.3, words_not_before=start + 20) == [("text", "Half a")]
    thread.join()
    assert 0.3 <= time.monotonic() - start < 10
    assert answers.take(until=start + 0.3) == []  # nothing more: the caller's time-out
