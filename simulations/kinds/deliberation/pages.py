"""The deliberation's pages, reached through the kind contract (`Deliberation` in platform.py): the set-up form,
the game page and its websocket updates, the person's moves, the review and the downloads.

The shared shells have already checked who may see or drive the game. Moves and the set-up are plain form posts
(files and code travel as multipart; an error re-renders the whole page with the input kept); the page's
websocket (the shared consumer) pushes every committed step and the streamed words of the persona speaking.
The set-up and each move queue the game's background drive themselves, as the other kinds' do: a page without
JavaScript (no websocket) still sees the committee reach its verdict, a reload at a time."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.views.decorators.http import require_http_methods

from simulations.engine.errors import IllegalEvent, InvalidMove
from simulations.models import Game, ScenarioVersion
from simulations.services.content.scenarios import parsed_scenario, playable_version
from simulations.services.pages.fragments import fragment
from simulations.services.people.access import can_drive, share_link
from simulations.services.play.model_step import Move as PlatformMove
from simulations.services.policy.moves import (
    BadField,
    NotNow,
    StartRefused,
    start_from_setup,
    take_posted_move,
)

from . import amendments, checks, forms, machine
from .games import scenario_of, state_of
from .machine import Event, Refusal
from .offline import AmendedCode, Move
from .presenters import (
    chart,
    page_context,
    rounds_view,
    stance_choices,
    submission_view,
    verdict_view,
    viewer,
)
from .presenters import phase_label as phase_label
from .scenario import DeliberationScenario
from .state import DeliberationState

# Room around the code fields in a set-up post (the other fields, multipart boundaries): a post larger than this
# cannot hold a reviewable submission and is refused before Django reads its body.
FORM_OVERHEAD_BYTES = 64 * 1024


class MoveRefused(Exception):
    """The sentences for a move the person cannot make now (the committee's own reasons: `Refusal.STUDENT_SENTENCES`)."""

    NOT_YOUR_TURN = Refusal.STUDENT_SENTENCES[Refusal.WRONG_SEAT]
    NO_VETO_RIGHT = Refusal.STUDENT_SENTENCES[Refusal.NO_VETO_RIGHT]
    NO_CRITICAL_FLAW = Refusal.STUDENT_SENTENCES[Refusal.NO_CRITICAL_FLAW]
    BAD_MOVE = Refusal.STUDENT_SENTENCES[""]
    POST_TOO_LARGE = "The submission is larger than the {limit:,}-byte limit."


def _refuse_oversized_post(request: HttpRequest, scenario: DeliberationScenario) -> None:
    limit = scenario.checks.max_bytes
    declared = request.META.get("CONTENT_LENGTH") or "0"
    if declared.isdigit() and int(declared) > 2 * limit + FORM_OVERHEAD_BYTES:
        raise checks.CheckError(MoveRefused.POST_TOO_LARGE.format(limit=limit))


def _pasted(text: str) -> str:
    return text.replace("\r\n", "\n")  # browsers send a textarea's lines with CRLF; the code had LF


# --- set-up ---------------------------------------------------------------------------------------------------


def setup_url(version: ScenarioVersion, model: str | None) -> str:
    url = reverse("deliberation_setup", args=[version.pk])
    return f"{url}?model={model}" if model else url


def start_options(form: forms.StartForm) -> dict[str, Any]:
    """The kind's start options from a valid set-up form (an upload was read and checked by the form)."""
    data = form.cleaned_data
    source: str = data["source"]
    options: dict[str, Any]
    if source == "sample":
        options = {"sample": data["sample"]}
    elif source == "paste":
        options = {"code": _pasted(data["code"]), "filename": data["filename"] or "submission.py",
                   "source": "paste"}  # fmt: skip
    elif source == "diff" and (data.get("diff") or "").strip():
        options = {"code": _pasted(data["diff"]), "filename": "change.diff", "source": "diff"}
    else:
        uploaded: forms.UploadedCode = data["uploaded"]
        options = {"code": uploaded.text, "filename": uploaded.name, "source": source}
    if data.get("seat"):
        options["seat"] = data["seat"]
    return options


@login_required
@require_http_methods(["GET", "POST"])
def setup(request: HttpRequest, version_id: int) -> HttpResponse:
    """GET: the set-up form. POST: check the code with the tools, create the deliberation, open it."""
    version = playable_version(version_id=version_id, kind="deliberation")
    scenario: DeliberationScenario = parsed_scenario(version)
    error, status = "", 200
    if request.method == "GET":
        form = forms.StartForm(scenario=scenario, initial={"model": request.GET.get("model", "")})
    else:
        form = forms.StartForm(scenario=scenario)  # replaced below once the size is known to be reviewable
        try:
            _refuse_oversized_post(request, scenario)
            form = forms.StartForm(request.POST, request.FILES, scenario=scenario)
            if form.is_valid():
                model = form.cleaned_data["model"]
                return start_from_setup(request, version, options=start_options(form), model=model)
            status = 400
        except checks.CheckError as exc:
            error, status = str(exc), 400
        except StartRefused as exc:
            error, status = str(exc), exc.status
    context = {"version": version, "scenario": scenario, "form": form, "error": error,
               "max_bytes": scenario.checks.max_bytes}  # fmt: skip
    return render(request, "deliberation/setup.html", context, status=status)


def new_game(request: HttpRequest, version: ScenarioVersion, *, seed: int, model: str | None) -> HttpResponse:
    """The lobby's start: the set-up form first (what to review, which seat), with the lobby's model choice; the
    form draws its own seed when it creates the game."""
    return redirect(setup_url(version, model))


# --- the game page and its updates ----------------------------------------------------------------------------


def _context(game: Game) -> dict[str, Any]:
    return page_context(scenario_of(game), state_of(game), game=game)


def page(
    request: HttpRequest,
    game: Game,
    *,
    error: str = "",
    kept: dict[str, str] | None = None,
    form: Any = None,
    status: int = 200,
) -> HttpResponse:
    """The game page; after a refused move, with the sentence saying why and the person's input `kept`.
    An HTMX post gets the live parts instead (its panels, the rest out of band)."""
    field_errors = (
        [(form.fields[name].label or name.replace("_", " ").capitalize(), list(messages))
         for name, messages in form.errors.items()]
        if form is not None
        else []
    )  # fmt: skip
    context = _context(game) | {"error": error, "kept": kept or {}, "field_errors": field_errors}
    if getattr(request, "htmx", False):
        # htmx swaps only 2xx and 409 responses here (base.html's responseHandling): a refusal is sent as 409
        # so the sentence shows; a plain post keeps 400 for input the committee could not read.
        return HttpResponse(_live_parts(context, request=request), status=status)
    return render(request, "deliberation/page.html", context, status=status)


def _live_parts(context: dict[str, Any], *, request: HttpRequest | None, oob_panels: bool = False) -> str:
    parts = [render_to_string("deliberation/_panels.html", context | {"oob": oob_panels}, request=request)]
    parts += [
        render_to_string(name, context | {"oob": True}, request=request)
        for name in ("deliberation/_submission.html", "deliberation/_rounds.html")
    ]
    return "".join(parts)


def render_update(
    game: Game, *, since_seq: int, full: bool, shown: dict[str, str] | None = None
) -> tuple[str, int]:
    """Every live part of the page, swapped out of band (a deliberation's log is short: each update redraws it
    whole), and an empty stream box: the turn that streamed is now in the rounds."""
    html = _live_parts(_context(game), request=None, oob_panels=True) + fragment("game/_stream.html", {})
    return html, len(state_of(game).log)


# --- moves ----------------------------------------------------------------------------------------------------


def amended_filename(scenario: DeliberationScenario, state: DeliberationState) -> str:
    """Pasted amended code keeps the first submission's file name, so the tools read it as the same file."""
    first = state.submissions[0]
    sample = next((s for s in scenario.samples if s.label == first.label), None)
    if first.source == "sample" and sample is not None:
        return sample.filename
    return first.label if first.label.endswith(".py") else "submission.py"


def _valid(form: Any) -> dict[str, Any]:
    """The form's data; raises BadField carrying the bound form, which says which field is wrong, beside it."""
    if not form.is_valid():
        name, messages = next(iter(form.errors.items()))
        label = form.fields[name].label if name in form.fields else None
        raise BadField(f"{label}: {messages[0]}" if label else str(messages[0]), kept=form)
    data: dict[str, Any] = form.cleaned_data
    return data


def _build_move(
    post: Mapping[str, str],
    files: Mapping[str, Any],
    scenario: DeliberationScenario,
    state: DeliberationState,
    step: machine.Step,
    event: Event,
) -> Move:
    """The person's move from the form; raises BadField (a field is wrong, an upload cannot be read)."""
    assert step.seat is not None
    limit = scenario.checks.max_bytes
    if event == Event.OPINION_GIVEN:
        data = _valid(forms.OpinionForm(post, stances=stance_choices(scenario, step.seat)))
        return Move(event, machine.Opinion(seat=step.seat, stance=data["stance"], confidence=data["confidence"],
                                           text=data["text"], fix_items=data["fix_items"]))  # fmt: skip
    if event == Event.AMENDED_CODE_SUBMITTED:
        data = _valid(forms.AmendForm(post, files, max_bytes=limit))
        uploaded: forms.UploadedCode | None = data.get("uploaded")
        if uploaded is not None:
            code, filename = uploaded.text, uploaded.name
        else:
            code, filename = _pasted(data["code"]), amended_filename(scenario, state)
        label = f"{filename}, amended by the proposer"
        return Move(event, amended=AmendedCode(code=code, filename=filename, label=label))
    if event in (Event.AMENDMENT_DECLINED, Event.COMPROMISE_DECLINED):
        data = _valid(forms.StatementForm(post))
        return Move(event, machine.PAYLOADS[event].model_validate({"text": data["text"]}))
    if event == Event.COMPROMISE_OFFERED:
        data = _valid(forms.CompromiseForm(post))
        return Move(event, machine.CompromiseOffer(text=data["text"], conditions=data["conditions"]))
    raise NotNow(MoveRefused.NOT_YOUR_TURN)


intents: frozenset[str] = frozenset()


def read_move(game: Game, fields: Mapping[str, str], files: Mapping[str, Any]) -> PlatformMove:
    """A move by the person who holds the floor, amended code checked by the real tools first (a CheckError says
    what is wrong with it)."""
    scenario, state = scenario_of(game), state_of(game)
    step = machine.next_step(scenario, state)
    event = _open_event(scenario, state, step, fields.get("event", ""))
    chosen = _build_move(fields, files, scenario, state, step, event)
    payload = amendments.payload_for(scenario, chosen)
    return PlatformMove(chosen.event.value, payload.model_dump(mode="json") if payload is not None else {})


def move(request: HttpRequest, game: Game) -> HttpResponse:
    """A move by the person who holds the floor; any other post is refused with a sentence and nothing stored."""
    try:
        _refuse_oversized_post(request, scenario_of(game))
    except checks.CheckError as exc:
        return page(request, game, error=str(exc), status=400)  # the body is not read, so nothing can be kept
    taken = take_posted_move(request, game)
    if not taken.committed:
        if taken.kept is not None:  # the bound form: each wrong field says why, beside it
            return page(request, game, form=taken.kept, kept=_kept(request), status=taken.status)
        return page(request, game, error=taken.error, kept=_kept(request), status=taken.status)
    if getattr(request, "htmx", False):
        return page(request, Game.objects.select_related("scenario").get(pk=taken.game.pk))
    return redirect("game", game_id=taken.game.pk)


def _open_event(
    scenario: DeliberationScenario, state: DeliberationState, step: machine.Step, name: str
) -> Event:
    """The posted event, if it is the person's to make now (the page's version is current). Raises IllegalEvent
    for an event the committee does not take in this phase, InvalidMove (WRONG_ACTOR) for one it takes from
    someone else now: an AI persona holds the floor."""
    allowed = machine.allowed_events(scenario, state)
    if name not in allowed:
        raise IllegalEvent(state.status.value, name, [e.value for e in allowed])
    if not step.human:
        raise InvalidMove(state.status.value, name, InvalidMove.WRONG_ACTOR)
    return Event(name)


def _kept(request: HttpRequest) -> dict[str, str]:
    """What the person typed, to fill the form again after a refusal (uploads cannot be kept by a browser)."""
    return {k: str(v) for k, v in request.POST.items() if k not in ("csrfmiddlewaretoken", "version", "idem")}


# --- review and downloads -------------------------------------------------------------------------------------


def review(request: HttpRequest, game: Game) -> HttpResponse:
    scenario, state = scenario_of(game), state_of(game)
    context = {
        "game": game, "scenario": scenario, "state": state, "rounds": rounds_view(scenario, state, viewer(state, game)),
        "charts": [chart(scenario, r) for r in state.rounds if r.ballots],
        "verdict": verdict_view(scenario, state), "submissions": [submission_view(s) for s in state.submissions],
        "owner": can_drive(request.user, game), "share_url": share_link(request, game), "finished": state.verdict is not None,
    }  # fmt: skip
    return render(request, "deliberation/review.html", context)


urlpatterns = [
    path("new/<int:version_id>/", setup, name="deliberation_setup")
]  # the set-up form creates the game
