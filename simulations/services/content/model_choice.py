"""Which model a game plays with: the admin's list, the choice made when a game starts, and the game's specs.

A game is pinned when it is created: the model strings, api_base and kwargs are copied onto the game (with the
name of the variable holding the key, never the key), so editing or deleting the admin's entry, or changing the
settings, never changes a running game. Keys are read from the environment at call time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from simulations.ai.model_spec import OFFLINE_PREFIX, ModelSpec, default_spec, judge_spec, spec_from_data
from simulations.models import Game, ModelChoice

DEFAULT = "default"
OFFLINE = "offline"  # the built-in offline model whatever the settings say (an admin's rehearsal of a draft)
OFFLINE_LABEL = "Built-in offline model"


class UnknownModelChoice(ValueError):
    MESSAGE = "That model is not offered; choose one from the list."

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


@dataclass(frozen=True)
class Option:
    key: str  # DEFAULT or the ModelChoice's id
    label: str
    model: str


def default_label() -> str:
    spec = default_spec()
    return OFFLINE_LABEL if spec.offline else f"Default ({spec.model})"


def options() -> list[Option]:
    """The settings' model first (always offered), then the admin's enabled models in their order."""
    rows = ModelChoice.objects.filter(enabled=True).values_list("pk", "label", "model")
    return [Option(DEFAULT, default_label(), settings.MERCURY_MODEL)] + [
        Option(str(pk), label, model) for pk, label, model in rows
    ]


def find(name: str) -> str:
    """The option key for a label, an option's model string or "default" (the headless `play --model`)."""
    wanted = name.strip()
    if wanted.lower() == DEFAULT or wanted in (default_label(), settings.MERCURY_MODEL):
        return DEFAULT
    offered = options()[1:]
    for match in (
        lambda o: o.label == wanted,
        lambda o: o.model == wanted,
        lambda o: o.label.lower() == wanted.lower(),
    ):
        found = [o for o in offered if match(o)]
        if found:
            return found[0].key
    raise UnknownModelChoice()


def pinned_fields(key: str | None) -> dict[str, Any]:
    """The Game fields that pin a new game to the option `key` (None or DEFAULT: the settings' model)."""
    if key == OFFLINE:
        model = f"{OFFLINE_PREFIX}default"
        return {
            "model_choice": None, "model": model, "judge_model": model,
            "model_access": {"source": "choice", "api_base": "", "api_key_env": "", "kwargs": {}, "judge_api_base": "",
                             "judge_api_key_env": "", "judge_kwargs": {}},
        }  # fmt: skip
    if not key or key == DEFAULT:
        playing = default_spec()
        judging = judge_spec(playing)
        return {
            "model_choice": None, "model": playing.model, "judge_model": judging.model,
            "model_access": {
                "source": "settings", "api_base": playing.api_base, "kwargs": playing.kwargs,
                "judge_separate": judging is not playing, "judge_api_base": judging.api_base,
                "judge_kwargs": judging.kwargs,
            },
        }  # fmt: skip
    choice = ModelChoice.objects.filter(pk=int(key) if key.isdigit() else 0, enabled=True).first()
    if choice is None:
        raise UnknownModelChoice()
    separate = bool(choice.judge_model.strip())
    return {
        "model_choice": choice, "model": choice.model, "judge_model": choice.judge_model if separate else choice.model,
        "model_access": {
            "source": "choice", "api_base": choice.api_base, "api_key_env": choice.api_key_env,
            "kwargs": dict(choice.kwargs or {}),
            "judge_api_base": choice.judge_api_base if separate else choice.api_base,
            "judge_api_key_env": choice.judge_api_key_env if separate else choice.api_key_env,
            "judge_kwargs": dict(choice.judge_kwargs or {}) if separate else dict(choice.kwargs or {}),
        },
    }  # fmt: skip


def game_specs(game: Game) -> tuple[ModelSpec, ModelSpec]:
    """The playing and the judging model of `game` (no database query: everything is on the game row)."""
    if not game.model:  # a game from before per-game models: the settings decide
        playing = default_spec()
        return playing, judge_spec(playing)
    access: dict[str, Any] = game.model_access or {}
    judge_model = game.judge_model or game.model
    if access.get("source") == "choice":
        return (
            spec_from_data(
                model=game.model, api_base=access.get("api_base", ""), api_key_env=access.get("api_key_env", ""),
                kwargs=access.get("kwargs"),
            ),
            spec_from_data(
                model=judge_model, api_base=access.get("judge_api_base", ""),
                api_key_env=access.get("judge_api_key_env", ""), kwargs=access.get("judge_kwargs"),
            ),
        )  # fmt: skip
    if not access:  # pinned to a model string only (an imported game): this installation's settings reach it
        settings_spec = default_spec()
        playing = settings_spec if settings_spec.model == game.model else ModelSpec(model=game.model)
        judging = judge_spec(settings_spec)
        return playing, judging if judging.model == judge_model else (
            playing if judge_model == game.model else ModelSpec(model=judge_model)
        )
    playing = ModelSpec(
        model=game.model, api_base=access.get("api_base", ""), api_key=settings.MERCURY_MODEL_API_KEY,
        kwargs=dict(access.get("kwargs") or {}),
    )  # fmt: skip
    if not access.get("judge_separate"):
        return playing, playing
    return playing, ModelSpec(
        model=judge_model, api_base=access.get("judge_api_base", ""), api_key=settings.MERCURY_JUDGE_API_KEY,
        kwargs=dict(access.get("judge_kwargs") or {}),
    )  # fmt: skip
