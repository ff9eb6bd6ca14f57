"""A practice conversation's AI steps — the judge's reading of the student's message, then the character's reply —
each a model call outside any transaction, committed through the shared ledger writer only as an event the machine
accepts. A failed call commits nothing: the conversation stays where it was and the page offers to try again."""

from __future__ import annotations

from simulations.ai.model_spec import ModelSpec
from simulations.kinds import ChunkSink, Restart
from simulations.models import Game
from simulations.services.ledger.turns import commit_event
from simulations.services.play.model_step import ModelRequest, Move, play_model_step

from . import prompts
from .games import document_of, scenario_of, state_of
from .machine import Event, Step

REPLY_ATTEMPTS = 2  # an answer that is not what was asked for (the judge's JSON) is asked for again once


def play_ai_step(
    game: Game, step: Step, *, on_chunk: ChunkSink | None = None, on_restart: Restart | None = None
) -> Game:
    """Precondition: `step` is the game's next step, an AI one. Commits exactly that step: the judge's reading of
    the student's message (not streamed), or the character's reply (streamed); a reply that cannot be read is
    asked for again once."""
    scenario, state = scenario_of(game), state_of(game)
    judging = step.event is Event.TRANSITION_JUDGED
    assert step.event is not None
    event = step.event.value

    def build(spec: ModelSpec) -> ModelRequest:
        request = (prompts.judge_request if judging else prompts.reply_request)(
            scenario, state, document_of(game)
        )
        return ModelRequest(
            messages=prompts.with_facts(request) if spec.offline else request.messages,
            role="judge" if judging else "character", purpose=request.purpose,
            context=list(range(1, len(state.messages) + 1)), prompt_version=prompts.PROMPT_VERSION,
        )  # fmt: skip

    def read(reply: str) -> Move:
        if judging:
            return Move(event, prompts.judged_from_reply(scenario, state, reply).model_dump(mode="json"))
        return Move(event, {"text": prompts.reply_text(reply)})

    return play_model_step(
        game,
        build,
        read,
        on_chunk=None if judging else on_chunk,
        on_restart=on_restart,
        attempts=REPLY_ATTEMPTS,
    )


def say(
    game: Game, text: str, *, expected_version: int | None = None, idempotency_key: str | None = None
) -> Game:
    """The student's message (already normalised by the page), committed if the machine accepts it."""
    return commit_event(
        game_id=game.pk, expected_version=game.version if expected_version is None else expected_version,
        event=Event.STUDENT_SPOKE.value, payload={"text": text}, idempotency_key=idempotency_key,
    )  # fmt: skip
