"""The negotiation's pages: the game page (delegation choice, then the table), the student's moves, the review.

The shared views (`simulations/views/`) check who may see or drive a game and hand it here through the kind's
`platform.KIND`; the templates are this folder's `templates/negotiation/`."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string

from simulations.ai.gateway import ModelFailure
from simulations.engine.errors import MachineError
from simulations.kinds.negotiation.games import scenario_of_version
from simulations.kinds.negotiation.machine import Status
from simulations.models import Game
from simulations.services.access import can_drive
from simulations.services.export import dollars, reader_export
from simulations.services.rate_limit import RateLimited, check_rate
from simulations.services.student_errors import for_student
from simulations.services.turns import StaleTurn
from simulations.views.play import MissingVersion, NulInForm, posted_version
from simulations.views.review import share_link

from .games import state_of
from .human_turns import PAYLOAD_FIELDS, submit_human_event
from .presenters import brief_context, game_context, persona_context, roles_context, transcript


def page(request: HttpRequest, game: Game) -> HttpResponse:
    context = game_context(game)
    if game.phase == Status.ROLE_SELECTION:
        scenario = scenario_of_version(game.scenario)
        context |= {
            "roles": roles_context(scenario),
            "persona": persona_context(scenario, request.GET.get("role", "")),
        }
        return render(request, "negotiation/setup.html", context)
    context["entries"] = transcript(game)
    context["brief"] = brief_context(context["scenario"], state_of(game))
    return render(request, "negotiation/page.html", context)


def move(request: HttpRequest, game: Game) -> HttpResponse:
    event = request.POST.get("event", "")
    payload = {k: request.POST[k] for k in PAYLOAD_FIELDS.get(event, ()) if k in request.POST}
    error, status = "", 200
    try:
        if any("\x00" in value for value in request.POST.values()):
            raise NulInForm()
        check_rate(user_id=int(request.user.pk or 0), action="move")
        version = posted_version(request)
        key = request.POST.get("idem") or None
        game = submit_human_event(
            game=game, event=event, payload=payload, expected_version=version, idempotency_key=key
        )
    except RateLimited as exc:
        error, status = str(exc), 429
    except StaleTurn as exc:
        error, status = for_student(exc), 409
    except (MissingVersion, NulInForm) as exc:
        error, status = str(exc), 400
    except (MachineError, ModelFailure, ValueError) as exc:
        error, status = for_student(exc), 409
    if not request.htmx:  # type: ignore[attr-defined]
        return redirect("game", game_id=game.pk)
    game.refresh_from_db()
    context = game_context(game) | {"error": error}
    if game.phase == Status.ROLE_SELECTION:
        scenario = scenario_of_version(game.scenario)
        context |= {
            "roles": roles_context(scenario),
            "persona": persona_context(scenario, payload.get("role", "")),
        }
    # The panels, and the notice above them: the notice lives outside #panels, so a turn arriving over the
    # websocket a moment later does not wipe the sentence before it is read (the next move clears it).
    panels = render_to_string("negotiation/_panels.html", context, request=request)
    notice = render_to_string("game/_notice.html", {"error": error, "oob": True}, request=request)
    return HttpResponse(panels + notice, status=status)


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


def review(request: HttpRequest, game: Game) -> HttpResponse:
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
    return render(
        request,
        "negotiation/review.html",
        {
            "game": game, "human": names.get(game.human_role, ""), "rounds": rounds, "votes": votes,
            "shifts": shifts, "summary": section["summary"], "debrief": debrief_sections(section["summary"] or ""),
            "usage": data["token_usage"], "usage_rows": usage_rows,
            "cost": dollars(data["token_usage"]["cost_usd"]), "model": played_by,
            "judge_model": judged_by if judged_by and judged_by != played_by else "", "judge": data["judge_calls"],
            "fallback_percent": _percent(data["judge_calls"]["fallback_rate"]),
            "owner": can_drive(request.user, game), "share_url": share_link(request, game), "finished": game.phase == Status.REVIEW,
        },
    )  # fmt: skip


def _percent(rate: float | None) -> str:
    return "" if rate is None else f"{rate:.0%}"
