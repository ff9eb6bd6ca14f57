"""Model-written Markdown (a debrief) as HTML, for a page: headings, bullet and numbered lists, paragraphs, bold,
italics and code, and nothing else. The text is escaped first, then only those marks become tags: a model's (or
a quoted student's) HTML shows as text, a link or an image as the characters that were written.

It reads text that is still arriving too (a debrief as it streams): a marker with no words after it yet (`###`,
`-`) draws nothing, and an emphasis mark whose closing half has not arrived is left out rather than shown, so a
reader never sees Markdown's marks, only what they become.
"""

from __future__ import annotations

import re

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

# A line of marks alone: a rule, or a heading's or an item's marker whose words have not arrived yet.
_MARKS_ONLY = re.compile(r"(?:[-*_+#=>`\s]*|\d{1,3}[.)])$")
_HEADING = re.compile(r"#{1,6}\s+(.+?)(?:\s+#+)?$")
_BULLET = re.compile(r"[-*+]\s+(.+)$")
_NUMBERED = re.compile(r"\d{1,3}[.)]\s+(.+)$")
_QUOTE = re.compile(r"(?:>\s?)+")
# A link or an image: its words only, never an address to follow.
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_CODE = re.compile(r"`([^`]+)`")
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_EM = re.compile(
    r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])|(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])"
)
# A half whose partner never came (or has not come yet), and an opening mark still arriving at a line's end.
_STRAY = re.compile(r"\*\*|__|(?<![\w*])\*(?=\w)|\*+$|(?<!\S)_+$|`")


def to_html(text: str) -> SafeString:
    """`text` as HTML: a `<section>` for the text before the first heading and one for each heading with what
    follows it (empty ones left out); every character of `text` escaped."""
    sections: list[list[str]] = [[]]
    paragraph: list[str] = []
    items: list[str] = []
    list_tag = ""

    def close() -> None:
        nonlocal list_tag
        if paragraph:
            sections[-1].append(f"<p>{' '.join(paragraph)}</p>")
            paragraph.clear()
        if items:
            sections[-1].append(f"<{list_tag}>{''.join(f'<li>{i}</li>' for i in items)}</{list_tag}>")
            items.clear()
        list_tag = ""

    for raw in text.splitlines():
        line = raw.strip()
        heading, bullet = _HEADING.match(line), _BULLET.match(line)
        item = bullet or _NUMBERED.match(line)
        if _MARKS_ONLY.match(line):
            close()
        elif heading:
            close()
            sections.append([f"<h3>{_inline(heading.group(1))}</h3>"])
        elif item:
            tag = "ul" if bullet else "ol"
            if paragraph or list_tag != tag:
                close()
            list_tag = tag
            items.append(_inline(item.group(1)))
        elif items and raw[:1].isspace():
            items[-1] += " " + _inline(line)  # an item's continued line
        else:
            if items:
                close()
            paragraph.append(_inline(_QUOTE.sub("", line, count=1) if line.startswith(">") else line))
    close()
    return mark_safe("".join(f"<section>{''.join(s)}</section>" for s in sections if s))  # noqa: S308 - escaped


def _inline(text: str) -> str:
    html = str(escape(text))  # first: every mark below works on escaped text, so no tag can come from `text`
    html = _LINK.sub(r"\1", html)
    html = _CODE.sub(r"<code>\1</code>", html)
    html = _STRONG.sub(lambda m: f"<strong>{m.group(1) or m.group(2)}</strong>", html)
    html = _EM.sub(lambda m: f"<em>{m.group(1) or m.group(2)}</em>", html)
    return _STRAY.sub("", html)
