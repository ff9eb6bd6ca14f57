"""Message Lab's pages, reached through the kind contract: the set-up form, the live board (stage progress, concept
cards by column, score chart, a stream box per participant), the quality gate and the resume after a failure, the
final report page and its downloads. The shared shells have already checked who may see or drive the game."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.views.decorators.http import require_http_methods

from simulations.models import Game, ScenarioVersion
from simulations.services.content.scenarios import parsed_scenario, playable_version
from simulations.services.pages.fragments import fragment
from simulations.services.people.access import can_drive, share_link
from simulations.services.play.model_step import Move
from simulations.services.play.work_budget import plays_offline
from simulations.services.policy.message_text import (
    FIELD_SENTENCES,
    ReadableTextField,
    UnreadableText,
    normalise_optional,
)
from simulations.services.policy.moves import (
    BadField,
    NotNow,
    StartRefused,
    start_from_setup,
    take_posted_move,
)

from .estimate import ADVICE, run_estimate
from .games import scenario_of, state_of
from .machine import Event, next_step
from .payloads import MAX_DIRECTION
from .presenters import context as board_context
from .report import render_report
from .run_config import config_from_options
from .scenario import MAX_PANEL, MAX_ROUNDS, MIN_PANEL, VERBS, Brief, MessageLabScenario, Seat
from .words import phase_label as phase_label

MAX_BRIEF_CHARS = 8000
PASTE = "paste"
SEATS: tuple[Seat, ...] = ("moderator", "evaluator")
# The calls at once the set-up offers: a stage never asks more than one per participant.
SETUP_PARALLEL = MAX_PANEL


# --- set-up -------------------------------------------------------------------------------------------------------


class SetupForm(forms.Form):
    model = forms.CharField(required=False, widget=forms.HiddenInput)
    brief = forms.ChoiceField(widget=forms.RadioSelect, label="The brief")
    brief_text = ReadableTextField(
        required=False, max_length=MAX_BRIEF_CHARS, label="Your own brief (Markdown)",
        widget=forms.Textarea(attrs={"rows": 10}),
    )  # fmt: skip
    brief_file = forms.FileField(required=False, label="Or upload it (a Markdown or text file)")
    rounds = forms.IntegerField(min_value=1, max_value=MAX_ROUNDS, label="Rounds")
    gates = forms.MultipleChoiceField(
        required=False, widget=forms.CheckboxSelectMultiple, label="Pause for your decision after round"
    )
    participants = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, label="The panel")
    # Not required: a form posted without them (an older page, a script) runs with the scenario's own.
    moderator = forms.ChoiceField(
        required=False, label="The moderator",
        help_text="keeps the best concepts alive each round, cuts or merges the rest, sets the next round's "
        "direction and places the winner at the end.",
    )  # fmt: skip
    evaluator = forms.ChoiceField(
        required=False, label="The evaluator",
        help_text="scores every concept against the brief before the moderator decides.",
    )  # fmt: skip
    parallel = forms.IntegerField(
        required=False, min_value=1, max_value=SETUP_PARALLEL, label="Model calls at once",
        help_text="how many personas write at the same time when they draft, critique and refine. Fewer is "
        "slower, and one at a time suits a model with a tight rate limit; it changes only the speed, as each "
        "persona reads the same things either way.",
    )  # fmt: skip

    def __init__(self, *args: Any, scenario: MessageLabScenario, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scenario = scenario
        brief, gates, panel = self.fields["brief"], self.fields["gates"], self.fields["participants"]
        assert isinstance(brief, forms.ChoiceField) and isinstance(gates, forms.ChoiceField)
        assert isinstance(panel, forms.ChoiceField)
        brief.choices = [(b.id, b.title) for b in scenario.briefs] + [(PASTE, "My own brief")]
        gates.choices = [(str(n), str(n)) for n in range(1, MAX_ROUNDS + 1)]
        panel.choices = [(p.id, p.name) for p in scenario.of_role("participant")]
        for seat in SEATS:
            field = self.fields[seat]
            assert isinstance(field, forms.ChoiceField)
            field.choices = [
                (f"Written to {VERBS[seat]}", [(p.id, p.name) for p in scenario.of_role(seat)]),
                ("A participant not on the panel", [(p.id, p.name) for p in scenario.of_role("participant")]),
            ]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        upload = data.get("brief_file")
        if data.get("brief") == PASTE and not (data.get("brief_text") or "").strip() and upload:
            data["brief_text"] = self._read(upload)
        if (
            data.get("brief") == PASTE
            and not (data.get("brief_text") or "").strip()
            and "brief_file" not in self.errors
        ):
            self.add_error("brief_text", "Paste the brief the panel should work on, or upload it.")
        chosen = data.get("participants") or []
        if chosen and not MIN_PANEL <= len(chosen) <= MAX_PANEL:
            self.add_error("participants", f"Choose {MIN_PANEL} to {MAX_PANEL} participants.")
        rounds = data.get("rounds")
        if rounds:  # the gates follow the rounds: one after a round the run does not reach is left out
            data["gates"] = [g for g in data.get("gates") or [] if int(g) <= rounds]
        d = self.scenario.defaults
        seats = {
            "moderator": data.get("moderator") or d.moderator,
            "evaluator": data.get("evaluator") or d.evaluator,
        }
        data.update((seat, who) for seat, who in seats.items() if seat not in self.errors)
        if data.get("parallel") is None and "parallel" not in self.errors:
            data["parallel"] = min(d.parallel, SETUP_PARALLEL)
        for seat in SEATS:
            other = seats["moderator"] if seat == "evaluator" else ""
            refusal = self.scenario.seat_refusal(seat, seats[seat], panel=chosen, other=other)
            if refusal and seat not in self.errors:
                self.add_error(seat, refusal)
        return data

    def _read(self, upload: Any) -> str:
        """An uploaded brief as text; refused by its declared size before it is read, if it is not UTF-8, and by the
        text rule every typed field follows (a NUL cannot be stored; no control character is text a reader sees)."""
        limit = MAX_BRIEF_CHARS * 4  # UTF-8 takes at most four bytes a character
        if upload.size is not None and upload.size > limit:
            self.add_error("brief_file", f"The file is {upload.size:,} bytes; a brief is at most {limit:,}.")
            return ""
        try:
            text = str(upload.read(limit + 1).decode("utf-8"))
        except UnicodeDecodeError:
            self.add_error("brief_file", "The file is not UTF-8 text: save it as plain text or Markdown.")
            return ""
        if len(text) > MAX_BRIEF_CHARS:
            self.add_error(
                "brief_file", f"The brief is {len(text):,} characters; the limit is {MAX_BRIEF_CHARS:,}."
            )
            return ""
        try:
            return normalise_optional(text)
        except UnreadableText as exc:
            self.add_error("brief_file", FIELD_SENTENCES[exc.reason])
            return ""


def brief_from_markdown(text: str) -> Brief:
    """A pasted brief as the panel reads it: its title, and what its sections say where it has them (audience,
    goal, constraints, proof points); the whole text is always what the prompts carry."""
    text = text.replace("\r\n", "\n").strip()
    sections: dict[str, list[str]] = {}
    current = ""
    title = ""
    for line in text.splitlines():
        if line.startswith("# ") and not title:
            title = line[2:].strip()
        elif line.startswith("## "):
            current = line[3:].strip().lower()
        elif current and line.strip():
            sections.setdefault(current, []).append(line.strip().lstrip("-* ").strip())
    title = re.sub(r"^brief:\s*", "", title or text.splitlines()[0], flags=re.I)[:120] or "Your brief"

    def section(*names: str) -> list[str]:
        return next((sections[n] for n in sections if any(n.startswith(x) for x in names)), [])

    proof = (
        section("proof", "facts", "key facts")
        or [s for s in re.split(r"(?<=[.!?])\s+", text) if any(ch.isdigit() for ch in s)][:6]
    )
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z-]{4,}", title)]
    return Brief(
        id="pasted", title=title, product=title, audience=" ".join(section("audience")) or "the readers the brief names",
        goal=" ".join(section("goal", "aim")) or "what the brief asks for", constraints=section("constraint", "rules"),
        proof_points=proof or [title], keywords=(words or [title])[:8], text=text,
    )  # fmt: skip


def setup_url(version: ScenarioVersion, model: str | None) -> str:
    url = reverse("message_lab_setup", args=[version.pk])
    return f"{url}?model={model}" if model else url


def new_game(request: HttpRequest, version: ScenarioVersion, *, seed: int, model: str | None) -> HttpResponse:
    return redirect(setup_url(version, model))


@login_required
@require_http_methods(["GET", "POST"])
def setup(request: HttpRequest, version_id: int) -> HttpResponse:
    version = playable_version(version_id=version_id, kind="message_lab")
    scenario: MessageLabScenario = parsed_scenario(version)
    d = scenario.defaults
    error, status = "", 200
    initial = {"model": request.GET.get("model", ""), "brief": scenario.briefs[0].id, "rounds": d.rounds,
               "gates": [str(g) for g in d.gates], "participants": d.participants, "moderator": d.moderator,
               "evaluator": d.evaluator, "parallel": min(d.parallel, SETUP_PARALLEL)}  # fmt: skip
    form = SetupForm(request.POST or None, request.FILES or None, scenario=scenario, initial=initial)
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            options: dict[str, Any] = {
                "rounds": data["rounds"], "gates": [int(g) for g in data["gates"]],
                "participants": data["participants"], "moderator": data["moderator"],
                "evaluator": data["evaluator"], "parallel": data["parallel"],
            }  # fmt: skip
            if data["brief"] == PASTE:
                options["brief_model"] = brief_from_markdown(data["brief_text"])
            else:
                options["brief"] = data["brief"]
            offline = plays_offline(model_key=data["model"])
            try:
                return start_from_setup(request, version, options=options, model=data["model"], advice=ADVICE,
                                        estimate=lambda: run_estimate(config_from_options(scenario, options), offline=offline))  # fmt: skip
            except StartRefused as exc:
                error, status = str(exc), exc.status
        else:
            status = 400
    return render(request, "message_lab/setup.html", {"version": version, "scenario": scenario, "form": form,
                                                      "error": error}, status=status)  # fmt: skip


# --- the board -----------------------------------------------------------------------------------------------------


def _context(game: Game) -> dict[str, Any]:
    return board_context(scenario_of(game), state_of(game)) | {"game": game}


def page(
    request: HttpRequest, game: Game, *, error: str = "", status: int = 200, kept: GateInput | None = None
) -> HttpResponse:
    """The board; after a refused decision, with the sentence saying why (a gate's refused field: beside it, with
    what was typed and ticked kept). An HTMX post gets the board alone, with the refusal's own status (htmx swaps 400, 409
    and 429 too: base.html's responseHandling)."""
    context = _context(game) | {"error": error, "kept": kept}
    if getattr(request, "htmx", False):
        html = render_to_string("message_lab/_board.html", context, request=request)
        return HttpResponse(html, status=status)
    return render(request, "message_lab/page.html", context, status=status)


def render_update(
    game: Game, *, since_seq: int, full: bool, shown: dict[str, str] | None = None
) -> tuple[str, int]:
    """The board, redrawn whole, and the stream boxes of those who are done emptied: what they streamed is now on a
    card. The boxes of a parallel stage's personas still writing are left to their next frame."""
    context = _context(game)
    html = render_to_string("message_lab/_board.html", context | {"oob": True})
    writing = {u.persona for u in next_step(context["state"]).units}
    boxes = [
        fragment("game/_stream.html", {"slot": persona})
        for persona, _ in context["panel"]
        if persona not in writing
    ]
    return html + fragment("game/_stream.html", {}) + "".join(boxes), len(state_of(game).transcript)


class MoveRefused(Exception):
    NOT_NOW = "That decision is not open now: the panel has moved on. The page shows where it stands."


class GateForm(forms.Form):
    """The gate's typed field (the ticked concepts are checked by the machine)."""

    direction = ReadableTextField(required=False, max_length=MAX_DIRECTION, label="Your direction")


@dataclass(frozen=True)
class GateInput:
    """A gate decision as it was posted, drawn again in the gate's form when one of its fields is refused."""

    eliminate: list[str]
    rescue: list[str]
    direction: str
    error: str = ""


def _typed(fields: Mapping[str, Any]) -> GateInput:
    """A gate decision as it was sent (kept in the form whatever refused it): a post's ticked boxes are lists."""
    ticked = getattr(fields, "getlist", lambda key: _listed(fields.get(key)))
    return GateInput(
        eliminate=ticked("eliminate"), rescue=ticked("rescue"), direction=fields.get("direction", "")
    )


def _listed(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [value] if value else []


def _gate_payload(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The decision's payload, its direction under the shared text rule. Raises BadField (keeping what was sent)."""
    kept = _typed(fields)
    form = GateForm(fields)
    if not form.is_valid():
        sentence = f"{form.fields['direction'].label}: {form.errors['direction'][0]}"
        raise BadField(sentence, kept=replace(kept, error=sentence))
    direction = form.cleaned_data["direction"].strip()
    return {"eliminate": kept.eliminate, "rescue": kept.rescue, "direction": direction}


intents: frozenset[str] = frozenset()


def read_move(game: Game, fields: Mapping[str, Any], files: Mapping[str, Any]) -> Move:
    """The player's decision at a quality gate, or resuming after a failure: only the one the panel waits for."""
    step = next_step(state_of(game))
    event = fields.get("event", "")
    if step.actor != "human" or step.event is None or event != step.event.value:
        raise NotNow(MoveRefused.NOT_NOW)
    return Move(event, _gate_payload(fields) if step.event is Event.GATE_DECIDED else {})


def move(request: HttpRequest, game: Game) -> HttpResponse:
    taken = take_posted_move(request, game)
    if not taken.committed:
        kept = taken.kept if isinstance(taken.kept, GateInput) else _typed(request.POST)
        return page(request, game, error="" if taken.kept else taken.error, status=taken.status, kept=kept)
    if getattr(request, "htmx", False):
        return page(request, Game.objects.select_related("scenario").get(pk=game.pk))
    return redirect("game", game_id=game.pk)


# --- the report ----------------------------------------------------------------------------------------------------


def review(request: HttpRequest, game: Game) -> HttpResponse:
    scenario, state = scenario_of(game), state_of(game)
    context = _context(game) | {
        "report": render_report(scenario, state), "owner": can_drive(request.user, game),
        "share_url": share_link(request, game),
        "verdict": state.verdict,
    }  # fmt: skip
    return render(request, "message_lab/review.html", context)


urlpatterns = [
    path("new/<int:version_id>/", setup, name="message_lab_setup")
]  # the set-up form creates the run
