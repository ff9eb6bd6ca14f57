"""`score_judge --family`: one sentence family of the corpus alone (the student's own words: `plain`), per kind."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from simulations.kinds.negotiation import judge_score


def test_the_plain_family_is_scored_alone_per_kind_and_family() -> None:
    out = StringIO()
    call_command("score_judge", "--rules", "--family", "plain", "--misses", "0", stdout=out)
    text = out.getvalue()
    plain = [item for item in judge_score.load_corpus() if item.family == "plain"]
    first = re.match(r"rule judge \(rules(?:, then meaning)?\): (\d+)/(\d+) sentences read right", text)
    assert first and int(first[2]) == len(plain) >= 120
    families = re.findall(r"^    (\w+) +\d+/\d+", text.split("per sentence family:")[1], re.M)
    assert families == ["plain"]
    for kind in ("support", "oppose", "conditional", "offers", "asks", "trades"):
        assert re.search(rf"^    {kind} +\d+/[1-9]\d* ", text, re.M), kind  # every kind is in the family


def test_an_unknown_family_is_refused() -> None:
    with pytest.raises(CommandError, match="no sentence of family 'nope'"):
        call_command("score_judge", "--rules", "--family", "nope", stdout=StringIO())
