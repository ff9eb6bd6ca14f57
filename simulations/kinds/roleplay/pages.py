"""A practice conversation's pages, reached through the kind contract: the chat (the character's reply streaming,
the goal, the graph of states updated live, the end screen), the review (every transition with its explanation,
the score per branch) and the admin's preview. The shared shells have already checked who may see or drive it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string

from simulations.models import Game, ScenarioVersion
from simulations.services.ledger.turns import create_game
from simulations.services.pages.fragments import fragment
from simulations.services.people.access import can_drive, share_link
from simulations.services.play.drive_queue import queue_drive
from simulations.services.play.model_step import Move
from simulations.services.policy.form_keys import new_form_key
from simulations.services.policy.message_text import normalise_message
from simulations.services.policy.moves import NotNow, take_posted_move

from .document import MAX_MESSAGE
from .games import scenario_of, state_of
from .machine import Event, next_step
from .presenters import context as chat_context

urlpatterns: list[Any] = []  # the shared game, move and review URLs are all it needs

NOT_NOW = "It is not your turn to speak: {who} is still answering. What you typed is kept in the box."
TOO_LONG = "Your message is {n:,} characters; the limit is {limit:,}. Shorten it and send it again."


def phase_label(phase: str) -> str:
    return {
        "STUDENT_TURN": "Your turn", "JUDGING": "Listening", "CHARACTER_TURN": "Answering", "ENDED": "Ended",
    }.get(phase, phase.replace("_", " ").capitalize())  # fmt: skip


def student_name(request: HttpRequest) -> str:
    user = request.user
    return (getattr(user, "first_name", "") or getattr(user, "username", "") or "").strip() or "the student"


def new_game(request: HttpRequest, version: ScenarioVersion, *, seed: int, model: str | None) -> HttpResponse:
    game = create_game(scenario_version=version, seed=seed, owner=request.user, model=model,  # type: ignore[arg-type]
                       options={"username": student_name(request)})  # fmt: skip
    return redirect("game", game_id=game.pk)


def _context(game: Game) -> dict[str, Any]:
    """Every render carries a fresh idempotency key for the forms (a re-sent post of the same form commits once)."""
    return chat_context(scenario_of(game), state_of(game)) | {
        "game": game, "max_message": MAX_MESSAGE, "idem": new_form_key(),
    }  # fmt: skip


def page(request: HttpRequest, game: Game, *, error: str = "", status: int = 200) -> HttpResponse:
    if next_step(state_of(game)).actor == "ai":  # e.g. "Try again" after a failed turn: play it
        queue_drive(game_id=game.pk)
    context = _context(game) | {"error": error}
    return render(request, "roleplay/page.html", context, status=status)


def render_update(
    game: Game, *, since_seq: int, full: bool, shown: dict[str, str] | None = None
) -> tuple[str, int]:
    """The conversation, the graph and the turn's state, swapped out of band; the stream box emptied (what it
    showed is now in the conversation)."""
    context = _context(game) | {"oob": True}
    html = render_to_string("roleplay/_updates.html", context)
    return html + fragment("game/_stream.html", {}), len(state_of(game).messages)


intents: frozenset[str] = frozenset()


def read_move(game: Game, fields: Mapping[str, str], files: Mapping[str, Any]) -> Move:
    """The student's message, or leaving the conversation; refused while the character is still answering."""
    state = state_of(game)
    if next_step(state).actor != "human":
        raise NotNow(NOT_NOW.format(who=scenario_of(game).botname))
    if fields.get("event") == Event.STUDENT_LEFT.value:
        return Move(Event.STUDENT_LEFT.value, {})
    text = normalise_message(fields.get("text", ""))
    if len(text) > MAX_MESSAGE:
        raise ValueError(TOO_LONG.format(n=len(text), limit=MAX_MESSAGE))
    return Move(Event.STUDENT_SPOKE.value, {"text": text})


def move(request: HttpRequest, game: Game) -> HttpResponse:
    """An HTMX post gets the updated fragments back (a refusal with its sentence in #notice and its status, the
    typed text left in the box); a plain post, the page."""
    taken = take_posted_move(request, game)
    if taken.error:
        return _refused(request, game, taken.error, taken.status)
    game = Game.objects.select_related("scenario").get(pk=game.pk)
    if getattr(request, "htmx", False):
        html = render_to_string("roleplay/_updates.html", _context(game) | {"oob": True, "sent": True})
        return HttpResponse(html)
    return redirect("game", game_id=game.pk)


def _refused(request: HttpRequest, game: Game, sentence: str, status: int) -> HttpResponse:
    if getattr(request, "htmx", False):
        html = render_to_string("roleplay/_updates.html", _context(game) | {"oob": True, "error": sentence})
        return HttpResponse(html, status=status)  # base.html's htmx config swaps 400, 409 and 429
    return page(request, game, error=sentence, status=status)


def review(request: HttpRequest, game: Game) -> HttpResponse:
    context = _context(game) | {
        "owner": can_drive(request.user, game),
        "share_url": share_link(request, game),
    }
    return render(request, "roleplay/review.html", context)
