"""AI turns: build the seat's context, call the model outside any transaction, then commit the turn.

A half-streamed message is never stored: only the finished text reaches `commit_event`. Model output reaches the
game only as the text of a legal event (or, for a debate turn, the choice to pass); ballots are computed from the
seat's stance by the engine, never by a model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NamedTuple

from simulations.ai import tokens
from simulations.ai.model_spec import ModelSpec
from simulations.kinds import ChunkSink, Restart
from simulations.kinds.negotiation import llm_judge, machine, output_guard, prompts
from simulations.kinds.negotiation.bots import StandIn
from simulations.kinds.negotiation.debrief import debrief_facts
from simulations.kinds.negotiation.entries import kept_entries
from simulations.kinds.negotiation.games import scenario_of_version, state_of
from simulations.kinds.negotiation.machine import Step
from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import GameState
from simulations.models import Event, Game
from simulations.services.content.model_choice import game_specs
from simulations.services.ledger.appended import AppendedRows
from simulations.services.ledger.rows import rows_after
from simulations.services.ledger.turns import (
    ModelCallRecord,
    commit_event,
)
from simulations.services.play.model_step import ModelRequest, Move, play_model_step, record_of


def play_ai_step(
    game: Game, step: Step, *, on_chunk: ChunkSink | None = None, on_restart: Restart | None = None
) -> Game:
    """Precondition: `step` is the game's next step and an AI one (or a student's seat the AI stands in for).
    Commits exactly one AI turn. `on_restart`: the model call is retried; words already relayed to `on_chunk` are
    void."""
    if step.kind == "human":
        return _stand_in(game, step)
    assert step.kind == "ai" and step.purpose
    if step.purpose == "vote":
        return commit_event(
            game_id=game.pk, expected_version=game.version, event=machine.Event.AI_VOTE_COMMITTED, known=game
        )
    scenario, state = scenario_of_version(game.scenario), machine.focused(state_of(game), step.lane)
    if on_chunk is not None and step.role is not None:  # every relay (page or background driver) is screened
        on_chunk, on_restart = _screened(scenario, step.role, on_chunk, on_restart)
    judging = game_specs(game)[1]

    def build(spec: ModelSpec) -> ModelRequest:
        if step.purpose == "summary":
            prompt = prompts.build_summary_prompt(
                debrief_facts(game, scenario, state), with_facts=spec.offline
            )
        else:
            entries = seen_entries(game)
            prompt = prompts.build_prompt(
                scenario, state, step, entries, _recent_changes(game, step.role, entries),
                with_facts=spec.offline,  # only the offline model reads the facts block
            )  # fmt: skip
        return ModelRequest(
            messages=prompt.messages, role=step.role or "debrief", purpose=step.purpose or "",
            context=prompt.context, prompt_version=prompt.version,
        )  # fmt: skip

    def read(reply: str) -> Move:
        text = trim(
            reply if step.role is None else output_guard.clean(scenario, step.role, reply),
            limit=machine.MAX_SUMMARY_CHARS if step.purpose == "summary" else machine.MAX_MESSAGE_CHARS,
        )
        if step.purpose == "speech" and is_pass(text):
            return Move(machine.Event.AI_TURN_SKIPPED, {})
        # In Round 2's lanes: the lane it answers in, and the last event its prompt saw (`machine.apply` refuses
        # it if that lane moved meanwhile; another lane's commits do not count: `on_latest` below).
        event, payload = step.events[0], {"text": text, **_in_lane(state, step)}
        if step.purpose == "summary" or judging.offline:
            return Move(event, payload)
        payload["signals"], judge_call = judge_text(
            game, step.role or "", text, machine.text_seq(state, event)
        )
        return Move(event, payload, tuple(judge_call))

    return play_model_step(
        game, build, read, on_chunk=on_chunk, on_restart=on_restart, on_latest=step.lane is not None
    )


def _in_lane(state: GameState, step: Step) -> dict[str, Any]:
    """What a step taken in one of Round 2's lanes carries: its lane's seat and the last event it was built on."""
    return {**machine.step_payload(step), "seen": state.event_seq} if step.lane else {}


def _screened(
    scenario: Scenario, role: str, on_chunk: Callable[[str], None], on_restart: Callable[[], None] | None
) -> tuple[Callable[[str], None], Callable[[], None]]:
    """Streamed words pass the output guard's screen before they are relayed (see output_guard.ScreenedStream)."""
    stream = output_guard.ScreenedStream(scenario, role, on_chunk)

    def restart() -> None:
        stream.restart()
        if on_restart is not None:
            on_restart()

    return stream.feed, restart


def _stand_in(game: Game, step: Step) -> Game:
    """A student's move made for them by the seat's stand-in (a bot that argues the seat's brief: no model call),
    marked as the stand-in's in the ledger and the transcript. Raises StaleTurn if the student moved first."""
    state = machine.focused(state_of(game), step.lane)
    event, payload = StandIn(str(step.role)).decide(scenario_of_version(game.scenario), state, step)
    if step.lane:  # Round 2's lanes: the move of the seat it stands in for, in that seat's lane
        payload |= {"seat": step.role, "seen": state.event_seq}
    return commit_event(
        game_id=game.pk, expected_version=game.version, event=event, payload=payload, known=game,
        on_latest=step.lane is not None,
    )  # fmt: skip


def judge_text(game: Game, speaker: str, text: str, seq: int) -> tuple[Any, list[ModelCallRecord]]:
    """With a real judge model: its reading of a message (None = rules) and the call to record, whatever its
    outcome (used, fallback to the rules and why, or failed and its cause)."""
    judged = llm_judge.judge_message(scenario_of_version(game.scenario), speaker, text, game_specs(game)[1])
    signals = judged.signals.model_dump() if judged.signals else None
    prompt = prompts.Prompt([], [seq], {}, judged.version)
    if judged.completion is None:
        failed = ModelCallRecord(
            role="judge", purpose="judge", context=prompt.context, prompt_version=prompt.version,
            prompt_tokens=judged.prompt_tokens, completion_tokens=0, token_count_method=tokens.METHOD,
            model=judged.model, latency_ms=0, status="error", error=judged.reason[:300], outcome=judged.outcome,
            outcome_reason=judged.reason[:300],
        )  # fmt: skip
        return signals, [failed]
    asked = ModelRequest(
        messages=[], role="judge", purpose="judge", context=prompt.context, prompt_version=prompt.version
    )
    record = record_of(asked, judged.completion)
    return signals, [replace(record, outcome=judged.outcome, outcome_reason=judged.reason[:300])]


def is_pass(text: str) -> bool:
    return text.strip().strip(".!").upper() == prompts.PASS


def trim(text: str, limit: int = machine.MAX_MESSAGE_CHARS) -> str:
    """Keep model text within the message limit, cutting at a sentence end where possible."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    return cut[: end + 1] if end > limit // 2 else cut


class _Changes(NamedTuple):
    seq: int  # the event's
    changes: list[dict[str, Any]]


# Events are append-only: a process keeps each game's and reads only the rows added since; the rows a commit in
# this process wrote are added as it commits (services/ledger/appended.py). Entries likewise: kept_entries.
_STANCE_CHANGES: AppendedRows[_Changes] = AppendedRows(
    lambda game_id, after: [
        _Changes(*row)
        for row in rows_after(Event, ("seq", "stance_changes"), game_id=game_id, after=after)
        if row[1]  # most events change no stance (read from where the last read ended: a few rows a read)
    ],
    # As stored: the column holds the changes as JSON, and a read gives back what JSON keeps.
    written=lambda advance: [
        _Changes(event.seq, json.loads(json.dumps(list(event.changes))))
        for event in advance.events
        if event.changes
    ],
)


def seen_entries(game: Game) -> list[prompts.SeenEntry]:
    """Every entry of the game; prompt building keeps only what the seat may see."""
    return list(kept_entries(game))


def _recent_changes(game: Game, role: str | None, entries: list[prompts.SeenEntry]) -> list[dict[str, Any]]:
    """This seat's stance changes since it last spoke (in `entries`, the game's): what it should say it was
    persuaded of."""
    spoken = [e.seq for e in entries if e.speaker == role and e.kind in ("message", "speech", "opening")]
    last_own = spoken[-1] if spoken else 0
    scenario = scenario_of_version(game.scenario)
    out: list[dict[str, Any]] = []
    for event in _STANCE_CHANGES.rows(game_id=game.pk, created_at=game.created_at, version=game.version):
        for change in event.changes:
            if (
                change["role"] == role
                and change["field"] != "withdrawn"
                and (change["cause_seq"] or 0) > last_own
            ):
                issue = scenario.issue(change["issue"])
                out.append(
                    {
                        "issue": change["issue"],
                        "option_label": issue.option(change["after"]).label,
                        "field": change["field"],
                        "reason": change["reason"],
                    }
                )
    return out
