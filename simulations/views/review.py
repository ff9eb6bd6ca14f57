"""The review shell: who may read a game (its owner, staff, a session granted by a live share link), then the
kind's review page (`Kind.pages.review`); downloads (the kind's own formats first, then the export), and sharing."""

from __future__ import annotations

import json
import re

from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from simulations.kinds import kind_of
from simulations.models import Game, GameSeat
from simulations.services.files.export import export_markdown, reader_export
from simulations.services.ledger.seats import seen_by, viewed_as
from simulations.services.ledger.snapshot import one_snapshot
from simulations.services.ledger.turns import games_with_scenario
from simulations.services.people.access import (
    can_drive,
    can_read,
    game_for_share_token,
    grant_share,
    granted_token,
    revoke_share,
    share_game,
)


def _readable(request: HttpRequest, game_id: int) -> Game:
    game = get_object_or_404(games_with_scenario(), pk=game_id)
    if not can_read(request.user, game, granted_token(request.session, game_id)):
        raise Http404("No such game.")
    return game


def _may_try(request: HttpRequest, game_id: int) -> bool:
    """Logged in, or holding a share grant for this game; anyone else is sent to log in."""
    return request.user.is_authenticated or granted_token(request.session, game_id) is not None


def _review(request: HttpRequest, game: Game) -> HttpResponse:
    """The review as its reader sees it; a reader who holds no seat in it and reads it without a share link (the
    class's teacher, staff) may read it from one student's seat (`?seat=`: the class's results link each student's)."""
    seen, seat = seen_by(game, request.user), request.GET.get("seat", "")
    reads_every_seat = seen is game and not can_drive(request.user, game) and can_read(request.user, game)
    if seat and reads_every_seat and GameSeat.objects.filter(game=game, role=seat).exists():
        seen = viewed_as(game, seat)
    return kind_of(game).pages.review(request, seen)


def review(request: HttpRequest, game_id: int) -> HttpResponse:
    if not _may_try(request, game_id):
        return redirect_to_login(request.get_full_path())
    return _review(request, _readable(request, game_id))


@require_http_methods(["GET", "POST"])
def shared_entry(request: HttpRequest) -> HttpResponse:
    """GET: the page a share link opens; its script posts the token found after '#' (or the visitor pastes it).
    POST: a live token grants this session reading its game, then the token-free review."""
    if request.method == "GET":
        return render(request, "shared.html")
    game = game_for_share_token(request.POST.get("token", "").strip())
    if game is None:
        raise Http404("No such game.")
    grant_share(session=request.session, game=game)
    return redirect("review", game_id=game.pk)


def shared_review(request: HttpRequest, token: str) -> HttpResponse:
    """A link made before tokens moved after '#': grants as `shared_entry` does (this one request still carries
    the token in its path), then the token-free review."""
    game = game_for_share_token(token)
    if game is None:
        raise Http404("No such game.")
    grant_share(session=request.session, game=game)
    return redirect("review", game_id=game.pk)


DOWNLOAD_NAME = re.compile(r"[a-z]{1,20}(\.[a-z]{1,10})?")  # json, md, state.json, metrics.csv, ...


def download(request: HttpRequest, game_id: int, fmt: str) -> HttpResponse:
    if not DOWNLOAD_NAME.fullmatch(
        fmt
    ):  # a kind answers for its own formats (Kind.exports.download); others 404 below
        raise Http404("No such format.")
    if not _may_try(request, game_id):
        return redirect_to_login(request.path)
    with one_snapshot():  # the file is read as of one moment, however the game advances meanwhile
        game = seen_by(_readable(request, game_id), request.user)  # a group's student: from their own seat
        own = kind_of(game).exports.download(game, fmt)
    if own is not None:
        body, kind, name = own
        response = HttpResponse(body, content_type=kind)
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response
    if fmt not in ("json", "md"):
        raise Http404("This game has no such download.")
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
