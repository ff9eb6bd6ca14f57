"""The negotiation's pages: the game page (delegation choice, then the table) and the student's moves (the review
is `review_page`).

The shared views (`simulations/views/`) check who may see or drive a game and hand it here through the kind's
`platform.KIND`; the templates are this folder's `templates/negotiation/`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string

from simulations.ai.gateway import ModelFailure
from simulations.engine.errors import MachineError
from simulations.kinds.negotiation.games import scenario_of_version
from simulations.kinds.negotiation.machine import Status
from simulations.models import Game
from simulations.services import page_threads
from simulations.services.broadcast import notify_panels_drawn
from simulations.services.drive_queue import queue_drive_after_move
from simulations.services.fragments import fragment
from simulations.services.move_form import FORM_REFUSALS, read_move_form, refusal_status
from simulations.services.student_errors import for_student
from simulations.services.turns import StaleTurn

from .games import state_of
from .human_turns import PAYLOAD_FIELDS, submit_human_event
from .presenters import brief_context, game_context, persona_context, render_panels, roles_context, transcript


def page(request: HttpRequest, game: Game) -> HttpResponse:
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


@dataclass(frozen=True)
class MoveOutcome:
    """A move taken (`error` empty) or refused: the sentence for the student and the status a post answers with."""

    game: Game
    error: str = ""
    status: int = 200


def take_move(*, game: Game, user_id: int, fields: Mapping[str, str]) -> MoveOutcome:
    """Precondition: `game` is the user's. The student's move from its form's fields, posted or sent over the game's
    websocket (the same checks either way); a committed move has its drive queued (`_answer_soon`)."""
    event = fields.get("event", "")
    payload = {k: fields[k] for k in PAYLOAD_FIELDS.get(event, ()) if k in fields}
    try:
        version = read_move_form(fields, user_id=user_id)
        key = fields.get("idem") or None
        game = submit_human_event(
            game=game, event=event, payload=payload, expected_version=version, idempotency_key=key
        )
    except FORM_REFUSALS as exc:
        return MoveOutcome(game, str(exc), refusal_status(exc))
    except StaleTurn as exc:
        return MoveOutcome(game, for_student(exc), 409)
    except (MachineError, ModelFailure, ValueError) as exc:
        return MoveOutcome(game, for_student(exc), 409)
    _answer_soon(game)
    return MoveOutcome(game)


def move(request: HttpRequest, game: Game) -> HttpResponse:
    if request.htmx:  # type: ignore[attr-defined]
        # The answer redraws the page's panels whole (taken or refused): its websocket's consumer must not take the
        # regions it sent last for what the page shows. Told before the move commits, so that the commit's own
        # message reaches the consumer after this one (on the same socket's queue, by Redis too) and the update it
        # brings sends the panels whole. (A move sent over the socket redraws nothing but through the consumer.)
        notify_panels_drawn(request.session.session_key or "", game.pk)
    outcome = take_move(game=game, user_id=int(request.user.pk or 0), fields=request.POST)
    game, error = outcome.game, outcome.error
    if not request.htmx:  # type: ignore[attr-defined]
        if error:  # a plain post (no JavaScript): the sentence rides to the game page as a flash message
            messages.error(request, error)
        return redirect("game", game_id=game.pk)
    if error:
        game.refresh_from_db()  # refused: the panels show the game as it is now (a committed move returned it)
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


def _answer_soon(game: Game) -> None:
    """The delegations answer the move at once: its page's render may wait a moment to share the next turn's
    (consumers.ADVANCE_COALESCE), and the drive it would queue after that render would start only then. Queued in
    a page thread, after the answer: the move is committed whatever happens there (should this fail, the player's
    page queues the drive when the game has been quiet for a few seconds: consumers.GameConsumer._watch)."""
    page_threads.soon(queue_drive_after_move, game)
