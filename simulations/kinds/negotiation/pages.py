"""The negotiation's pages: the game page (delegation choice, then the table) and the student's moves (the review
is `review_page`).

The shared views (`simulations/views/`) check who may see or drive a game and hand it here through the kind's
`platform.KIND`; the templates are this folder's `templates/negotiation/`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string

from simulations.kinds.negotiation.games import scenario_of_version
from simulations.kinds.negotiation.machine import Status
from simulations.models import Game, ScenarioVersion
from simulations.services.ledger.seats import seen_by
from simulations.services.ledger.turns import create_game
from simulations.services.pages.broadcast import notify_panels_drawn
from simulations.services.pages.fragments import fragment
from simulations.services.play.model_step import Move
from simulations.services.policy.moves import take_posted_move

from .games import seated, state_of
from .human_turns import PAYLOAD_FIELDS, human_move
from .presenters import brief_context, game_context, persona_context, render_panels, roles_context, transcript
from .presenters import phase_label as phase_label
from .presenters import render_update as render_update
from .review_page import review as review


def page(request: HttpRequest, game: Game) -> HttpResponse:
    game = seated(game)
    context = game_context(game)
    if game.phase == Status.ROLE_SELECTION:
        scenario = scenario_of_version(game.scenario)
        # The seat the student is looking at for themselves, with its confidential brief: read before a persona is
        # chosen, never another seat's beside it (one seat a page).
        context |= {
            "roles": roles_context(scenario),
            "persona": persona_context(scenario, request.GET.get("role", ""), confidential=True),
        }
        return render(request, "negotiation/setup.html", context)
    context["entries"] = transcript(game)
    context["transcript"] = fragment("negotiation/_transcript.html", context)
    context["brief"] = brief_context(context["scenario"], state_of(game))
    context["panels"] = render_panels(context, request=request)
    return render(request, "negotiation/page.html", context)


urlpatterns: list[Any] = []  # the shared game, move and review URLs are all it needs


def new_game(request: HttpRequest, version: ScenarioVersion, *, seed: int, model: str | None) -> HttpResponse:
    game = create_game(scenario_version=version, seed=seed, owner=request.user, model=model)  # type: ignore[arg-type]
    return redirect("game", game_id=game.pk)  # it opens on the choice of a delegation


intents: frozenset[str] = frozenset()


def read_move(game: Game, fields: Mapping[str, str], files: Mapping[str, Any]) -> Move:
    """The student's move: the event and only the payload fields it takes (`human_turns.human_move`), made on
    the page drawn at the form's version (which, in Round 2's lanes, says whether the move is out of date)."""
    event = fields.get("event", "")
    chosen = {k: fields[k] for k in PAYLOAD_FIELDS.get(event, ()) if k in fields}
    version = fields.get("version", "")  # the platform checked it is a number (`read_move_form`)
    return human_move(game, event, chosen, seen_version=int(version) if version.isdigit() else None)


def move(request: HttpRequest, game: Game) -> HttpResponse:
    if request.htmx:  # type: ignore[attr-defined]
        # The answer redraws the page's panels whole (taken or refused): its websocket's consumer must not take the
        # regions it sent last for what the page shows. Told before the move commits, so that the commit's own
        # message reaches the consumer after this one (on the same socket's queue, by Redis too) and the update it
        # brings sends the panels whole. (A move sent over the socket redraws nothing but through the consumer.)
        notify_panels_drawn(request.session.session_key or "", game.pk)
    outcome = take_posted_move(request, game)
    game, error = outcome.game, outcome.error
    if not request.htmx:  # type: ignore[attr-defined]
        if error:  # a plain post (no JavaScript): the sentence rides to the game page as a flash message
            messages.error(request, error)
        return redirect("game", game_id=game.pk)
    if error:
        game.refresh_from_db()  # refused: the panels show the game as it is now (a committed move returned it)
    game = seated(seen_by(game, request.user))
    context = game_context(game)  # the refusal goes in the notice below, not the panels
    if game.phase == Status.ROLE_SELECTION:
        scenario = scenario_of_version(game.scenario)
        context |= {
            "roles": roles_context(scenario),
            "persona": persona_context(scenario, request.POST.get("role", "")),
        }
    # The panels, and the notice above them: the notice lives outside #panels, so a turn arriving over the
    # websocket a moment later does not wipe the sentence before it is read (the next move clears it).
    panels = render_panels(context, request=request)
    notice = render_to_string("game/_notice.html", {"error": error, "oob": True}, request=request)
    return HttpResponse(panels + notice, status=outcome.status)
