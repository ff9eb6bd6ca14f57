"""Loading scenario folders into immutable versions, and reading a version back as an engine Scenario."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, cast

from django.db import transaction

from simulations.kinds import get_kind
from simulations.kinds.negotiation.scenario import Scenario, load_scenario_dir
from simulations.models import ScenarioIssue, ScenarioRole, ScenarioVersion


def load_scenario(*, folder: str | Path) -> tuple[ScenarioVersion, bool]:
    """Validate a folder and store it; same content gives the same version, changed content a new one."""
    scenario = load_scenario_dir(folder)
    digest = scenario.content_hash()
    with transaction.atomic():
        existing = ScenarioVersion.objects.filter(slug=scenario.slug, content_hash=digest).first()
        if existing:
            return existing, False
        last = ScenarioVersion.objects.filter(slug=scenario.slug).order_by("-version").first()
        version = ScenarioVersion.objects.create(
            slug=scenario.slug,
            version=(last.version + 1) if last else 1,
            title=scenario.title,
            content_hash=digest,
            document=scenario.model_dump(mode="json"),
            source=str(folder),
        )
        ScenarioRole.objects.bulk_create(
            ScenarioRole(
                scenario=version, role_id=r.id, name=r.name, kind=r.kind, votes=r.votes,
                public_brief=r.public_brief, position=n,
            )
            for n, r in enumerate(scenario.roles)
        )  # fmt: skip
        ScenarioIssue.objects.bulk_create(
            ScenarioIssue(
                scenario=version, issue_id=i.id, title=i.title, position=n,
                options=[o.model_dump() for o in i.options],
            )
            for n, i in enumerate(scenario.issues)
        )  # fmt: skip
    return version, True


@lru_cache(maxsize=32)
def _parse(version_id: int, content_hash: str, kind: str) -> Any:
    document = ScenarioVersion.objects.values_list("document", flat=True).get(pk=version_id)
    return get_kind(kind).parse_scenario(document)


def parsed_scenario(version: ScenarioVersion) -> Any:
    """A stored version as its kind's scenario model (versions are immutable, so parsing is cached)."""
    return _parse(version.pk, version.content_hash, version.kind)


def scenario_of(version: ScenarioVersion) -> Scenario:
    """A negotiation's stored version as the negotiation engine's Scenario."""
    return cast(Scenario, parsed_scenario(version))


def latest_version(*, slug: str) -> ScenarioVersion | None:
    return ScenarioVersion.objects.filter(slug=slug).order_by("-version").first()
