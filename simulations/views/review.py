"""The review shell: who may read a game (its owner, staff, a live share link), then the kind's review page
(`Kind.review`); downloads (the kind's own formats first, then the export), and sharing."""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from simulations.kinds import kind_of
from simulations.models import Game
from simulations.services.access import can_drive, can_read, revoke_share, share_game, share_link_live
from simulations.services.export import export_markdown, reader_export
from simulations.services.turns import games_with_scenario


def _readable(request: HttpRequest, game_id: int, token: str | None) -> Game:
    game = get_object_or_404(games_with_scenario(), pk=game_id)
    if not can_read(request.user, game, token):
        raise Http404("No such game.")
    return game


def _review(request: HttpRequest, game: Game, token: str | None) -> HttpResponse:
    return kind_of(game).review(request, game, token=token)


@login_required
def review(request: HttpRequest, game_id: int) -> HttpResponse:
    return _review(request, _readable(request, game_id, None), None)


def shared_review(request: HttpRequest, token: str) -> HttpResponse:
    game = get_object_or_404(games_with_scenario(), share_token=token)
    if not share_link_live(game):
        raise Http404("No such game.")
    return _review(request, game, token)


def download(request: HttpRequest, game_id: int, fmt: str) -> HttpResponse:
    if fmt not in ("json", "md"):  # every kind's formats (a kind answers for its own, see Kind.download)
        raise Http404("No such format.")
    token = request.GET.get("token")
    if not token and not request.user.is_authenticated:
        return redirect(f"{reverse('login')}?next={request.path}")
    game = _readable(request, game_id, token)
    own = kind_of(game).download(game, fmt)
    if own is not None:
        body, kind, name = own
        response = HttpResponse(body, content_type=kind)
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response
    if fmt == "json":
        body, kind = json.dumps(reader_export(game=game), indent=2, ensure_ascii=False), "application/json"
    else:
        body, kind = export_markdown(game=game), "text/markdown; charset=utf-8"
    response = HttpResponse(body, content_type=kind)
    response["Content-Disposition"] = (
        f'attachment; filename="mercury-game-{game.pk}.{"json" if fmt == "json" else "md"}"'
    )
    return response


@login_required
@require_POST
def share(request: HttpRequest, game_id: int) -> HttpResponse:
    game = get_object_or_404(games_with_scenario(), pk=game_id)
    if not can_drive(request.user, game):
        raise Http404("No such game.")
    share_game(game=game)
    return redirect("review", game_id=game.pk)


@login_required
@require_POST
def unshare(request: HttpRequest, game_id: int) -> HttpResponse:
    game = get_object_or_404(games_with_scenario(), pk=game_id)
    if not can_drive(request.user, game):
        raise Http404("No such game.")
    revoke_share(game=game)
    return redirect("review", game_id=game.pk)
