"""What a model call cost, by litellm's own price list (bundled with litellm: read offline, never fetched).

A model litellm has no price for (a local server's model, a custom name, the offline model) costs `None`, which
reads as "unknown", never as free: only litellm itself says a model is free (e.g. its Ollama entries).
"""

from __future__ import annotations

from . import tokens
from .model_spec import OFFLINE_PREFIX


def call_cost(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """US dollars for these tokens on `model`, or None where litellm knows no price."""
    if model.startswith(OFFLINE_PREFIX):
        return None
    import litellm

    litellm.suppress_debug_info = True  # an unknown model would otherwise print litellm's provider list
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except Exception:  # litellm raises several types for "not in the price list"; all mean unknown
        return None
    return float(prompt_cost) + float(completion_cost)


def estimated_prompt_tokens(messages: list[dict[str, str]]) -> int:
    """A failed call's prompt, counted by the word-piece estimate (the provider reported nothing)."""
    return sum(tokens.estimate_tokens(m["content"]) for m in messages)
