"""What every kind's machine reads the same way with pydantic: a move's payload by its event's model (a model
instance as it is, anything else validated afresh; what is wrong said field by field, for the kind's own refusal),
and a stored state back as the kind's state."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import ResumeError

M = TypeVar("M", bound=BaseModel)


class PayloadProblems(ValueError):
    """The payload does not fit its event's model; the message lists each field and what is wrong with it."""


def read_payload(model: type[M], payload: dict[str, Any] | BaseModel | None) -> M:
    """`payload` as a `model`. Raises PayloadProblems."""
    if isinstance(payload, model):
        return payload
    try:
        data = payload.model_dump() if isinstance(payload, BaseModel) else dict(payload or {})
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'payload'}: {e['msg']}" for e in exc.errors())
        raise PayloadProblems(problems) from None


def restore_snapshot(model: type[M], snapshot: dict[str, Any], *, schema_version: int, what: str) -> M:
    """A stored state back as the kind's state `model`; refuses another schema version or a malformed snapshot
    (ResumeError, naming `what` it should have been)."""
    if snapshot.get("schema_version") != schema_version:
        raise ResumeError(f"snapshot schema {snapshot.get('schema_version')} is not {schema_version}")
    try:
        return model.model_validate(snapshot)
    except ValidationError as exc:
        raise ResumeError(f"snapshot is not {what}: {exc.error_count()} problems") from exc
