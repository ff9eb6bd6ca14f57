"""The game page and the user's moves (HTMX posts; plain posts work too, without JavaScript; a kind may also take
its moves over the game's websocket, `simulations.consumers`).

`game_page` and `move` are the kind-blind shell: they check the game is the user's, then hand it to its kind
(`Kind.pages`: `page`, `move`). The form checks every kind's moves share are `services.policy.move_form`'s."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from simulations.kinds import Actor, kind_of
from simulations.models import Game
from simulations.services.ledger.seats import seat_of, seen_by
from simulations.services.ledger.turns import game_with_scenario
from simulations.services.people.access import can_drive, can_read, granted_token
from simulations.services.people.class_sessions import notice_for

WATCH_REFRESH_SECONDS = 4


def _own_game(request: HttpRequest, game_id: int) -> Game:
    game = game_with_scenario(game_id)
    if game is None:
        raise Http404("No such game.")
    if not can_drive(request.user, game):
        raise Http404("No such game.")  # not "forbidden": another player's game does not exist for you
    return game


@login_required
def game_page(request: HttpRequest, game_id: int) -> HttpResponse:
    game = game_with_scenario(game_id)
    if game is not None and not can_drive(request.user, game):
        if can_read(request.user, game, granted_token(request.session, game_id)):
            return redirect("review", game_id=game_id)  # a teacher or staff reads it, read-only
        game = None
    if game is None:
        raise Http404("No such game.")  # not "forbidden": another player's game does not exist for you
    # Without JavaScript (no websocket) the page shows the AI's turns by reloading itself while they are played
    # (base.html: a refresh inside <noscript>); never while the student has the floor and may be typing.
    request.watch_refresh = WATCH_REFRESH_SECONDS if _waiting(request, game) else 0  # type: ignore[attr-defined]
    request.game_paused = game.paused and game.finished_at is None  # type: ignore[attr-defined]
    request.class_notice = notice_for(game) if game.finished_at is None else ""  # type: ignore[attr-defined]
    return kind_of(game).pages.page(request, seen_by(game, request.user))


def _waiting(request: HttpRequest, game: Game) -> bool:
    """The page waits for someone else: an AI seat, or in a game several students share another student's seat;
    while their lanes run side by side, for as long as its own student's lane has no move for them."""
    step = kind_of(game).next_step(game)
    if step.lanes:
        seat = seat_of(game, request.user)
        lane = next((lane for lane in step.lanes if lane.seat == seat), None)
        if lane is not None:
            return not lane.moves
    if step.actor is Actor.AI:
        return not game.paused  # `ai_acts_next`
    return step.actor is Actor.HUMAN and bool(step.seat) and step.seat != seat_of(game, request.user)


@login_required
@require_POST
def move(request: HttpRequest, game_id: int) -> HttpResponse:
    game = _own_game(request, game_id)
    return kind_of(game).pages.move(request, game)
