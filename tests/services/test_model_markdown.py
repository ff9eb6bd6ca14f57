"""Model-written Markdown as HTML (the debrief on the review page and as it streams): headings, lists and emphasis
become tags, everything else is escaped text, and text still arriving never shows a Markdown mark."""

from __future__ import annotations

import re

from simulations.services.pages.model_markdown import to_html

DEBRIEF = """Debrief for Canada, played as Ms Ellison. Your aim was adopted on **3 of 4** issues.

### Issue 1: Nature of the instrument

You wanted 1.1; you said so: “we support *a legally binding instrument*”. It was adopted.

Why 2.1 fell:
- Brazil: 2.1 is a red line for it.
- China: the arguments it heard went 40 % of the way; it would have accepted `2.1` if offered finance.

### What to try next time

1. Offer finance to China.
2. Take the floor on issue 4.
"""


def _blocks(html: str) -> list[str]:
    """The text of each heading, paragraph and list item, tags removed."""
    return [re.sub(r"<[^>]+>", "", b) for b in re.findall(r"<(?:h3|p|li)>(.*?)</(?:h3|p|li)>", html)]


def test_headings_lists_and_emphasis_become_tags() -> None:
    html = str(to_html(DEBRIEF))
    assert html.startswith("<section><p>Debrief for Canada")
    assert "<strong>3 of 4</strong>" in html and "<em>a legally binding instrument</em>" in html
    assert "<section><h3>Issue 1: Nature of the instrument</h3><p>You wanted 1.1;" in html
    assert "<p>Why 2.1 fell:</p><ul><li>Brazil: 2.1 is a red line for it.</li><li>China:" in html
    assert "<code>2.1</code>" in html
    assert "<ol><li>Offer finance to China.</li><li>Take the floor on issue 4.</li></ol></section>" in html
    assert html.count("<section>") == 3


def test_html_links_and_images_in_the_text_stay_text() -> None:
    text = '### <img src=x onerror="alert(1)">\n- <script>alert(2)</script> [here](https://x.example) '
    html = str(to_html(text + "![a](https://y.example/p.png) & more"))
    assert "<img" not in html and "<script" not in html and "href" not in html and "example" not in html
    assert "<h3>&lt;img src=x onerror=&quot;alert(1)&quot;&gt;</h3>" in html
    assert "<li>&lt;script&gt;alert(2)&lt;/script&gt; here a &amp; more</li>" in html


def test_text_still_arriving_never_shows_a_markdown_mark() -> None:
    """Every prefix of the debrief, as a stream delivers it: no block starts with a heading's, a list's or a
    quote's mark, and no emphasis mark shows, closed or not yet closed."""
    headings = items = 0
    for end in range(1, len(DEBRIEF) + 1):
        html = str(to_html(DEBRIEF[:end]))
        for block in _blocks(html):
            assert not re.match(r"\s*(#|[-*+]\s|\d+[.)]\s|&gt;)", block), (end, block)
            assert "*" not in block and "`" not in block and "__" not in block, (end, block)
        headings, items = max(headings, html.count("<h3>")), max(items, html.count("<li>"))
    assert (headings, items) == (2, 4)


def test_plain_text_is_one_paragraph_per_block() -> None:
    assert str(to_html("A first line\nwrapped.\n\nA second paragraph.")) == (
        "<section><p>A first line wrapped.</p><p>A second paragraph.</p></section>"
    )
    assert str(to_html("")) == ""
