"""What the kinds share about talking to a model without naming one another (pure: json only).

- `json_object`: a model's JSON answer, however wrapped (a code fence, a sentence before or after).
- `attach_facts` / `read_facts`: the structured facts a kind hands the built-in offline model beside its prompt,
  in a tagged block that only the offline model is given (a real model reads the prompt alone).
"""

from __future__ import annotations

import json
from typing import Any


class ReplyError(ValueError):
    """A model's reply is not a usable move (not JSON, or not the shape asked for)."""


def json_object(text: str) -> dict[str, Any]:
    start, end = text.find("{"), text.rfind("}")
    if start == -1 or end < start:
        raise ReplyError("the reply holds no JSON object")
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ReplyError(f"the reply's JSON does not parse: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ReplyError("the reply is not a JSON object")
    return data


def attach_facts(messages: list[dict[str, str]], tag: str, facts: dict[str, Any]) -> list[dict[str, str]]:
    """The messages plus the facts block `<tag>{json}</tag>` as a last user message."""
    return [*messages, {"role": "user", "content": f"<{tag}>{json.dumps(facts)}</{tag}>"}]


def read_facts(messages: list[dict[str, Any]], tag: str) -> dict[str, Any] | None:
    """The facts block a kind attached, or None when the prompt is not that kind's."""
    opening, closing = f"<{tag}>", f"</{tag}>"
    for message in messages:
        content = str(message.get("content", ""))
        start, end = content.find(opening), content.find(closing)
        if start != -1 and end > start:
            data = json.loads(content[start + len(opening) : end])
            return data if isinstance(data, dict) else None
    return None
