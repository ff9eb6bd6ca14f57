"""The game page and the user's moves (HTMX posts; plain posts work too, without JavaScript).

`game_page` and `move` are the kind-blind shell: they check the game is the user's (and the move rate), then hand
it to its kind. The negotiation's own page and move follow (`negotiation_page`, `negotiation_move`)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from simulations.ai.gateway import ModelFailure
from simulations.engine.errors import MachineError
from simulations.kinds import kind_of
from simulations.kinds.negotiation.games import state_of
from simulations.models import Game
from simulations.services.access import can_drive
from simulations.services.human_turns import PAYLOAD_FIELDS, submit_human_event
from simulations.services.rate_limit import RateLimited, check_rate
from simulations.services.scenarios import scenario_of
from simulations.services.turns import StaleTurn, games_with_scenario

from .presenters import brief_context, game_context, persona_context, roles_context, transcript


def _own_game(request: HttpRequest, game_id: int) -> Game:
    game = get_object_or_404(games_with_scenario(), pk=game_id)
    if not can_drive(request.user, game):
        raise Http404("No such game.")  # not "forbidden": another player's game does not exist for you
    return game


@login_required
def game_page(request: HttpRequest, game_id: int) -> HttpResponse:
    game = _own_game(request, game_id)
    return kind_of(game).page(request, game)


@login_required
@require_POST
def move(request: HttpRequest, game_id: int) -> HttpResponse:
    game = _own_game(request, game_id)
    return kind_of(game).move(request, game)


def negotiation_page(request: HttpRequest, game: Game) -> HttpResponse:
    context = game_context(game)
    if game.phase == "ROLE_SELECTION":
        scenario = scenario_of(game.scenario)
        context |= {
            "roles": roles_context(scenario),
            "persona": persona_context(scenario, request.GET.get("role", "")),
        }
        return render(request, "game/setup.html", context)
    context["entries"] = transcript(game)
    context["brief"] = brief_context(context["scenario"], state_of(game))
    return render(request, "game/page.html", context)


class MissingVersion(ValueError):
    MESSAGE = "This move did not say which turn it answers (the version field is missing); reload the page."

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


class NulInForm(ValueError):
    MESSAGE = "The form contained a NUL character, which cannot be stored; remove it and send again."

    def __init__(self) -> None:
        super().__init__(self.MESSAGE)


def _posted_version(request: HttpRequest) -> int:
    """The game version the form was rendered at. Required: without it a re-sent or forged post could not be told
    from the current turn, and concurrent copies would each commit."""
    raw = request.POST.get("version", "").strip()
    if not raw.isdigit():
        raise MissingVersion()
    return int(raw)


def negotiation_move(request: HttpRequest, game: Game) -> HttpResponse:
    event = request.POST.get("event", "")
    payload = {k: request.POST[k] for k in PAYLOAD_FIELDS.get(event, ()) if k in request.POST}
    error, status = "", 200
    try:
        if any("\x00" in value for value in request.POST.values()):
            raise NulInForm()
        check_rate(user_id=int(request.user.pk or 0), action="move")
        version = _posted_version(request)
        key = request.POST.get("idem") or None
        game = submit_human_event(
            game=game, event=event, payload=payload, expected_version=version, idempotency_key=key
        )
    except RateLimited as exc:
        error, status = str(exc), 429
    except StaleTurn as exc:
        error, status = str(exc), 409
    except (MissingVersion, NulInForm) as exc:
        error, status = str(exc), 400
    except (MachineError, ModelFailure, ValueError) as exc:
        error, status = str(exc), 409
    if not request.htmx:  # type: ignore[attr-defined]
        return redirect("game", game_id=game.pk)
    game.refresh_from_db()
    context = game_context(game) | {"error": error}
    if game.phase == "ROLE_SELECTION":
        scenario = scenario_of(game.scenario)
        context |= {
            "roles": roles_context(scenario),
            "persona": persona_context(scenario, payload.get("role", "")),
        }
    return render(request, "game/_panels.html", context, status=status)
