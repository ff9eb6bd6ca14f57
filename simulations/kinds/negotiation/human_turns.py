"""The student's moves: only student events, only the payload fields each event takes."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import cache

from simulations.engine.errors import IllegalEvent, InvalidMove, MachineError
from simulations.kinds.negotiation import machine
from simulations.kinds.negotiation.ai_turns import judge_text
from simulations.kinds.negotiation.events import Spoken
from simulations.kinds.negotiation.games import state_of
from simulations.kinds.negotiation.machine import Event
from simulations.models import Game, Submission
from simulations.services.budget import check_budget
from simulations.services.message_text import UnreadableText, normalise_message
from simulations.services.model_choice import game_specs
from simulations.services.turns import (
    GameFinished,
    StaleTurn,
    commit_event,
    record_uncommitted_calls,
    stored_version,
)


class TurnInProgress(StaleTurn):
    """Another copy of this move (a double click, a second tab) is being judged and committed right now."""

    MESSAGE = "This move is already being sent; the page will update when it is committed."


# What each student event may carry (the machine's table says); anything else in a submitted payload is dropped
# (e.g. forged "signals").
PAYLOAD_FIELDS = machine.STUDENT_EVENTS
TEXT_EVENTS = (Event.HUMAN_MESSAGE_SUBMITTED, Event.HUMAN_TURN_SPEAK)


def submit_human_event(
    *,
    game: Game,
    event: str,
    payload: dict[str, Any],
    expected_version: int | None = None,
    idempotency_key: str | None = None,
) -> Game:
    """Precondition: `event` is a student event allowed now; otherwise IllegalEvent and nothing changes.

    Every cheap refusal (event, text, version, a used key, a copy of the move already being judged) comes before
    the judge's model call; that call counts against the game's token budget and is recorded whether or not the
    move then commits."""
    if expected_version is not None and expected_version != game.version:
        raise StaleTurn()  # a page behind the game: its move was someone else's turn, whatever the event
    state = state_of(game)
    allowed = machine.allowed_events(state)
    if event not in PAYLOAD_FIELDS or event not in allowed:
        raise IllegalEvent(state.status, event, [e for e in allowed if e in PAYLOAD_FIELDS])
    clean = {key: payload[key] for key in PAYLOAD_FIELDS[event] if key in payload}
    if event in TEXT_EVENTS and isinstance(clean.get("text"), str):
        try:
            clean["text"] = normalise_message(clean["text"])
        except UnreadableText as exc:  # refused before the turn is spent: the student can send it again
            raise InvalidMove(state.status, event, exc.reason) from exc
    version = game.version if expected_version is None else expected_version
    if event not in TEXT_EVENTS or game_specs(game)[1].offline:  # no model call: the commit checks everything
        return commit_event(
            game_id=game.pk,
            expected_version=version,
            event=event,
            payload=clean,
            idempotency_key=idempotency_key,
            known=game,  # the commit then locks the row without reading it again, if `game` is at `version`
        )
    _check_text(state.status, event, clean.get("text"))
    _check_fresh(game, version, idempotency_key)
    check_budget(game)
    claim = _claim_turn(
        game, version
    )  # one judge call per turn at a time, across processes sharing the cache
    try:
        clean["signals"], judged = judge_text(
            game, state.human_role or "", clean["text"], machine.text_seq(state, event)
        )
        calls = tuple(judged)
        try:
            return commit_event(
                game_id=game.pk, expected_version=version, event=event, payload=clean, model_calls=calls,
                idempotency_key=idempotency_key, known=game,
            )  # fmt: skip
        except (StaleTurn, GameFinished, MachineError) as exc:
            record_uncommitted_calls(game=game, calls=calls, why=str(exc))
            raise
    finally:
        cache.delete(claim)


def _claim_turn(game: Game, version: int) -> str:
    """Hold the right to judge this turn's text: a concurrent copy of the move is refused before its model call.
    The claim outlives the slowest judge call a little and is released as soon as the move is done."""
    key = f"mercury:judge-claim:{game.pk}:{version}"
    ttl = int(settings.MERCURY_MODEL_TIMEOUT * (settings.MERCURY_MODEL_RETRIES + 1)) + 30
    if not cache.add(key, 1, timeout=ttl):
        raise TurnInProgress()
    return key


def _check_text(status: str, event: str, text: object) -> None:
    """The event's own payload model, applied to the text before anything is spent on it (the engine checks the
    whole payload again when it commits)."""
    Spoken.read(status, event, {"text": text})


def _check_fresh(game: Game, version: int, key: str | None) -> None:
    """The turn is still open: nobody committed since the form was rendered, and this form was not sent before
    (read without a lock: the commit checks both again inside its transaction)."""
    if stored_version(game.pk) != version:
        raise StaleTurn()
    if key and Submission.objects.filter(game=game, key=key[:64]).exists():
        raise StaleTurn()
