"""A practice conversation's AI steps — the judge's reading of the student's message, then the character's reply —
each a model call outside any transaction, committed through the shared ledger writer only as an event the machine
accepts. A failed call commits nothing: the conversation stays where it was and the page offers to try again."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.utils import timezone

from simulations import faults
from simulations.ai import costs, gateway, tokens
from simulations.engine.model_replies import ReplyError
from simulations.models import Game
from simulations.services.budget import check_budget
from simulations.services.model_choice import game_specs
from simulations.services.turns import ModelCallRecord, commit_event, record_failed_call

from . import bots, machine, prompts
from .games import document_of, scenario_of, state_of
from .machine import Event, Step

REPLY_ATTEMPTS = 2  # a judge's answer that is not the JSON asked for is asked again once
MAX_DRIVES = 400


def play_ai_step(
    game: Game,
    step: Step,
    *,
    on_chunk: Callable[[str], None] | None = None,
    on_restart: Callable[[], None] | None = None,
) -> Game:
    """Precondition: `step` is the game's next step, an AI one. Commits exactly that step."""
    scenario, state = scenario_of(game), state_of(game)
    check_budget(game)
    playing, _ = game_specs(game)
    judging = step.event is Event.TRANSITION_JUDGED
    request = (prompts.judge_request if judging else prompts.reply_request)(
        scenario, state, document_of(game)
    )
    messages = prompts.with_facts(request) if playing.offline else request.messages
    role = "judge" if judging else "character"
    context = list(range(1, len(state.messages) + 1))
    started = timezone.now()
    faults.point("before_model_call")
    for attempt in range(REPLY_ATTEMPTS):
        if attempt and on_restart:
            on_restart()
        try:
            # The judge's JSON is not streamed to the page: only the character's words are.
            result = gateway.complete(
                messages, spec=playing, on_chunk=None if judging else on_chunk, on_restart=on_restart
            )
        except gateway.ModelFailure as exc:
            record_failed_call(
                game=game, role=role, purpose=request.purpose, model=playing.model, error=exc.record,
                context=context, prompt_tokens=costs.estimated_prompt_tokens(messages),
                token_count_method=tokens.METHOD,
            )  # fmt: skip
            raise
        record = ModelCallRecord(
            role=role, purpose=request.purpose, context=context, prompt_version=prompts.PROMPT_VERSION,
            prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
            token_count_method=result.token_count_method, model=result.model, latency_ms=result.latency_ms,
            cost_usd=costs.call_cost(result.model, result.prompt_tokens, result.completion_tokens),
            started_at=started,
        )  # fmt: skip
        try:
            if judging:
                payload = prompts.judged_from_reply(scenario, state, result.text).model_dump(mode="json")
            else:
                payload = {"text": prompts.reply_text(result.text)}
        except ReplyError as exc:
            if attempt + 1 < REPLY_ATTEMPTS:
                continue
            failure = gateway.ModelFailure(gateway.ModelFailure.MALFORMED, str(exc))
            record_failed_call(
                game=game, role=role, purpose=request.purpose, model=result.model, error=failure.record,
                context=context, prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
                token_count_method=result.token_count_method, cost_usd=record.cost_usd,
            )  # fmt: skip
            raise failure from exc
        assert step.event is not None
        return commit_event(
            game_id=game.pk, expected_version=game.version, event=step.event.value, payload=payload,
            model_calls=(record,),
        )  # fmt: skip
    raise AssertionError("unreachable")


def say(
    game: Game, text: str, *, expected_version: int | None = None, idempotency_key: str | None = None
) -> Game:
    """The student's message (already normalised by the page), committed if the machine accepts it."""
    return commit_event(
        game_id=game.pk, expected_version=game.version if expected_version is None else expected_version,
        event=Event.STUDENT_SPOKE.value, payload={"text": text}, idempotency_key=idempotency_key,
    )  # fmt: skip


def play_headless(
    game: Game, *, bot: bots.Bot = bots.seeker, on_progress: Callable[[Game, str], None] | None = None
) -> Game:
    """To the end: the driver plays the judge and the character, `bot` the student. Safe to call again after any
    interruption."""
    from simulations.services.drive import Outcome, drive_game

    def progress(g: Game, _: object) -> None:
        if on_progress:
            on_progress(g, g.phase)

    for _ in range(MAX_DRIVES):
        drive = drive_game(game_id=game.pk, stream=False, on_step=progress)
        if drive.outcome is Outcome.FAILED:
            assert drive.failure is not None
            raise drive.failure
        if drive.outcome is Outcome.HELD:
            time.sleep(min(drive.retry_in + 0.1, 5.0))
            continue
        game = Game.objects.select_related("scenario").get(pk=game.pk)
        state = state_of(game)
        step = machine.next_step(state)
        if step.done:
            return game
        if step.actor == "human":
            game = say(game, bot(scenario_of(game), state))
            if on_progress:
                on_progress(game, game.phase)
    raise RuntimeError(f"practice conversation {game.pk} did not end within {MAX_DRIVES} drives")
