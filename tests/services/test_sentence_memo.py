"""The reader keeps what each sentence says (reading.py: `_read_sentence`): a reading must not depend on which
sentences were read before it, so every message of played games read in one order with the memo kept, and again in
the reverse order with the memo starting empty for each message, reads the same. The memo's key leaves out the
speaker where no seat is named and the issue where none of its allusions occurs (`Lexicon.sentence_key`): the
second pass keys every sentence by its own speaker and issue, so it also shows that leaving them out changes no
reading."""

from __future__ import annotations

import pytest

from simulations.kinds.negotiation import reading
from simulations.kinds.negotiation.games import scenario_of_version
from simulations.kinds.negotiation.situation import split_sentences
from simulations.models import TranscriptEntry
from tests.helpers import mercury_version, played

pytestmark = [pytest.mark.django_db, pytest.mark.content]  # what games say: the embedded leg only


def test_a_reading_is_the_same_whatever_was_read_before() -> None:
    games = [played("CAN", human="advocate", seed=2), played("EU", seed=3)]
    scenario = scenario_of_version(mercury_version())
    entries = TranscriptEntry.objects.filter(game__in=games).exclude(kind="result").order_by("game", "seq")
    calls = [
        (text, speaker, issue)
        for e in entries
        # as the judge, the prompt's facts and its memory read them, and without the questions
        for text in (e.text, " ".join(s for s in split_sentences(e.text) if not s.endswith("?")))
        for speaker, issue in (
            (None, None), (e.speaker, None), (e.speaker, e.issue or None), ("USA", None), ("CHN", "2"),
        )
    ]  # fmt: skip
    lex = reading.lexicon(scenario)
    lex.sentences.clear()
    kept = [reading.read(scenario, t, speaker=s, issue=i) for t, s, i in calls]
    assert len(lex.sentences) < len(calls)  # sentences came again, and were read once
    shared = [
        (sentence, s, i)
        for t, s, i in calls
        for sentence in split_sentences(t)
        if lex.sentence_key(reading._normalise(sentence), s, i)[1:] != (s, i)
    ]
    assert len(shared) > len(calls) // 4  # many sentences are read without their speaker or issue
    fresh = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reading.Lexicon, "sentence_key", lambda self, sentence, s, i: (sentence, s, i))
        for t, s, i in reversed(calls):
            lex.sentences.clear()
            fresh.append(reading.read(scenario, t, speaker=s, issue=i))
    assert kept == fresh[::-1]
    assert any(r.support or r.oppose or r.conditional for r in kept) and any(r.offers or r.asks for r in kept)
