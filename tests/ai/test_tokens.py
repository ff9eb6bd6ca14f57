"""The offline provider's token estimate (simulations/ai/tokens.py): counted a comma-or-line at a time, memoised per
cut, it must give what counting the whole text at once gives."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from simulations.ai.tokens import estimate_tokens

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def test_words_numbers_and_marks_count_like_word_pieces() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("Mercury") == 2  # seven letters: a second piece from the seventh on
    assert estimate_tokens("cap 2030, now!") == 5  # cap / 2030 / , / now / !
    assert estimate_tokens("internationally") == 3  # 15 letters: pieces of six


def test_a_text_counts_the_same_whole_or_split_into_lines() -> None:
    lines = [
        "Brazil: We support a phase-out by 2030 of mercury-added products.",
        "",
        "  The USA (delegation) notes 3.5 tonnes/year; artisanal gold mining matters.",
        "Tanzania asks for financing\tand technical assistance...",
    ]
    whole = "\n".join(lines)
    assert estimate_tokens(whole) == sum(estimate_tokens(line) for line in lines)
    # A line break counts as white space, exactly as a space does: nothing joins across it.
    assert estimate_tokens(whole) == estimate_tokens(whole.replace("\n", " "))


def _by_the_rule(text: str) -> int:
    """The estimate as its rule says, piece by piece: a word of n letters is 1 + (n - 1) // 6 pieces, a run of
    digits one, any other mark one."""
    count = 0
    for piece in re.findall(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]", text):
        count += 1 + (len(piece) - 1) // 6 if piece.isalpha() else 1
    return count


def test_every_shipped_scenario_text_counts_as_the_rule_says() -> None:
    """The counts are stored with each model call and spent from a game's budget: the way they are computed must
    not change them. Every scenario file, and text with accents, other scripts and long words."""
    files = sorted(SCENARIOS.rglob("*.yaml"))
    texts = [p.read_text() for p in files]
    # As a prompt's facts block carries them: one long line of JSON, cut at its commas.
    texts += [json.dumps(yaml.safe_load(p.read_text()), ensure_ascii=False, sort_keys=True) for p in files]
    texts += [
        "Ça va — «quoted» ñandú Ωmega 東京 x" * 3,
        "a" * 100,
        "12ab34cd",
        "supercalifragilistic!",
        "ü" * 9,
        ",,a,,bcdefgh,1,2,,",
        "word,word,12,34,abcdefghijkl,mnopqr,",
    ]
    assert len(texts) > 40
    for text in texts:
        assert estimate_tokens(text) == _by_the_rule(text)
