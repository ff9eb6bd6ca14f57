"""The lobby: my games with their phase, resume any, start a new one of any loaded scenario."""

from __future__ import annotations

import secrets

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from simulations.kinds import all_kinds, get_kind
from simulations.models import Game, ScenarioRole, ScenarioVersion
from simulations.services.content.model_choice import UnknownModelChoice, options
from simulations.services.content.scenarios import latest_version
from simulations.services.policy.rate_limit import RateLimited, check_rate


def latest_scenarios() -> list[dict[str, object]]:
    """Every loaded scenario's latest version of a kind this server plays, with its kind's name and the blurb its
    document carries, in the order of settings.MERCURY_KINDS (the first is the lobby's default choice), then by
    slug. Games in progress keep the version they started with; a new game always takes the latest."""
    kinds = {kind.name: kind for kind in all_kinds()}
    blurbs = {f"document__{kind.scenarios.blurb_field}" for kind in kinds.values()}
    rows = (
        ScenarioVersion.objects.filter(kind__in=kinds, listed=True)
        .order_by("slug", "-version")
        .values("pk", "slug", "kind", "version", "title", *sorted(blurbs))
    )
    latest: dict[str, dict[str, object]] = {}
    for row in rows:
        kind = kinds[row["kind"]]
        latest.setdefault(
            row["slug"],
            {
                "pk": row["pk"], "slug": row["slug"], "version": row["version"], "title": row["title"],
                "kind": kind.title, "kind_name": kind.name, "summary": row[f"document__{kind.scenarios.blurb_field}"] or "",
            },
        )  # fmt: skip
    order = list(kinds)
    return sorted(latest.values(), key=lambda s: (order.index(str(s["kind_name"])), str(s["slug"])))


@login_required
def lobby(request: HttpRequest) -> HttpResponse:
    games = list(  # the lobby shows the phase column, never the state document
        Game.objects.filter(owner_id=request.user.pk)
        .select_related("scenario")
        .defer("state", "scenario__document")
    )
    # Seats by their delegation's name ("Canada", not its id), from the scenarios' indexed roles: one query.
    seats = {
        (r.scenario_id, r.role_id): r.name
        for r in ScenarioRole.objects.filter(scenario_id__in={g.scenario_id for g in games}).only(
            "scenario_id", "role_id", "name"
        )
    }
    rows = [
        {"game": g, "phase": get_kind(g.scenario.kind).pages.phase_label(g.phase),
         "seat": seats.get((g.scenario_id, g.human_role), g.human_role)}
        for g in games
    ]  # fmt: skip
    return render(
        request,
        "lobby.html",
        {"games": rows, "scenarios": latest_scenarios(), "model_options": options()},
    )


@login_required
@require_POST
def new_game(request: HttpRequest) -> HttpResponse:
    try:
        check_rate(user_id=int(request.user.pk or 0), action="new_game")
    except RateLimited as exc:
        messages.error(request, str(exc))
        return redirect("lobby")
    slug = request.POST.get("scenario", "")
    if not slug:  # a form without the choice (one scenario loaded, an old page): the only scenario, if one
        listed = ScenarioVersion.objects.filter(listed=True)
        slugs = list(listed.order_by("slug").values_list("slug", flat=True).distinct()[:2])
        slug = slugs[0] if len(slugs) == 1 else ""
    version = latest_version(slug=slug) if slug else None
    if version is None:
        if not ScenarioVersion.objects.exists():
            messages.error(request, "No scenario is loaded yet: ask an admin to run load_scenario.")
        elif slug:
            messages.error(request, f"Unknown scenario {slug!r}: choose one of the list.")
        else:
            messages.error(request, "Choose a scenario to play.")
        return redirect("lobby")
    try:
        return get_kind(version.kind).pages.new_game(
            request, version, seed=secrets.randbelow(2**31), model=request.POST.get("model") or None
        )
    except UnknownModelChoice as exc:  # disabled or deleted since the lobby was rendered
        messages.error(request, str(exc))
        return redirect("lobby")
