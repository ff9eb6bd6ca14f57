"""The review: transcripts by round, votes, stance shifts, debrief, downloads and a read-only share link."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from simulations.models import Game
from simulations.services.access import (
    can_drive,
    can_read,
    game_for_share_token,
    grant_share,
    granted_token,
    revoke_share,
    share_game,
    share_link_live,
)
from simulations.services.export import dollars, export_markdown, reader_export
from simulations.services.turns import games_with_scenario

from .presenters import transcript


@dataclass
class DebriefSection:
    """A part of the debrief: an optional heading, then paragraphs and bullet lists in their order."""

    heading: str = ""
    blocks: list[tuple[str, list[str]]] = field(default_factory=list)  # ("p", [text]) | ("ul", [items])


def debrief_sections(text: str) -> list[DebriefSection]:
    """The debrief as sections: lines starting with `#` are headings, `- ` lines are bullets, other lines are
    paragraphs (a model's plain paragraphs render as one untitled section). Text only: the template escapes."""
    sections = [DebriefSection()]
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            sections.append(DebriefSection(heading=line.lstrip("#").strip()))
        elif line.startswith(("- ", "* ")):
            blocks = sections[-1].blocks
            if blocks and blocks[-1][0] == "ul":
                blocks[-1][1].append(line[2:].strip())
            else:
                blocks.append(("ul", [line[2:].strip()]))
        else:
            sections[-1].blocks.append(("p", [line]))
    return [s for s in sections if s.heading or s.blocks]


def _readable(request: HttpRequest, game_id: int) -> Game:
    game = get_object_or_404(games_with_scenario(), pk=game_id)
    if not can_read(request.user, game, granted_token(request.session, game_id)):
        raise Http404("No such game.")
    return game


def _may_try(request: HttpRequest, game_id: int) -> bool:
    """Logged in, or holding a share grant for this game; anyone else is sent to log in."""
    return request.user.is_authenticated or granted_token(request.session, game_id) is not None


def _review(request: HttpRequest, game: Game) -> HttpResponse:
    data = reader_export(game=game)
    section = data["negotiation"]
    names = {r["id"]: r["name"] for r in section["roles"]}
    labels = {o["id"]: o["label"] for i in section["issues"] for o in i["options"]}
    titles = {i["id"]: i["title"] for i in section["issues"]}
    entries = transcript(game)
    rounds = [
        {"number": n, "title": t, "entries": [e for e in entries if e.round == n]}
        for n, t in (
            (1, "Round 1: opening statements"),
            (2, "Round 2: private talks"),
            (3, "Round 3: debate and votes"),
        )
    ]
    votes = [
        {"title": titles[v["issue"]], "proposal": f"{v['proposal']} {labels[v['proposal']]}", "adopted": v["adopted"],
         "ballots": [(names[r], b) for r, b in v["ballots"].items()]}
        for v in data["votes"]
    ]  # fmt: skip
    shifts = [
        {"role": names[c["role"]], "field": c["field"], "option": c["after"] or c["before"],
         "label": labels[c["after"] or c["before"]], "reason": c["reason"]}
        for c in section["stance_changes"]
    ]  # fmt: skip
    usage_rows = [
        {"name": names.get(role, role.title()), **row, "cost": dollars(row.get("cost_usd"))}
        for role, row in data["token_usage"]["per_role"].items()
    ]
    played_by = data["game"]["model"]
    judged_by = data["game"]["judge_model"]
    # The token travels after '#': browsers never send it, so it reaches no access log (see services.access).
    share_url = (
        f"{request.build_absolute_uri(reverse('shared_entry'))}#{game.share_token}"
        if share_link_live(game) and can_drive(request.user, game)
        else ""
    )
    return render(
        request,
        "review.html",
        {
            "game": game, "human": names.get(game.human_role, ""), "rounds": rounds, "votes": votes,
            "shifts": shifts, "summary": section["summary"], "debrief": debrief_sections(section["summary"] or ""),
            "usage": data["token_usage"], "usage_rows": usage_rows,
            "cost": dollars(data["token_usage"]["cost_usd"]), "model": played_by,
            "judge_model": judged_by if judged_by and judged_by != played_by else "", "judge": data["judge_calls"],
            "fallback_percent": _percent(data["judge_calls"]["fallback_rate"]),
            "owner": can_drive(request.user, game), "share_url": share_url, "finished": game.phase == "REVIEW",
        },
    )  # fmt: skip


def _percent(rate: float | None) -> str:
    return "" if rate is None else f"{rate:.0%}"


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


def download(request: HttpRequest, game_id: int, fmt: str) -> HttpResponse:
    if fmt not in ("json", "md"):
        raise Http404("No such format.")
    if not _may_try(request, game_id):
        return redirect_to_login(request.path)
    game = _readable(request, game_id)
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
