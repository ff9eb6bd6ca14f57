"""Class sessions' pages (services/people/class_sessions.py): a teacher opens a session and watches its room; students join
with the code, wait, then each opens their own game. Every page checks who is asking: the room, its roster and
the results are the session's teacher's; the waiting page and the game button are its members'."""

from __future__ import annotations

import io
import json
import secrets
import zipfile
from typing import Any

import segno
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.safestring import SafeString
from django.views.decorators.http import require_http_methods, require_POST

from simulations.kinds import get_kind
from simulations.models import ClassGuest, ClassMember, ClassSession, Game
from simulations.services.content.model_choice import UnknownModelChoice, options
from simulations.services.content.scenarios import latest_version
from simulations.services.files.export import export_game
from simulations.services.ledger.snapshot import one_snapshot
from simulations.services.pages.broadcast import notify_class_changed
from simulations.services.people import class_results
from simulations.services.people import class_sessions as sessions
from simulations.services.policy.rate_limit import RateLimited

from .accounts import client_address
from .lobby import latest_scenarios

ROSTER_EVERY_SECONDS = 3  # the waiting page asks again this often (htmx; a reload without)
ROOM_FALLBACK_SECONDS = (
    15  # the room's roster, should its websocket be down (it says when to fetch otherwise)
)
MAX_STUDENTS = 200
RETURN_CODE_KEY = "class_return_code"  # a name-only student's return code, in their login's session only
MIN_TURN_SECONDS, MAX_TURN_SECONDS = 20, 3600


def _taught(request: HttpRequest, session_id: int) -> ClassSession:
    session = get_object_or_404(ClassSession.objects.select_related("scenario"), pk=session_id)
    if not sessions.teaches(request.user, session):  # type: ignore[arg-type]
        raise Http404("No such class session.")  # another teacher's session does not exist for you
    return session


def _joined(request: HttpRequest, session_id: int) -> ClassSession:
    session = get_object_or_404(ClassSession.objects.select_related("scenario"), pk=session_id)
    if not ClassMember.objects.filter(session=session, student=request.user.pk).exists():
        raise Http404("No such class session.")
    return session


@login_required
def session_list(request: HttpRequest) -> HttpResponse:
    if not sessions.may_teach(request.user):  # type: ignore[arg-type]
        raise Http404("No such page.")
    mine = ClassSession.objects.filter(teacher=request.user.pk).select_related("scenario")
    return render(request, "classes/list.html", {"class_sessions": mine})


@login_required
@require_http_methods(["GET", "POST"])
def session_new(request: HttpRequest) -> HttpResponse:
    if not sessions.may_teach(request.user):  # type: ignore[arg-type]
        raise Http404("No such page.")
    error, status = "", 200
    if request.method == "POST":
        version = latest_version(slug=request.POST.get("scenario", ""))
        try:
            students = int(request.POST.get("max_students", "30"))
            per_game = int(request.POST.get("students_per_group", "1"))
            seats = [s for s in request.POST.get("seats", "").replace(",", " ").split() if s]
            turn = int(request.POST.get("turn_seconds") or 0)
            budget = int(request.POST.get("token_budget") or 0)
        except ValueError:
            students = per_game = turn = budget = -1
        keys = {o.key for o in options()}
        model = request.POST.get("model", "")
        if version is None:
            error = "Choose a scenario from the list."
        elif not 1 <= students <= MAX_STUDENTS:
            error = f"A session takes 1 to {MAX_STUDENTS} students."
        elif model and model not in keys:
            error = "That model is no longer offered: choose another."
        elif not 1 <= per_game <= students:
            error = "Students per game: at least one, at most the session's students."
        elif budget < 0:
            error = "A model budget is a number of tokens (empty: the site's)."
        elif turn and not MIN_TURN_SECONDS <= turn <= MAX_TURN_SECONDS:
            error = f"A turn limit is {MIN_TURN_SECONDS} to {MAX_TURN_SECONDS} seconds (empty: none)."
        else:
            try:
                session = sessions.open_session(
                    teacher=request.user,  # type: ignore[arg-type]
                    version=version, title=request.POST.get("title", "")[:120], max_students=students, model=model,
                    students_per_group=per_game, turn_seconds=turn or None, seats=seats,
                    results_shared=request.POST.get("results_shared") == "on", token_budget=budget or None,
                    students_choose=request.POST.get("students_choose") == "on",
                )  # fmt: skip
                return redirect("class_room", session_id=session.pk)
            except sessions.GroupsRefused as exc:
                error = str(exc)
        status = 400
    context = {
        "scenarios": latest_scenarios(),
        "model_options": options(),
        "error": error,
        "posted": request.POST,
    }
    return render(request, "classes/new.html", context, status=status)


@login_required
def room(request: HttpRequest, session_id: int) -> HttpResponse:
    session = _taught(request, session_id)
    join_url = request.build_absolute_uri(f"/join/{session.code}/")
    # The link as a QR code drawn here (SVG): phones in the room open it without typing.
    qr = segno.make(join_url, error="m").svg_inline(
        scale=4, border=2, light="#fff", title=f"Join: {join_url}"
    )
    context = {"session": session, "rows": sessions.roster(session), "join_url": join_url, "qr": SafeString(qr),
               "every": ROOM_FALLBACK_SECONDS}  # fmt: skip
    return render(request, "classes/room.html", context)


@login_required
def roster(request: HttpRequest, session_id: int) -> HttpResponse:
    """The room's live part: the students, each game's phase and whom it waits for (asked again every few seconds)."""
    session = _taught(request, session_id)
    context = {"session": session, "rows": sessions.roster(session), "every": ROOM_FALLBACK_SECONDS}
    return render(request, "classes/_roster.html", context)


@login_required
@require_POST
def start(request: HttpRequest, session_id: int) -> HttpResponse:
    sessions.start(_taught(request, session_id))
    return redirect("class_room", session_id=session_id)


@login_required
@require_POST
def end(request: HttpRequest, session_id: int) -> HttpResponse:
    sessions.end(_taught(request, session_id))
    return redirect("class_room", session_id=session_id)


@login_required
@require_POST
def pause(request: HttpRequest, session_id: int, game_id: int | None = None) -> HttpResponse:
    """The whole session's AI waits, or one game's (`game_id`): no model calls until resumed."""
    session = _taught(request, session_id)
    sessions.pause(session, _session_game(session, game_id))
    return redirect("class_room", session_id=session_id)


@login_required
@require_POST
def guest_return_code(request: HttpRequest, session_id: int, guest_id: int) -> HttpResponse:
    """A new return code for a name-only student who lost theirs, shown to the teacher once."""
    session = _taught(request, session_id)
    try:
        name, code = sessions.reissue_return_code(session, guest_id)
    except ClassGuest.DoesNotExist as exc:
        raise Http404("No such student in this session.") from exc
    messages.success(
        request, f"{name}'s new return code: {code}. Their old one no longer works; with this one and the "
        "class code, Coming back? on the join page brings them back to their game.",
    )  # fmt: skip
    return redirect("class_room", session_id=session_id)


@login_required
@require_POST
def resume(request: HttpRequest, session_id: int, game_id: int | None = None) -> HttpResponse:
    session = _taught(request, session_id)
    sessions.resume(session, _session_game(session, game_id))
    return redirect("class_room", session_id=session_id)


@login_required
@require_POST
def notice(request: HttpRequest, session_id: int) -> HttpResponse:
    """The teacher's notice to every student of the session, shown at once on their open pages."""
    session = _taught(request, session_id)
    try:
        sessions.send_notice(session, request.POST.get("notice", ""))
        messages.success(request, "Your notice went to every student.")
    except ValueError as exc:
        messages.error(request, str(exc))
    return redirect("class_room", session_id=session_id)


@login_required
@require_POST
def stand_in(request: HttpRequest, session_id: int, game_id: int, seat: str) -> HttpResponse:
    """Hand a group's student's seat to the AI's stand-in (`to_ai=1`), or back to the student (`to_ai=0`)."""
    session = _taught(request, session_id)
    game = _session_game(session, game_id)
    assert game is not None
    if not sessions.hand_seat(session, game, seat, to_ai=request.POST.get("to_ai") == "1"):
        raise Http404("No student holds that seat in this game.")
    return redirect("class_room", session_id=session_id)


def _session_game(session: ClassSession, game_id: int | None) -> Game | None:
    if game_id is None:
        return None
    game = sessions.session_games(session).filter(pk=game_id).first()
    if game is None:
        raise Http404("No such game in this session.")
    return game


@login_required
def results(request: HttpRequest, session_id: int) -> HttpResponse:
    session = _taught(request, session_id)
    response = HttpResponse(class_results.results_csv(session), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="class-{session.code}.csv"'
    return response


@login_required
def results_page(request: HttpRequest, session_id: int) -> HttpResponse:
    """Every game of the session side by side: each issue's outcome, its verdict, the model cost, each student's
    aims met or not and words that moved positions (their review a click away); a chart of how many games adopted
    each issue; the downloads."""
    session = _taught(request, session_id)
    return render(
        request, "classes/results.html", _results_context(session, class_results.class_results(session))
    )


@login_required
def shared_results(request: HttpRequest, session_id: int) -> HttpResponse:
    """The class's results for its students, when the teacher shares them: every game's outcomes, no names (their
    own game and seat marked, its review a click away; words others said in private not quoted)."""
    session = _joined(request, session_id)
    if not session.results_shared:
        raise Http404("Your teacher has not shared the class's results.")
    found = class_results.class_results(session)
    seats = class_results.seats_of(session, request.user.pk)
    games = {pk for pk, _ in seats}
    context = _results_context(session, found, mine=seats) | {"anonymous": True, "mine": games}
    return render(request, "classes/results.html", context)


def _results_context(
    session: ClassSession, found: class_results.ClassResults, *, mine: set[tuple[int, str]] | None = None
) -> dict[str, Any]:
    """`mine`: the reader's own seats, for the anonymised page (None: the teacher's, with every name)."""
    shares = [
        {"title": title, "adopted": adopted, "voted": voted, "y": CHART_ROW * n + 4,
         "width": round(CHART_WIDTH * adopted / voted) if voted else 0}
        for n, (_, title, adopted, voted) in enumerate(found.adopted_share())
    ]  # fmt: skip
    rows = [
        {"title": title, "cells": [_outcome(g.outcomes.get(issue)) for g in found.games]}
        for issue, title in found.issues
    ]
    axis_y = CHART_ROW * len(shares) + 8
    numbers = {issue: n for n, (issue, _) in enumerate(found.issues, start=1)}
    students = [[_student(g, s, numbers, mine) for s in g.results] for g in found.games]
    return {"session": session, "results": found, "shares": shares, "rows": rows, "axis_y": axis_y,
            "students": students, "verdicts": any(g.verdict for g in found.games),
            "chart": {"left": CHART_LEFT, "right": CHART_LEFT + CHART_WIDTH, "width": CHART_LEFT + CHART_WIDTH + 90,
                      "height": axis_y + 18}}  # fmt: skip


CHART_LEFT, CHART_WIDTH, CHART_ROW = 230, 320, 28  # the adoption chart: labels' room, a bar at 100 %, a row


def _student(
    played: class_results.GameResult,
    student: class_results.StudentResult,
    numbers: dict[str, int],
    mine: set[tuple[int, str]] | None,
) -> dict[str, Any]:
    """One student's cell: who (no name on the anonymised page), their aims, the words that moved positions (on the
    anonymised page, words another student said in private are not quoted), their review's link (there, their own
    only)."""
    own = mine is not None and (played.game.pk, student.seat) in mine
    review = reverse("review", args=[played.game.pk])
    if mine is None and student.review_seat:  # the teacher reads it from this student's seat
        review += "?" + urlencode({"seat": student.review_seat})
    result = student.result
    return {
        "who": student.name if mine is None else "You" if own else "A student",
        "seat": student.seat_name or student.seat, "met": result.met, "own": own,
        "aims": [{"issue": numbers.get(a.issue), "words": a.words, "met": a.met} for a in result.aims],
        "moved": [{"words": w.words if mine is None or own or not w.private else "", "moved": w.moved,
                   "where": w.where} for w in result.moved],
        "review": review if mine is None or own else "",
    }  # fmt: skip


def _outcome(vote: tuple[str, bool] | None) -> str:
    if vote is None:
        return "not voted yet"
    return f"{vote[0]} {'adopted' if vote[1] else 'rejected'}"


@login_required
def results_by_game(request: HttpRequest, session_id: int) -> HttpResponse:
    """One row per game per issue: its students and seats, the option put to the vote, adopted or not."""
    session = _taught(request, session_id)
    response = HttpResponse(
        class_results.results_by_game_csv(session), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="class-{session.code}-by-game.csv"'
    return response


@login_required
def games_zip(request: HttpRequest, session_id: int) -> HttpResponse:
    """Every game of the session as its export (JSON, whole: its teacher reads everything), and the class's CSV."""
    session = _taught(request, session_id)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"class-{session.code}.csv", class_results.results_csv(session))
        for game in sessions.session_games(session).order_by("pk"):
            with one_snapshot():
                body = json.dumps(export_game(game=game), indent=2, ensure_ascii=False)
            archive.writestr(f"game-{game.pk}.json", body)
    response = HttpResponse(buffer.getvalue(), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="class-{session.code}-games.zip"'
    return response


@require_http_methods(["GET", "POST"])
def join(request: HttpRequest, code: str = "") -> HttpResponse:
    """GET: the code form (filled from a link's code; without an account, with a name field too). POST: join, then
    the waiting page; a visitor who is not logged in joins with a name only (`sessions.join_as_guest`)."""
    error, status = "", 200
    if request.method == "POST":
        try:
            if request.user.is_authenticated:
                session = sessions.join(user=request.user, code=request.POST.get("code", ""))  # type: ignore[arg-type]
            elif request.POST.get("return_code"):
                session, guest = sessions.return_as_guest(
                    code=request.POST.get("code", ""), return_code=request.POST.get("return_code", ""),
                    address=client_address(request),
                )  # fmt: skip
                login(request, guest, backend=settings.AUTHENTICATION_BACKENDS[0])
            else:
                session, guest, return_code = sessions.join_as_guest(
                    name=request.POST.get("name", ""), code=request.POST.get("code", ""),
                    address=client_address(request),
                )  # fmt: skip
                login(request, guest, backend=settings.AUTHENTICATION_BACKENDS[0])
                request.session[RETURN_CODE_KEY] = return_code  # shown on their page while this login lasts
            return redirect("class_wait", session_id=session.pk)
        except sessions.JoinRefused as exc:
            error, status = str(exc), 400
        except RateLimited as exc:
            error, status = str(exc), 429
        code = request.POST.get("code", "")
    context = {
        "code": code[:20], "error": error, "name": request.POST.get("name", "")[:60],
        "returning": bool(request.POST.get("return_code")),
    }  # fmt: skip
    return render(request, "classes/join.html", context, status=status)


@login_required
def wait(request: HttpRequest, session_id: int) -> HttpResponse:
    """The student's page of the session: waiting for the teacher, then the way into their own game."""
    session = _joined(request, session_id)
    games = sessions.student_games(session, request.user.pk).order_by("-created_at")
    context: dict[str, Any] = {
        "session": session, "game": games.first(), "every": ROSTER_EVERY_SECONDS,
        "return_code": request.session.get(RETURN_CODE_KEY, ""),
    }  # fmt: skip
    if session.students_choose and session.status == ClassSession.Status.WAITING:
        member = ClassMember.objects.get(session=session, student=request.user.pk)
        roles = session.scenario.roles.order_by("position").values_list("role_id", "name")
        context |= {"seats": list(roles), "wanted": member.wanted_seat}
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, "classes/_wait.html", context)
    request.watch_refresh = 0 if session.status != ClassSession.Status.WAITING else ROSTER_EVERY_SECONDS  # type: ignore[attr-defined]
    return render(request, "classes/wait.html", context)


@login_required
@require_POST
def choose_seat(request: HttpRequest, session_id: int) -> HttpResponse:
    """A student asks for a seat while the session waits (a session whose students choose)."""
    session = _joined(request, session_id)
    if sessions.want_seat(session, request.user, request.POST.get("seat", "")):  # type: ignore[arg-type]
        messages.success(request, "Noted: you get that seat unless someone in your group asked for it first.")
    else:
        messages.error(request, "Seats are chosen only before the session starts, among the scenario's.")
    return redirect("class_wait", session_id=session_id)


@login_required
@require_POST
def play(request: HttpRequest, session_id: int) -> HttpResponse:
    """The student's own game of the session: the one they have going, or a new one (the kind's own start)."""
    session = _joined(request, session_id)
    if session.status != ClassSession.Status.RUNNING:
        messages.error(request, "The session is not running: wait for your teacher to start it.")
        return redirect("class_wait", session_id=session_id)
    going = sessions.student_games(session, request.user.pk).filter(finished_at__isnull=True).first()
    if going is not None:
        return redirect("game", game_id=going.pk)
    if session.paused:  # a game started now would play its AI at once
        messages.error(request, "Your teacher has paused the session: start your game when it resumes.")
        return redirect("class_wait", session_id=session_id)
    try:
        started = get_kind(session.scenario.kind).pages.new_game(
            request, session.scenario, seed=secrets.randbelow(2**31), model=session.model or None
        )
        sessions.give_budget(session)  # the session's model budget on the game just made
        notify_class_changed(session.pk)  # a new game (or a set-up form): the room follows it
        return started
    except UnknownModelChoice as exc:  # the admin disabled the session's model since
        messages.error(request, f"{exc} Tell your teacher.")
        return redirect("class_wait", session_id=session_id)
