"""Reading a kind's scenario file: YAML validated by the kind's pydantic schema, every failure one sentence naming
the file (pure: yaml and pydantic only)."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from .errors import ScenarioError

M = TypeVar("M", bound=BaseModel)


def read_yaml_model(path: str | Path, model: type[M], error: type[ScenarioError] = ScenarioError) -> M:
    file = Path(path)
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"{file}: cannot read ({exc.strerror})") from exc
    except yaml.YAMLError as exc:
        raise error(f"{file}: not valid YAML ({exc})") from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error(f"{file}: {exc}") from exc


def declared_kind(path: str | Path) -> str | None:
    """The `kind:` a scenario file declares at its top (None: it declares none, or cannot be read — its kind's
    loader then says why). Several kinds keep one-file scenarios in a folder; each reads only its own."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    kind = data.get("kind") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else None
