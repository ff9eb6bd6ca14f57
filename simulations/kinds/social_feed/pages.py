"""A social-feed run's pages, reached through the kind contract: the set-up form, the live run view (progress,
the state distribution as a stacked area chart, engagement over rounds, the most engaged posts, the reasoner's
calls), pause and resume, and the results page with its downloads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.views.decorators.http import require_http_methods

from simulations.engine.errors import IllegalEvent
from simulations.models import Game, ScenarioVersion
from simulations.services.content.model_choice import UnknownModelChoice
from simulations.services.content.scenarios import parsed_scenario, playable_version
from simulations.services.people.access import can_drive, can_read, granted_token, share_link
from simulations.services.play.model_step import Move
from simulations.services.play.work_budget import (
    WorkEstimate,
    describe_estimate,
    plays_offline,
)
from simulations.services.policy.message_text import normalise_message
from simulations.services.policy.moves import StartRefused, start_from_setup, take_posted_move

from . import comparing
from .config import SocialFeedScenario
from .estimate import ADVICE, run_estimate
from .export import rounds_csv as rounds_table
from .games import state_of
from .machine import MAX_AGENTS, STUDENT_TEXT, Event, Refusal, config_from_options
from .presenters import context as run_context
from .presenters import phase_label as phase_label
from .ranking import EXPLAINED, RANKINGS, WORDS
from .twins import MIX_EXPLAINED, MIX_WORDS, MIXES, SETTING_WORDS, SETTINGS

PAGE_AGENTS = 2000  # the set-up's largest population: a bigger run is for the command line and the benchmark


class SetupForm(forms.Form):
    model = forms.CharField(required=False, widget=forms.HiddenInput)
    agents = forms.IntegerField(min_value=0, max_value=min(PAGE_AGENTS, MAX_AGENTS), label="Generated agents")
    max_rounds = forms.IntegerField(min_value=1, max_value=200, label="Rounds")
    checkpoint_frequency = forms.IntegerField(min_value=1, max_value=50, label="Checkpoint every … rounds")
    reasoner_enabled = forms.BooleanField(
        required=False, label="Ask the reasoner when the guards leave a choice"
    )
    ranking = forms.ChoiceField(  # not required: a form without it runs the scenario's ranking
        required=False,
        label="Feed ranking",
        choices=[(r, f"{WORDS[r]}: {EXPLAINED[r]}") for r in RANKINGS],
        widget=forms.RadioSelect,
        help_text="Which posts each agent sees first: it mostly looks at the top of its feed.",
    )
    compare = forms.ChoiceField(  # twins.py: a second town, the same seed and people, one setting apart
        required=False,
        label="Compare with a second town",
        choices=[("", "No: one town"), *((s, f"Yes, with {SETTING_WORDS[s]}") for s in SETTINGS)],
        widget=forms.RadioSelect,
        help_text="Both towns start from the same seed, residents and posts, and your posts go into both: what "
        "differs between them comes from the one setting you change (or, comparing a correction, from what you "
        "post into the second town alone). It costs about twice as much.",
    )
    second_ranking = forms.ChoiceField(
        required=False,
        label="The second town's feed ranking",
        choices=[("", "—"), *((r, WORDS[r]) for r in RANKINGS)],
    )
    second_mix = forms.ChoiceField(
        required=False,
        label="The second town's population",
        choices=[("", "—"), *((m, f"{MIX_WORDS[m]}: {MIX_EXPLAINED[m]}") for m in MIXES)],
    )

    def clean(self) -> dict[str, Any]:
        """The second town's setting as the run's option (`compare`), if one is asked for and named."""
        data = super().clean() or {}
        setting = data.get("compare") or ""
        wanted = {"ranking": "second_ranking", "population": "second_mix"}.get(setting)
        if wanted and not data.get(wanted):
            self.add_error(wanted, "Choose what the second town does differently.")
        elif wanted:
            named = {"ranking": data[wanted]} if setting == "ranking" else {"mix": data[wanted]}
            data["compare"] = {"setting": setting, **named}
        elif setting:  # a correction: no setting changes, the person's posts into Town B alone do
            data["compare"] = {"setting": setting}
        return data


def new_game(request: HttpRequest, version: ScenarioVersion, *, seed: int, model: str | None) -> HttpResponse:
    """The lobby's start: the set-up form first (population, rounds, checkpoints), with the lobby's model choice."""
    url = reverse("social_feed_setup", args=[version.pk])
    return redirect(f"{url}?model={model}" if model else url)


OPTIONS = ("agents", "max_rounds", "checkpoint_frequency", "reasoner_enabled", "ranking", "compare")


@login_required
@require_http_methods(["GET", "POST"])
def setup(request: HttpRequest, version_id: int) -> HttpResponse:
    """GET: the set-up form with what the run would cost. POST: the run started, or the form again with why not."""
    version = playable_version(version_id=version_id, kind="social_feed")
    scenario: SocialFeedScenario = parsed_scenario(version)
    initial = {"model": request.GET.get("model", ""), "agents": scenario.population.count if scenario.population else 0,
               "max_rounds": scenario.config.max_rounds, "checkpoint_frequency": scenario.config.checkpoint_frequency,
               "reasoner_enabled": scenario.config.reasoner_enabled, "ranking": scenario.config.ranking,
               "compare": ""}  # fmt: skip
    form = SetupForm(request.POST or None, initial=initial)
    error, status = "", 200
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            options = {k: data[k] for k in OPTIONS}
            try:
                return start_from_setup(request, version, options=options, model=data["model"], advice=ADVICE,
                                        estimate=lambda: _estimate(scenario, data))  # fmt: skip
            except StartRefused as exc:
                error, status = str(exc), exc.status
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


def _context(game: Game, *, results: bool = False) -> dict[str, Any]:
    """What a run's pages show; a comparison's two towns each drawn in a column of their own (`results`: with the
    results page's parts), on the same scales."""
    scenario = parsed_scenario(game.scenario)
    state = state_of(game)
    context = run_context(state, scenario) | {"game": game, "scenario": scenario}
    if state.comparison is not None:
        both = comparing.context(state, scenario)
        towns = [
            render_to_string("social_feed/_town.html", town | {"results": results}) for town in both["towns"]
        ]
        context |= {
            "towns": towns,
            "comparing": both["comparing"],
            "town_words": comparing.settings_words(state),
            "correcting": state.config.compare is not None and state.config.compare.setting == "correction",
        }
    return context


def page(request: HttpRequest, game: Game, *, error: str = "", status: int = 200) -> HttpResponse:
    context = _context(game) | {"error": error}
    if getattr(request, "htmx", False):
        html = render_to_string("social_feed/_panels.html", context, request=request)
        return HttpResponse(html, status=status)
    return render(request, "social_feed/page.html", context, status=status)


def render_update(
    game: Game, *, since_seq: int = 0, full: bool = True, shown: dict[str, str] | None = None
) -> tuple[str, int]:
    """The panels, redrawn whole (a run has no transcript: its seq stays 0)."""
    return render_to_string("social_feed/_panels.html", _context(game) | {"oob": True}), 0


# Pause and resume mean the same whatever block the page last showed: they go on the run as it is now (the
# driver's block in flight then fails its version check and is not committed; the machine refuses a second pause).
# So does a post of the person's own: it joins the run as it is now, read by the agents from the next round on.
intents = frozenset({Event.RUN_PAUSED.value, Event.RUN_RESUMED.value, Event.POST_WRITTEN.value})


def read_move(game: Game, fields: Mapping[str, str], files: Mapping[str, Any]) -> Move:
    """Pause (while running), resume (while paused), or a post of the person's own (its words under the shared
    text rule, and its topic); any other event is not a move of this page's."""
    event = fields.get("event", "")
    if event not in intents:
        raise IllegalEvent(game.phase, event, sorted(intents))
    if event == Event.POST_WRITTEN.value:
        text = normalise_message(fields.get("text", ""))
        if len(text) > STUDENT_TEXT:
            raise Refusal(game.phase, event, Refusal.TEXT_TOO_LONG)
        into = {"into": "B"} if fields.get("into") == "B" else {}  # a correction, into Town B alone
        return Move(event, {"text": text, "topic": fields.get("topic", "")} | into)
    return Move(event, {})


def move(request: HttpRequest, game: Game) -> HttpResponse:
    taken = take_posted_move(request, game)
    fresh = Game.objects.select_related("scenario").get(pk=game.pk)
    if not taken.committed:
        return page(request, fresh, error=taken.error, status=taken.status)
    if getattr(request, "htmx", False):
        return page(request, fresh)
    return redirect("game", game_id=game.pk)


def review(request: HttpRequest, game: Game) -> HttpResponse:
    context = _context(game, results=True) | {
        "owner": can_drive(request.user, game),
        "share_url": share_link(request, game),
    }
    return render(request, "social_feed/review.html", context)


def rounds_csv(request: HttpRequest, game_id: int) -> HttpResponse:
    """Each round's numbers as CSV, for whoever may read the run (its owner, its class's teachers, staff, a share
    link's holder); anyone else is told there is no such run."""
    game = get_object_or_404(
        Game.objects.select_related("scenario"), pk=game_id, scenario__kind="social_feed"
    )
    if not can_read(request.user, game, granted_token(request.session, game_id)):
        raise Http404("No such game.")
    response = HttpResponse(rounds_table(state_of(game)), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="social-feed-{game.pk}-rounds.csv"'
    return response


urlpatterns = [
    path("new/<int:version_id>/", setup, name="social_feed_setup"),  # the set-up form creates the run
    path("runs/<int:game_id>/rounds.csv", rounds_csv, name="social_feed_rounds_csv"),
]
