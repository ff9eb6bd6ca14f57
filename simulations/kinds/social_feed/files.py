"""The seed's files beside the database: a checkpoint file every `checkpoint_frequency` rounds in
`checkpoint_dir`, and the decision log as JSON lines in `log_file` (when `log_decisions`). Both are optional
(None: nothing written); paths come from the scenario, which only admins write."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def write_checkpoint(directory: str, name: str, data: dict[str, Any]) -> str:
    """The checkpoint as `<directory>/<name>.json` (written to a temporary name, then renamed: a reader never sees
    half a file); returns its path."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    partial.replace(path)
    return str(path)


def append_decisions(log_file: str, decisions: Iterable[dict[str, Any]]) -> None:
    path = Path(log_file)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        for d in decisions:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
