"""The student's moves: only student events, only the payload fields each event takes."""

from __future__ import annotations

from typing import Any

from simulations.ai import llm_judge
from simulations.engine import mercury
from simulations.engine.errors import IllegalEvent
from simulations.models import Game

from .ai_turns import judge_text
from .turns import commit_event, state_of

# What each student event may carry; anything else in a submitted payload is dropped (e.g. forged "signals").
PAYLOAD_FIELDS: dict[str, tuple[str, ...]] = {
    "ROLE_CONFIRMED": ("role", "variant"),
    "OPENING_PRESENTED": (),
    "CONVO_1_STARTED": ("partner", "starter"),
    "CONVO_2_STARTED": ("partner", "starter"),
    "CONVO_2_SKIPPED": (),
    "ISSUE_INTRO_COMPLETE": ("placement",),
    "HUMAN_MESSAGE_SUBMITTED": ("text",),
    "HUMAN_TURN_SPEAK": ("text",),
    "HUMAN_TURN_SKIP": (),
    "HUMAN_VOTE_CAST": ("ballot",),
}
TEXT_EVENTS = ("HUMAN_MESSAGE_SUBMITTED", "HUMAN_TURN_SPEAK")


def submit_human_event(
    *,
    game: Game,
    event: str,
    payload: dict[str, Any],
    expected_version: int | None = None,
    idempotency_key: str | None = None,
) -> Game:
    """Precondition: `event` is a student event allowed now; otherwise IllegalEvent and nothing changes."""
    state = state_of(game)
    allowed = mercury.allowed_events(state)
    if event not in PAYLOAD_FIELDS or event not in allowed:
        raise IllegalEvent(state.status, event, [e for e in allowed if e in PAYLOAD_FIELDS])
    clean = {key: payload[key] for key in PAYLOAD_FIELDS[event] if key in payload}
    if event in TEXT_EVENTS and isinstance(clean.get("text"), str) and not llm_judge.is_offline():
        signals, calls = judge_text(
            game, state.human_role or "", clean["text"], mercury.text_seq(state, event)
        )
        clean["signals"] = signals
    else:
        calls = []
    version = game.version if expected_version is None else expected_version
    return commit_event(
        game_id=game.pk, expected_version=version, event=event, payload=clean, model_calls=tuple(calls),
        idempotency_key=idempotency_key,
    )  # fmt: skip
