"""Loading scenarios (of any kind) into immutable versions, and reading a version back as its kind's scenario."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from django.db import transaction
from django.http import Http404

from simulations.engine.errors import ScenarioError
from simulations.kinds import Kind, ScenarioSource, all_kinds, get_kind
from simulations.models import ScenarioVersion


class NoScenarioHere(ScenarioError):
    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path}: no scenario of any installed kind here (a negotiation folder has a chair.yaml)"
        )


def find_scenarios(path: str | Path) -> list[tuple[Kind, ScenarioSource]]:
    """Every scenario at `path`, validated by its kind. Raises ScenarioError (invalid, or none at all)."""
    found = [(kind, source) for kind in all_kinds() for source in kind.scenarios.read(Path(path))]
    if not found:
        raise NoScenarioHere(Path(path))
    return found


def load_scenarios(*, path: str | Path) -> list[tuple[ScenarioVersion, bool]]:
    """Validate and store every scenario at `path`; same content gives the same version, changed content a new one."""
    return [
        store_scenario(kind=kind, source=source, origin=str(path)) for kind, source in find_scenarios(path)
    ]


def load_scenario(*, folder: str | Path) -> tuple[ScenarioVersion, bool]:
    """The one scenario at `folder` (see `load_scenarios`)."""
    loaded = load_scenarios(path=folder)
    if len(loaded) != 1:
        raise ScenarioError(f"{folder}: holds {len(loaded)} scenarios; name one file")
    return loaded[0]


def store_scenario(
    *, kind: Kind, source: ScenarioSource, origin: str, listed: bool = True
) -> tuple[ScenarioVersion, bool]:
    with transaction.atomic():
        existing = ScenarioVersion.objects.filter(slug=source.slug, content_hash=source.content_hash).first()
        if existing:
            return existing, False
        last = ScenarioVersion.objects.filter(slug=source.slug).order_by("-version").first()
        version = ScenarioVersion.objects.create(
            slug=source.slug,
            kind=kind.name,
            version=(last.version + 1) if last else 1,
            title=source.title,
            content_hash=source.content_hash,
            document=source.document,
            source=origin,
            listed=listed,
        )
        kind.scenarios.index(version, source.model)
    return version, True


@lru_cache(maxsize=32)
def _parse(version_id: int, content_hash: str, kind: str) -> Any:
    document = ScenarioVersion.objects.values_list("document", flat=True).get(pk=version_id)
    return get_kind(kind).scenarios.parse(document)


def parsed_scenario(version: ScenarioVersion) -> Any:
    """A stored version as its kind's scenario model (versions are immutable, so parsing is cached)."""
    return _parse(version.pk, version.content_hash, version.kind)


def latest_version(*, slug: str) -> ScenarioVersion | None:
    """The version a new game of `slug` takes (only versions listed in the lobby)."""
    return ScenarioVersion.objects.filter(slug=slug, listed=True).order_by("-version").first()


def playable_version(*, version_id: int, kind: str) -> ScenarioVersion:
    """The version a set-up page at `version_id` may start: listed in the lobby and of `kind` (an admin's
    unlisted rehearsal of a draft is played only in the admin). An older listed version gives way to its slug's
    latest, as the lobby would. Raises Http404 otherwise."""
    asked = ScenarioVersion.objects.filter(pk=version_id, kind=kind, listed=True).first()
    latest = latest_version(slug=asked.slug) if asked is not None else None
    if latest is None or latest.kind != kind:
        raise Http404("No such scenario to play.")
    return latest
