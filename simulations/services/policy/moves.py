"""How a student acts on a game: a kind's set-up form starting it (`start_from_setup`), and the one move pipeline
(`take_move`), for a move posted from a page and one sent over the game's websocket alike: the form's
checks (a NUL, the move rate, the version it was rendered at), a page behind the game, the kind's reading of the
move (`Kind.pages.read_move`), the commit under the form's idempotency key, then the drive queued. One set of
answers for every kind:

- 400 with the field's sentence: a field the kind cannot take (`ValueError`, `BadField`, text with nothing
  visible or with control characters, an `InvalidMove` about what the move carries);
- 409: a page behind the game ("already played, perhaps in another tab": `StaleTurn`), a move the game does not
  take at this point (`NotNow`, the machine's `IllegalEvent`, an `InvalidMove` saying whose turn it is);
- 413 an oversized post (refused by Django before it reaches here), 429 too many moves a minute.

Whatever the answer, nothing else is stored and the page keeps what the student typed."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.shortcuts import redirect

from simulations.ai.gateway import ModelFailure
from simulations.engine.errors import InvalidMove, MachineError
from simulations.kinds import NextStep, kind_of
from simulations.models import Game, ScenarioVersion, Submission
from simulations.services.content.model_choice import UnknownModelChoice
from simulations.services.ledger.seats import NotYourSeat, check_turn, seat_held, viewed_as
from simulations.services.ledger.turns import (
    GameFinished,
    StaleTurn,
    commit_event,
    create_game,
    record_uncommitted_calls,
    stored_version,
)
from simulations.services.pages import page_threads
from simulations.services.play.drive_queue import queue_drive_after_move, queue_drive_if_ai_next
from simulations.services.play.model_step import Move
from simulations.services.play.work_budget import OverBudget, WorkEstimate, check_work
from simulations.services.policy.message_text import UnreadableText
from simulations.services.policy.move_form import FORM_REFUSALS, read_move_form, refusal_status
from simulations.services.policy.rate_limit import RateLimited, check_rate
from simulations.services.policy.student_errors import for_student

if TYPE_CHECKING:
    from django.core.files.uploadedfile import UploadedFile
    from django.http import HttpRequest, HttpResponse

    from simulations.kinds import KindPages

INTENT_ATTEMPTS = (
    5  # an intent (pause, resume) committed on the game as it is now: a driver's block may land first
)


class NotNow(Exception):
    """A move the game does not take at this point, in the kind's own words (409): e.g. the character is still
    answering. `kept`: what the page needs to show the form again as it was sent."""

    def __init__(self, sentence: str, kept: Any = None) -> None:
        super().__init__(sentence)
        self.kept = kept


class BadField(ValueError):
    """A field the kind cannot take as typed (400); `kept`: what the page needs to show it beside the field (e.g.
    a bound Django form)."""

    def __init__(self, sentence: str, kept: Any = None) -> None:
        super().__init__(sentence)
        self.kept = kept


@dataclass(frozen=True)
class Taken:
    """The answer to a move: the game as the move left it (committed, or as it was), and for a refusal the
    sentence, the status and what the kind kept of the form."""

    game: Game
    error: str = ""
    status: int = 200
    kept: Any = None

    @property
    def committed(self) -> bool:
        return not self.error


def take_move(
    game: Game,
    *,
    user_id: int,
    fields: Mapping[str, str],
    files: Mapping[str, UploadedFile] | None = None,
    pages: KindPages,
) -> Taken:
    """Precondition: the user may drive `game`. The move from its form's `fields` (and `files`, when posted),
    through every check, read by the kind's `pages.read_move`, committed, its drive queued. A move in a lane of
    side-by-side moves (`NextStep.lanes`) is read for the game as its student sees it (`viewed_as`) and committed
    on the game as it is then: other lanes' moves since its page was drawn do not make it stale, its own lane's do
    (the kind's machine says so, from the version the form carries)."""
    event = fields.get("event", "")
    try:
        version = read_move_form(fields, user_id=user_id)
        if event in pages.intents:
            committed = _on_latest(game, pages.read_move(game, fields, files or {}))
        else:
            step = kind_of(game).next_step(game)
            lane = _lane_of(game, user_id, step)
            if version != game.version and lane is None:
                raise StaleTurn()  # a page (or a double click) behind the game: said before anything else
            key = fields.get("idem") or None
            refuse_used_key(game, key)
            if lane is None:
                check_turn(game, user_id, step.seat, step.speaker)
            mover = viewed_as(game, lane) if lane is not None else game
            move = pages.read_move(mover, fields, files or {})
            committed = commit_move(game, move, version, key, on_latest=lane is not None)
    except FORM_REFUSALS as exc:
        return Taken(game, str(exc), refusal_status(exc))
    except UnreadableText as exc:  # the shared sentences for text with nothing visible or control characters
        return Taken(game, for_student(InvalidMove(game.phase, event, exc.reason)), 400)
    except BadField as exc:
        return Taken(game, str(exc), 400, exc.kept)
    except (NotNow, NotYourSeat) as exc:
        return Taken(game, str(exc), 409, getattr(exc, "kept", None))
    except InvalidMove as exc:  # what the move carries (400), or whose turn it is (409)
        turn = any(exc.reason.startswith(reason) for reason in exc.TURN_REASONS)
        return Taken(game, for_student(exc), 409 if turn else 400)
    except (StaleTurn, GameFinished, MachineError, ModelFailure) as exc:
        return Taken(game, for_student(exc), 409)
    except ValueError as exc:
        return Taken(game, str(exc), 400)
    page_threads.soon(
        queue_drive_after_move, committed
    )  # after the answer: the move stands whatever happens there
    return Taken(committed)


def _lane_of(game: Game, user_id: int, step: NextStep) -> str | None:
    """The seat the user moves in, when the game runs side-by-side lanes and one of them is theirs."""
    if not step.lanes:
        return None
    seat = seat_held(game, user_id)
    return seat if any(lane.seat == seat for lane in step.lanes) else None


class StartRefused(Exception):
    """A set-up form's game not started: the sentence for the form, and the status its page answers with."""

    def __init__(self, sentence: str, status: int) -> None:
        super().__init__(sentence)
        self.status = status


def start_from_setup(
    request: HttpRequest,
    version: ScenarioVersion,
    *,
    options: dict[str, Any],
    model: str | None,
    estimate: Callable[[], WorkEstimate] | None = None,
    advice: str = "",
) -> HttpResponse:
    """A kind's set-up form's game, created for the person who sent it, its drive queued (an AI acts first, page
    or no page) and its page opened: the run's `estimate` (made here: a ValueError says the options do not make a run) within the work
    budget (`advice`: what to lower), the person's rate of new games, the start options the kind's machine accepts.
    Raises StartRefused (400, or 429 for the rate)."""
    user_id = int(request.user.pk or 0)
    try:
        if estimate is not None:
            check_work(user_id=user_id, estimate=estimate(), advice=advice)
        check_rate(user_id=user_id, action="new_game")
        game = create_game(
            scenario_version=version, seed=secrets.randbelow(2**31), owner=request.user,  # type: ignore[arg-type]
            model=model or None, options=options,
        )  # fmt: skip
    except RateLimited as exc:
        raise StartRefused(str(exc), 429) from exc
    except (ValueError, UnknownModelChoice, OverBudget, MachineError) as exc:
        raise StartRefused(str(exc), 400) from exc
    queue_drive_if_ai_next(game)
    return redirect("game", game_id=game.pk)


def take_posted_move(request: HttpRequest, game: Game) -> Taken:
    """`take_move` for a move posted from the game's page by its owner."""
    return take_move(
        game,
        user_id=int(request.user.pk or 0),
        fields=request.POST,
        files=request.FILES,
        pages=kind_of(game).pages,
    )


def refuse_used_key(game: Game, key: str | None) -> None:
    """StaleTurn when this very form was taken before (a double click, a re-sent form): said before anything is
    read or spent on it (the commit checks the key again, inside its transaction)."""
    if key and Submission.objects.filter(game=game, key=key[:64]).exists():
        raise StaleTurn()


def commit_move(game: Game, move: Move, version: int, key: str | None, *, on_latest: bool = False) -> Game:
    """`move` committed at `version` under the form's idempotency `key`; its model calls are on record whether it
    commits or not, and its `after` runs either way. `on_latest`: a move in a lane (`commit_event`)."""
    try:
        return commit_event(
            game_id=game.pk, expected_version=game.version if on_latest else version, event=move.event,
            payload=move.payload, model_calls=move.more_calls, idempotency_key=key or None, known=game,
            on_latest=on_latest,
        )  # fmt: skip
    except (StaleTurn, GameFinished, MachineError) as exc:
        record_uncommitted_calls(game=game, calls=move.more_calls, why=str(exc))  # paid for: on record
        raise
    finally:
        if move.after is not None:
            move.after()


def _on_latest(game: Game, move: Move) -> Game:
    """An intent means the same whatever the page last showed (pause, resume): it goes on the game as it is now. A
    driver's step committed in between is simply read again; the machine refuses a second pause."""
    for attempt in range(INTENT_ATTEMPTS):
        latest = stored_version(game.pk)
        assert latest is not None
        try:
            return commit_event(
                game_id=game.pk, expected_version=latest, event=move.event, payload=move.payload
            )
        except StaleTurn:
            if attempt + 1 == INTENT_ATTEMPTS:
                raise
    raise AssertionError("unreachable: the last attempt returns or raises")
