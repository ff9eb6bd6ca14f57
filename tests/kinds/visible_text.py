"""What a person reads on a page, for the kinds' wording tests: the text a browser shows (and SVG titles a pointer
shows), not attributes, scripts or styles; and which of a machine's own names stand in it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from html.parser import HTMLParser

# snake_case ids (runner_up, business_driver), not paths, anchors or dotted names
SNAKE = re.compile(r"(?<![\w/.#-])[a-z]+(?:_[a-z0-9]+)+(?![\w/.])")


class _Visible(HTMLParser):
    def __init__(self, hidden: tuple[str, ...]) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.hidden_tags, self.hidden = hidden, 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hidden += tag in self.hidden_tags

    def handle_endtag(self, tag: str) -> None:
        self.hidden -= tag in self.hidden_tags

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def visible(html: str, *, also_hidden: tuple[str, ...] = ()) -> str:
    """The page's visible text on one line; `also_hidden`: elements whose text is the user's own (code, a box)."""
    parser = _Visible(("script", "style", *also_hidden))
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())


def names_in(text: str, names: Iterable[str], *, snake: bool = False) -> list[str]:
    """The machine's `names` that stand as words in `text` (and any snake_case id, with `snake`)."""
    found = [n for n in names if re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", text)]
    return found + (SNAKE.findall(text) if snake else [])
