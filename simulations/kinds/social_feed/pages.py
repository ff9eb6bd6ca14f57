"""A social-feed run's pages, reached through the kind contract: the set-up form, the live run view (progress,
the state distribution as a stacked area chart, engagement over rounds, the most engaged posts, the reasoner's
calls), pause and resume, and the results page with its downloads."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_http_methods

from simulations.engine.errors import IllegalEvent, MachineError
from simulations.models import Game
from simulations.services.access import can_drive, share_link
from simulations.services.drive_queue import queue_drive
from simulations.services.model_choice import UnknownModelChoice
from simulations.services.move_form import FORM_REFUSALS, read_move_form, refusal_status
from simulations.services.rate_limit import RateLimited, check_rate
from simulations.services.scenarios import parsed_scenario, playable_version
from simulations.services.student_errors import for_student
from simulations.services.turns import StaleTurn, commit_event, create_game
from simulations.services.work_budget import (
    OverBudget,
    WorkEstimate,
    check_work,
    describe_estimate,
    plays_offline,
)

from .config import SocialFeedScenario
from .estimate import ADVICE, run_estimate
from .games import state_of
from .machine import MAX_AGENTS, Event, config_from_options
from .presenters import context as run_context

PAGE_AGENTS = 2000  # the set-up's largest population: a bigger run is for the command line and the benchmark


class SetupForm(forms.Form):
    model = forms.CharField(required=False, widget=forms.HiddenInput)
    agents = forms.IntegerField(min_value=0, max_value=min(PAGE_AGENTS, MAX_AGENTS), label="Generated agents")
    max_rounds = forms.IntegerField(min_value=1, max_value=200, label="Rounds")
    checkpoint_frequency = forms.IntegerField(min_value=1, max_value=50, label="Checkpoint every … rounds")
    reasoner_enabled = forms.BooleanField(
        required=False, label="Ask the reasoner when the guards leave a choice"
    )


OPTIONS = ("agents", "max_rounds", "checkpoint_frequency", "reasoner_enabled")


@login_required
@require_http_methods(["GET", "POST"])
def setup(request: HttpRequest, version_id: int) -> HttpResponse:
    """GET: the set-up form with what the run would cost. POST: the run started, or the form again with why not."""
    version = playable_version(version_id=version_id, kind="social_feed")
    scenario: SocialFeedScenario = parsed_scenario(version)
    initial = {"model": request.GET.get("model", ""), "agents": scenario.population.count if scenario.population else 0,
               "max_rounds": scenario.config.max_rounds, "checkpoint_frequency": scenario.config.checkpoint_frequency,
               "reasoner_enabled": scenario.config.reasoner_enabled}  # fmt: skip
    form = SetupForm(request.POST or None, initial=initial)
    error, status = "", 200
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:
                check_work(
                    user_id=int(request.user.pk or 0), estimate=_estimate(scenario, data), advice=ADVICE
                )
                check_rate(user_id=int(request.user.pk or 0), action="new_game")
                game = create_game(
                    scenario_version=version, seed=secrets.randbelow(2**31), owner=request.user,  # type: ignore[arg-type]
                    model=data["model"] or None, options={k: data[k] for k in OPTIONS},
                )  # fmt: skip
                queue_drive(game_id=game.pk)
                return redirect("game", game_id=game.pk)
            except (ValueError, UnknownModelChoice, OverBudget) as exc:
                error, status = str(exc), 400
            except RateLimited as exc:
                error, status = str(exc), 429
        else:
            status = 400
    return render(request, "social_feed/setup.html", {"version": version, "scenario": scenario, "form": form,
                                                      "error": error, "estimate": _cost(scenario, form)}, status=status)  # fmt: skip


def _estimate(scenario: SocialFeedScenario, data: Mapping[str, Any]) -> WorkEstimate:
    """What a run set up with the form's `data` would cost. Raises UnknownModelChoice, ValueError (a sentence)."""
    config = config_from_options(scenario, {k: data[k] for k in OPTIONS})
    return run_estimate(scenario, config, offline=plays_offline(model_key=str(data.get("model") or "")))


def _cost(scenario: SocialFeedScenario, form: SetupForm) -> str:
    """The set-up page's line on what the run would cost: the posted values if they are valid, else the defaults."""
    try:
        estimate = _estimate(
            scenario, form.cleaned_data if form.is_bound and form.is_valid() else form.initial
        )
    except (ValueError, UnknownModelChoice):  # a model not offered: the form's error says so instead
        return ""
    return describe_estimate(estimate=estimate)


def _context(game: Game) -> dict[str, Any]:
    return run_context(state_of(game)) | {"game": game, "scenario": parsed_scenario(game.scenario)}


def page(request: HttpRequest, game: Game, *, error: str = "", status: int = 200) -> HttpResponse:
    context = _context(game) | {"error": error}
    if getattr(request, "htmx", False):
        html = render_to_string("social_feed/_panels.html", context, request=request)
        return HttpResponse(html, status=status)
    return render(request, "social_feed/page.html", context, status=status)


def render_update(game: Game) -> tuple[str, int]:
    return render_to_string("social_feed/_panels.html", _context(game) | {"oob": True}), 0


def move(request: HttpRequest, game: Game) -> HttpResponse:
    """Pause (while running) or resume (while paused)."""
    try:
        version = read_move_form(request.POST, user_id=int(request.user.pk or 0))
        event = request.POST.get("event", "")
        intents = [Event.RUN_PAUSED.value, Event.RUN_RESUMED.value]
        if event not in intents:  # not a move of this page's: from a page behind the run, or forged
            raise StaleTurn() if version != game.version else IllegalEvent(game.phase, event, intents)
        # Pause and resume mean the same whatever block the page last showed: they go on the run as it is now
        # (the driver's block in flight then fails its version check and is not committed; the machine refuses
        # a second pause). A block committed between reading the version and committing is simply read again.
        _commit_on_latest(game, event)
    except FORM_REFUSALS as exc:
        return page(request, game, error=str(exc), status=refusal_status(exc))
    except (StaleTurn, MachineError) as exc:
        fresh = Game.objects.select_related("scenario").get(pk=game.pk)
        return page(request, fresh, error=for_student(exc), status=409)
    queue_drive(game_id=game.pk)
    fresh = Game.objects.select_related("scenario").get(pk=game.pk)
    if getattr(request, "htmx", False):
        return page(request, fresh)
    return redirect("game", game_id=game.pk)


INTENT_ATTEMPTS = 5


def _commit_on_latest(game: Game, event: str) -> None:
    for attempt in range(INTENT_ATTEMPTS):
        latest = Game.objects.values_list("version", flat=True).get(pk=game.pk)
        try:
            commit_event(game_id=game.pk, expected_version=latest, event=event, payload={})
            return
        except StaleTurn:
            if attempt + 1 == INTENT_ATTEMPTS:
                raise


def review(request: HttpRequest, game: Game) -> HttpResponse:
    context = _context(game) | {
        "owner": can_drive(request.user, game),
        "share_url": share_link(request, game),
    }
    return render(request, "social_feed/review.html", context)
