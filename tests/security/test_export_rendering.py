"""Finding 5: a student's message cannot forge structure in the Markdown export. Rendered by a CommonMark parser,
each message stays inside its own block quote under its speaker line, as plain text: no chair line, heading,
table, list or code block of its own, no link (javascript: or any), no image (remote or not), no raw HTML."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from simulations.kinds.negotiation.human_turns import submit_human_event
from simulations.models import Game
from simulations.services.files.export import export_markdown
from simulations.services.ledger.turns import create_game
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db

FORGERIES = [
    "We agree on 2.1.\n\n**Japan**: The chair declares all four issues adopted.",
    "**Japan (Chair)**: the vote on all issues is closed and adopted",
    "# Outcome: all issues adopted",
    "Final result\n======",
    "Also\n---",
    "| Issue | Result |\n|---|---|\n| 1 | adopted |",
    "[Read the annex](javascript:alert(1))",
    "<javascript:alert(1)>",
    "[annex][x]\n\n[x]: javascript:alert(1)",
    "![pixel](https://tracker.example/p.png)",
    '<img src="https://tracker.example/q.png" onerror="alert(1)">',
    "- adopted\n1. adopted\n2) adopted",
    "```\nfenced\n```\n~~~\nalso fenced\n~~~",
    "***\n___",
    "&#106;avascript:alert(1) &amp; friends",
    "A backslash \\*stays\\* a backslash",
]
SPEAKER_LINE = re.compile(r"^\*\*[^*\n]+\*\*( \(private\))?:$")


def _hostile_game() -> tuple[Game, str]:
    from simulations.kinds.negotiation.bots import make_policy
    from simulations.kinds.negotiation.headless import play_game

    game = create_game(scenario_version=mercury_version(), seed=4)

    class Talking(Exception):
        pass

    def stop_in_talk(g: Game, what: str) -> None:
        if g.phase == "ROUND_2_CONVERSATION_ACTIVE" and "HUMAN_MESSAGE_SUBMITTED" in _allowed(g):
            raise Talking

    with pytest.raises(Talking):
        play_game(game_id=game.pk, policy=make_policy("passive", "CAN"), on_progress=stop_in_talk)
    text = "\n\n".join(FORGERIES)
    game = submit_human_event(
        game=Game.objects.get(pk=game.pk), event="HUMAN_MESSAGE_SUBMITTED", payload={"text": text}
    )
    return game, text


def _allowed(game: Game) -> list[str]:
    from simulations.kinds.negotiation import machine
    from simulations.kinds.negotiation.games import state_of

    return list[str](machine.allowed_events(state_of(game)))  # Event is a str enum


def _walk(tokens: list[Token]) -> list[tuple[int, Token]]:
    """Every token (inline children too) with the block-quote depth it sits at."""
    depth, out = 0, []
    for token in tokens:
        if token.type == "blockquote_open":
            depth += 1
        elif token.type == "blockquote_close":
            depth -= 1
        out.append((depth, token))
        out += [(depth, child) for child in token.children or []]
    return out


def test_forged_structure_in_a_message_renders_as_quoted_plain_text() -> None:
    game, sent = _hostile_game()
    markdown = export_markdown(game=game)
    parser = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    tokens = _walk(parser.parse(markdown))
    kinds = {t.type for _, t in tokens}
    assert not kinds & {
        "link_open",
        "image",
        "html_block",
        "html_inline",
        "table_open",
        "fence",
        "code_block",
    }
    inside = [t for depth, t in tokens if depth > 0]
    assert not {t.type for t in inside} & {"heading_open", "bullet_list_open", "ordered_list_open", "hr",
                                           "strong_open", "em_open", "s_open"}  # fmt: skip
    headings = [tokens[i + 1][1].content for i, (d, t) in enumerate(tokens) if t.type == "heading_open"]
    assert not any("adopted" in h for h in headings)
    in_transcript, speaker_lines = False, []
    for i, (depth, token) in enumerate(tokens):
        if token.type == "heading_open":
            in_transcript = tokens[i + 1][1].content.startswith("Round")
        elif (
            in_transcript
            and depth == 0
            and token.type == "inline"
            and tokens[i - 1][1].type == "paragraph_open"
        ):
            speaker_lines.append(token.content)
    assert speaker_lines and all(SPEAKER_LINE.match(line) for line in speaker_lines), speaker_lines
    assert len(speaker_lines) == game.entries.count()
    # Nothing the student wrote is lost: every word of it is still in the rendered text.
    html = parser.render(markdown)
    quoted = " ".join(t.content for d, t in tokens if d > 0 and t.type == "text")
    for word in ("chair declares all four issues adopted", "javascript:alert(1)", "tracker.example/p.png",
                 "also fenced", "\\*stays\\*", "&#106;avascript", "&amp; friends"):  # fmt: skip
        assert word in quoted, word
    assert "<img" not in html and 'href="javascript' not in html
    assert sent.count("adopted") == quoted.count("adopted")
