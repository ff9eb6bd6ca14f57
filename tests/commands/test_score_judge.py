"""`score_judge`: the rule judge in CI; a model judge through litellm's mock_response (no network)."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command


def test_the_rule_judge_is_scored_per_kind() -> None:
    out = StringIO()
    call_command("score_judge", "--rules", "--misses", "2", stdout=out)
    text = out.getvalue()
    first = text.splitlines()[0]
    assert (
        first.startswith(("rule judge (rules): ", "rule judge (rules, then meaning): "))
        and "sentences read right" in first
    )
    for kind in ("support", "oppose", "conditional", "offers", "asks", "trades"):
        assert f"    {kind} " in text
    assert text.count("  miss [") == 2


def test_the_offline_model_is_not_scored_as_a_model() -> None:
    with pytest.raises(CommandError, match="judges by the rules"):
        call_command("score_judge", stdout=StringIO())


def test_a_model_judge_is_scored_through_the_llm_judge(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """A model that reads every sentence as support for 1.1 is scored as such: right only where that is right."""
    import litellm

    settings.MERCURY_MODEL = "openai/gpt-4o-mini"
    original = litellm.completion
    calls: list[str] = []

    def completion(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["messages"][0]["content"])
        return original(*args, mock_response='{"support": {"1": ["1.1"]}}', **kwargs)

    monkeypatch.setattr(litellm, "completion", completion)
    out = StringIO()
    call_command("score_judge", "--limit", "12", "--misses", "0", stdout=out)
    text = out.getvalue()
    assert len(calls) == 12 and all(c.startswith("You read one message") for c in calls)
    assert text.startswith("model judge openai/gpt-4o-mini: ")
    # The first 12 corpus sentences are AMAP's arguments on issue 1; the judge is right on those backing 1.1 alone.
    right = int(text.split(": ", 1)[1].split("/", 1)[0])
    assert 0 < right < 12
