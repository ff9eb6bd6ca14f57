"""The offline provider's token estimate (simulations/ai/tokens.py): counted line by line, memoised per line, it
must give what counting the whole text at once gives."""

from __future__ import annotations

from simulations.ai.tokens import estimate_tokens


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
