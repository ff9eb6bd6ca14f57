"""The landing page: what Mercury is, the scenario on offer, and (for staff) the games played so far."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from simulations.models import Game, ScenarioVersion


def index(request: HttpRequest) -> HttpResponse:
    scenario = ScenarioVersion.objects.filter(slug="mercury").order_by("-version").first()
    games = Game.objects.select_related("scenario")[:50] if request.user.is_staff else []
    return render(request, "home.html", {"scenario": scenario, "games": games})
