"""The student's moves: only student events, only the payload fields each event takes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.cache import cache

from simulations.engine.errors import IllegalEvent, InvalidMove
from simulations.kinds.negotiation import machine
from simulations.kinds.negotiation.events import Spoken
from simulations.kinds.negotiation.games import state_of, step_of
from simulations.kinds.negotiation.machine import Event, Status
from simulations.kinds.negotiation.turns import judge_text
from simulations.models import Checkpoint, Game
from simulations.services.content.model_choice import game_specs
from simulations.services.ledger.turns import StaleTurn, stored_version
from simulations.services.play.budget import check_budget
from simulations.services.play.model_step import Move
from simulations.services.policy.message_text import UnreadableText, normalise_message
from simulations.services.policy.moves import commit_move, refuse_used_key


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
    """Precondition: `event` is a student event allowed now; otherwise IllegalEvent and nothing changes. The move
    read (`human_move`) and committed (`services.policy.moves.commit_move`); `expected_version`: the version the
    student's page showed (default: the game's). In Round 2's lanes, the move is `game.viewer_seat`'s (the
    owner's without one: `services.ledger.seats.viewed_as`)."""
    lane = in_lane(game, event)
    if expected_version is not None and expected_version != game.version and not lane:
        raise StaleTurn()  # a page behind the game: its move was someone else's turn, whatever the event
    refuse_used_key(game, idempotency_key)
    move = human_move(game, event, payload, seen_version=expected_version)
    return commit_move(game, move, game.version, idempotency_key, on_latest=lane)


def in_lane(game: Game, event: str) -> bool:
    """The event is a move in one of Round 2's side-by-side lanes (a game several students share)."""
    return state_of(game).status == Status.ROUND_2_TALKS and event in machine.LANE_EVENTS


def human_move(
    game: Game, event: str, payload: Mapping[str, Any], *, seen_version: int | None = None
) -> Move:
    """Precondition: the student's page shows the game's current version (in Round 2's lanes: `seen_version`,
    the version it shows, default the game's). The student's move: only a student event allowed now (else
    IllegalEvent), only the payload fields it takes, its text readable (else InvalidMove). In Round 2's lanes it
    is the move of the seat the game is viewed by (`game.viewer_seat`, else its owner's), and names it, with the
    last event that page had seen: the machine refuses it if that seat's lane has moved since. With a real judge,
    its reading of the text rides with the move; every cheap refusal (the text, a turn already played, a used
    key, a copy of the move already being judged) comes before that model call, which counts against the game's
    token budget and is recorded whether or not the move then commits."""
    state = state_of(game)
    lane = in_lane(game, event)
    seat = (game.viewer_seat or state.human_role) if lane else None
    allowed = machine.allowed_events(state, seat)
    if event not in PAYLOAD_FIELDS or event not in allowed:
        raise IllegalEvent(state.status, event, [e for e in allowed if e in PAYLOAD_FIELDS])
    clean = {key: payload[key] for key in PAYLOAD_FIELDS[event] if key in payload}
    if lane:
        clean |= {"seat": seat, "seen": _seen_at(game, seen_version)}
    if event in TEXT_EVENTS and isinstance(clean.get("text"), str):
        try:
            clean["text"] = normalise_message(clean["text"])
        except UnreadableText as exc:  # refused before the turn is spent: the student can send it again
            raise InvalidMove(state.status, event, exc.reason) from exc
    if event not in TEXT_EVENTS or game_specs(game)[1].offline:  # no model call: the commit checks everything
        return Move(event, clean)
    _check_text(state.status, event, clean.get("text"))
    if not lane:  # a lane's own moves are checked by the machine (`seen`), other lanes' do not count
        _check_fresh(game, game.version)
    check_budget(game)
    # One judge call per turn at a time, across processes sharing the cache (in Round 2's lanes, per lane turn).
    claim = _claim_turn(game, f"{seat}:{clean['seen']}" if lane else game.version)
    try:
        # A class group's: the seat that speaks.
        speaker = seat or step_of(game).role or state.human_role or ""
        clean["signals"], judged = judge_text(game, speaker, clean["text"], machine.text_seq(state, event))
    except BaseException:
        cache.delete(claim)
        raise
    return Move(event, clean, tuple(judged), after=lambda: cache.delete(claim))


def _seen_at(game: Game, version: int | None) -> int:
    """The last event of the game at `version` (None: the game's own), which a page drawn at that version saw."""
    if version is None or version == game.version:
        return state_of(game).event_seq
    checkpoint = (
        Checkpoint.objects.filter(game=game, seq=version).values_list("after_event", flat=True).first()
    )
    return int(checkpoint) if checkpoint is not None else -1  # no such version: stale for any lane


def _claim_turn(game: Game, version: int | str) -> str:
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


def _check_fresh(game: Game, version: int) -> None:
    """The turn is still open: nobody committed since the form was rendered (read without a lock: the commit
    checks it again inside its transaction, with the form's key)."""
    if stored_version(game.pk) != version:
        raise StaleTurn()
