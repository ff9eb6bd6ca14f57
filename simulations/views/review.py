"""The review: transcripts by round, votes, stance shifts, debrief, downloads and a read-only share link."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from simulations.kinds import kind_of
from simulations.models import Game
from simulations.services.access import can_drive, can_read, revoke_share, share_game, share_link_live
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


def _readable(request: HttpRequest, game_id: int, token: str | None) -> Game:
    game = get_object_or_404(games_with_scenario(), pk=game_id)
    if not can_read(request.user, game, token):
        raise Http404("No such game.")
    return game


def _review(request: HttpRequest, game: Game, token: str | None) -> HttpResponse:
    return kind_of(game).review(request, game, token=token)


def negotiation_review(request: HttpRequest, game: Game, token: str | None) -> HttpResponse:
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
    query = f"?token={token}" if token else ""
    share_url = (
        request.build_absolute_uri(reverse("shared_review", args=[game.share_token]))
        if share_link_live(game)
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
            "fallback_percent": _percent(data["judge_calls"]["fallback_rate"]), "query": query,
            "owner": can_drive(request.user, game), "share_url": share_url, "finished": game.phase == "REVIEW",
        },
    )  # fmt: skip


def _percent(rate: float | None) -> str:
    return "" if rate is None else f"{rate:.0%}"


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
