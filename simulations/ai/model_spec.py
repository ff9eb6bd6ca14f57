"""Which model plays and how to reach it: one value passed to every gateway call.

A spec comes from the settings (`MERCURY_MODEL`, `MERCURY_MODEL_API_BASE`, `MERCURY_MODEL_API_KEY`,
`MERCURY_MODEL_KWARGS`), or for the judge from the `MERCURY_JUDGE_*` settings, each falling back to the playing
model's. Keys are never stored in the database: a spec built from data names the environment variable that holds it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

OFFLINE_PREFIX = "mercury-offline/"


@dataclass(frozen=True)
class ModelSpec:
    model: str
    api_base: str = ""
    api_key: str = ""
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def offline(self) -> bool:
        return self.model.startswith(OFFLINE_PREFIX)

    def call_kwargs(self) -> dict[str, Any]:
        """What litellm.completion takes besides model and messages (extra kwargs first: ours win)."""
        out: dict[str, Any] = dict(self.kwargs)
        if self.api_base:
            out["api_base"] = self.api_base
        if self.api_key:
            out["api_key"] = self.api_key
        return out


def default_spec() -> ModelSpec:
    """The playing model from the settings."""
    return ModelSpec(
        model=settings.MERCURY_MODEL,
        api_base=settings.MERCURY_MODEL_API_BASE,
        api_key=settings.MERCURY_MODEL_API_KEY,
        kwargs=dict(settings.MERCURY_MODEL_KWARGS),
    )


def judge_spec(playing: ModelSpec | None = None) -> ModelSpec:
    """The judge model: the MERCURY_JUDGE_* settings where set, else the playing model."""
    playing = playing or default_spec()
    if not settings.MERCURY_JUDGE_MODEL:
        return playing
    return ModelSpec(
        model=settings.MERCURY_JUDGE_MODEL,
        api_base=settings.MERCURY_JUDGE_API_BASE,
        api_key=settings.MERCURY_JUDGE_API_KEY,
        kwargs=dict(settings.MERCURY_JUDGE_KWARGS),
    )


def spec_from_data(
    *, model: str, api_base: str = "", api_key_env: str = "", kwargs: dict[str, Any] | None = None
) -> ModelSpec:
    """A spec kept as data (e.g. an admin's model list): the key is read from the named environment variable."""
    return ModelSpec(
        model=model,
        api_base=api_base,
        api_key=os.environ.get(api_key_env, "") if api_key_env else "",
        kwargs=dict(kwargs or {}),
    )
