"""The deliberation's pages, reached through the kind contract (`Deliberation` in platform.py): the set-up form,
the game page and its websocket updates, the person's moves, the review and the downloads.

The shared shells have already checked who may see or drive the game. Moves and the set-up are plain form posts
(files and code travel as multipart; an error re-renders the whole page with the input kept); the page's
websocket (the shared consumer) pushes every committed step and the streamed words of the persona speaking.
The set-up and each move queue the game's background drive themselves, as the other kinds' do: a page without
JavaScript (no websocket) still sees the committee reach its verdict, a reload at a time."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from simulations.engine.errors import IllegalEvent, InvalidMove, MachineError
from simulations.models import Game, ScenarioVersion
from simulations.services import page_threads
from simulations.services.access import can_drive, share_link
from simulations.services.drive_queue import queue_drive_after_move, queue_drive_if_ai_next
from simulations.services.fragments import fragment
from simulations.services.model_choice import UnknownModelChoice
from simulations.services.move_form import FORM_REFUSALS, read_move_form, refusal_status
from simulations.services.rate_limit import RateLimited, check_rate
from simulations.services.scenarios import parsed_scenario, playable_version
from simulations.services.student_errors import for_student
from simulations.services.turns import StaleTurn, create_game

from . import checks, forms, machine
from .games import scenario_of, state_of
from .machine import Event, Refusal
from .offline import AmendedCode, Move
from .presenters import chart, page_context, rounds_view, stance_choices, submission_view, verdict_view
from .report import render_report
from .scenario import DeliberationScenario
from .state import DeliberationState
from .turns import submit_human_move

# Room around the code fields in a set-up post (the other fields, multipart boundaries): a post larger than this
# cannot hold a reviewable submission and is refused before Django reads its body.
FORM_OVERHEAD_BYTES = 64 * 1024


class MoveRefused(Exception):
    """A move the person cannot make now; the message is a sentence for them."""

    NOT_YOUR_TURN = "That move is not open now: the committee has moved on. The page shows where it stands."
    NO_VETO_RIGHT = "Your seat holds no veto: object or abstain instead."
    NO_CRITICAL_FLAW = (
        "A veto needs a critical finding in the verification results: object or abstain instead."
    )
    BAD_MOVE = "The committee cannot take this move as written: check each field and send it again."
    POST_TOO_LARGE = "The submission is larger than the {limit:,}-byte limit."

    @classmethod
    def from_refusal(cls, exc: Refusal) -> MoveRefused:
        """The committee's own reasons for refusing a legal event, in its words (the platform's `for_student`
        speaks of moves in general: it has no sentence for a veto without a critical flaw)."""
        for reason, sentence in (
            (Refusal.NO_VETO_RIGHT, cls.NO_VETO_RIGHT),
            (Refusal.NO_CRITICAL_FLAW, cls.NO_CRITICAL_FLAW),
            (Refusal.WRONG_SEAT, cls.NOT_YOUR_TURN),
        ):
            if exc.reason.startswith(reason):
                return cls(sentence)
        return cls(cls.BAD_MOVE)


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
                check_rate(user_id=int(request.user.pk or 0), action="new_game")
                game = create_game(
                    scenario_version=version, seed=secrets.randbelow(2**31), owner=request.user,  # type: ignore[arg-type]
                    model=form.cleaned_data["model"] or None, options=start_options(form),
                )  # fmt: skip
                queue_drive_if_ai_next(game)  # the first member speaks with no page connected, too
                return redirect("game", game_id=game.pk)
            status = 400
        except (checks.CheckError, UnknownModelChoice) as exc:
            error, status = str(exc), 400
        except RateLimited as exc:
            error, status = str(exc), 429
    context = {"version": version, "scenario": scenario, "form": form, "error": error,
               "max_bytes": scenario.checks.max_bytes}  # fmt: skip
    return render(request, "deliberation/setup.html", context, status=status)


def new_game(request: HttpRequest, version: ScenarioVersion, *, model: str | None) -> HttpResponse:
    """The lobby's start: the set-up form first (what to review, which seat), with the lobby's model choice."""
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


def render_update(game: Game, *, since_seq: int, full: bool) -> tuple[str, int]:
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


class InvalidForm(Exception):
    """A field of the move is wrong; the bound form says which, next to the field."""

    def __init__(self, form: Any) -> None:
        super().__init__("a field of the move is invalid")
        self.form = form


def _valid(form: Any) -> dict[str, Any]:
    if not form.is_valid():
        raise InvalidForm(form)
    data: dict[str, Any] = form.cleaned_data
    return data


def _build_move(
    request: HttpRequest,
    scenario: DeliberationScenario,
    state: DeliberationState,
    step: machine.Step,
    event: Event,
) -> Move:
    """The person's move from the posted form; raises InvalidForm (a field is wrong, an upload cannot be read)."""
    assert step.seat is not None
    post, files, limit = request.POST, request.FILES, scenario.checks.max_bytes
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
    raise MoveRefused(MoveRefused.NOT_YOUR_TURN)


def move(request: HttpRequest, game: Game) -> HttpResponse:
    """A move by the person who holds the floor; any other post is refused with a sentence and nothing stored."""
    scenario, state = scenario_of(game), state_of(game)
    step = machine.next_step(scenario, state)
    try:
        _refuse_oversized_post(request, scenario)
    except checks.CheckError as exc:
        return page(request, game, error=str(exc), status=400)  # the body is not read, so nothing can be kept
    try:
        version = read_move_form(request.POST, user_id=int(request.user.pk or 0))
        if version != game.version:
            raise StaleTurn()  # a page (or a double click) older than the game: say so before anything else
        event = _open_event(scenario, state, step, request.POST.get("event", ""))
        game = submit_human_move(
            game=game, move=_build_move(request, scenario, state, step, event), expected_version=version,
            idempotency_key=(request.POST.get("idem") or None),
        )  # fmt: skip
    except InvalidForm as exc:
        return page(request, game, form=exc.form, kept=_kept(request), status=400)
    except FORM_REFUSALS as exc:
        return page(request, game, error=str(exc), kept=_kept(request), status=refusal_status(exc))
    except StaleTurn as exc:
        return page(request, game, error=for_student(exc), kept=_kept(request), status=409)
    except checks.CheckError as exc:
        return page(request, game, error=str(exc), kept=_kept(request), status=400)
    except MoveRefused as exc:
        return page(request, game, error=str(exc), kept=_kept(request), status=409)
    except Refusal as exc:
        return page(request, game, error=str(MoveRefused.from_refusal(exc)), kept=_kept(request), status=409)
    except MachineError as exc:
        return page(request, game, error=for_student(exc), kept=_kept(request), status=409)
    # The committee answers at once, page or no page (as the negotiation's moves do: after the answer, in a page
    # thread; should that fail, a connected page queues the drive when the game has been quiet for a while).
    page_threads.soon(queue_drive_after_move, game)
    if getattr(request, "htmx", False):
        return page(request, Game.objects.select_related("scenario").get(pk=game.pk))
    return redirect("game", game_id=game.pk)


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
        "game": game, "scenario": scenario, "state": state, "rounds": rounds_view(scenario, state),
        "charts": [chart(scenario, r) for r in state.rounds if r.ballots],
        "verdict": verdict_view(scenario, state), "submissions": [submission_view(s) for s in state.submissions],
        "owner": can_drive(request.user, game), "share_url": share_link(request, game), "finished": state.verdict is not None,
    }  # fmt: skip
    return render(request, "deliberation/review.html", context)


def download(game: Game, fmt: str) -> tuple[str, str, str] | None:
    if fmt == "md":
        body = render_report(scenario_of(game), state_of(game))
        return body, "text/markdown; charset=utf-8", "review-report.md"
    return None  # "json": the platform's export (simulation-export/3 with the deliberation's section)
