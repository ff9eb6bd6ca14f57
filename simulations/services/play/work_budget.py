"""A budget of background work: what one run set up from the web may ask of the server, and one person's runs
together.

A kind whose runs advance without the student (a feed's rounds, a panel's stages) estimates a run from its set-up
before it starts (`WorkEstimate`: the server's own time, the storage its rows take, its calls to a real model),
at or above what runs of that size were measured to cost. `check_work` refuses the run (`OverBudget`, a sentence
saying what to lower) when it is over the limit for one run, when the person already has as many unfinished
background runs as they may have at once, when those runs and this one together are over the limit for one
person, or when the runs they started in the last 24 hours, finished or not, would store more than a person's day
allows (finished runs keep their rows: a disk fills over days, not in one run). Every limit is a setting (0: none). The command line (`manage.py play`, for teachers and admins) is not
limited: only the set-up pages call `check_work`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import QuerySet
from django.db.models.fields.json import KeyTransform
from django.utils import timezone

from simulations.ai.model_spec import OFFLINE_PREFIX
from simulations.kinds import get_kind
from simulations.models import Game
from simulations.services.content.model_choice import pinned_fields

MB = 1_000_000


@dataclass(frozen=True)
class WorkEstimate:
    """What a run is expected to cost, never less than it was measured to."""

    seconds: float  # the server's own work (CPU and database); not the time a model takes to answer
    storage_bytes: int  # the rows it leaves in the database: checkpoints, events, model calls, its state
    model_calls: int = 0  # calls to a real model (the built-in offline model costs only `seconds`)

    def __add__(self, other: WorkEstimate) -> WorkEstimate:
        return WorkEstimate(
            seconds=self.seconds + other.seconds,
            storage_bytes=self.storage_bytes + other.storage_bytes,
            model_calls=self.model_calls + other.model_calls,
        )


NOTHING = WorkEstimate(seconds=0, storage_bytes=0)


class OverBudget(Exception):
    """A run refused before it starts; its message is the sentence the person reads."""

    RUN = "This run would {need}; the limit for one run is {limits}. {advice}"
    PERSON = (
        "Together with your runs still going, this run would {need}; the limit for one person's runs at once is "
        "{limits}. Let one of them finish first, or make this one smaller. {advice}"
    )
    DAY = (
        "Your runs of the last 24 hours and this one would store about {need}; one person's runs may store {limit} "
        "in a day. Make this run smaller, or start it tomorrow. {advice}"
    )
    RUNS = (
        "You already have {count} runs going (at most {limit} at once): let one finish before you start another. "
        "A paused run, or one waiting for your decision, counts until it has finished."
    )


def check_work(*, user_id: int, estimate: WorkEstimate, advice: str) -> None:
    """Precondition: a person sets up a background run from the web. Raises OverBudget (ending with `advice`)."""
    # Cheapest first: the run alone, then how many runs the person has going, then their estimates added up.
    _within(estimate, _run_limits(), OverBudget.RUN, advice)
    going = _background_runs(_games_of(user_id).filter(status=Game.Status.ACTIVE))
    cap = settings.MERCURY_MAX_BACKGROUND_RUNS_PER_USER
    if cap and len(going) >= cap:
        raise OverBudget(OverBudget.RUNS.format(count=len(going), limit=cap))
    _within(sum(going, estimate), _person_limits(), OverBudget.PERSON, advice)
    day_limit = settings.MERCURY_MAX_RUN_MB_PER_USER_PER_DAY * MB
    day = sum(
        _background_runs(_games_of(user_id).filter(created_at__gte=timezone.now() - timedelta(days=1))),
        estimate,
    )
    if day_limit and day.storage_bytes > day_limit:
        raise OverBudget(
            OverBudget.DAY.format(need=_size(day.storage_bytes), limit=_size(day_limit), advice=advice)
        )


def plays_offline(*, model_key: str | None) -> bool:
    """Precondition: a set-up form's model option ("": the settings' model). Raises UnknownModelChoice."""
    return str(pinned_fields(model_key or None)["model"]).startswith(OFFLINE_PREFIX)


def describe_estimate(*, estimate: WorkEstimate) -> str:
    """Precondition: none. The set-up page's line: what the run would cost, and the limit for one run."""
    limits = _run_limits()
    parts = [
        f"about {_duration(estimate.seconds)} of the server's time",
        f"{_size(estimate.storage_bytes)} of storage",
    ]
    if estimate.model_calls:
        parts.append(f"{estimate.model_calls:,} model calls")
    shown = [
        _limit_text(kind, limit)
        for kind, limit in limits.items()
        if limit and (kind != "calls" or estimate.model_calls)
    ]
    line = f"This run: {_joined(parts)}"
    return f"{line} (the limit for one run: {_joined(shown)})." if shown else f"{line}."


# --- the limits ------------------------------------------------------------------------------------------------------


def _run_limits() -> dict[str, float]:
    return {
        "seconds": settings.MERCURY_MAX_RUN_SECONDS,
        "bytes": settings.MERCURY_MAX_RUN_MB * MB,
        "calls": settings.MERCURY_MAX_RUN_MODEL_CALLS,
    }


def _person_limits() -> dict[str, float]:
    return {
        "seconds": settings.MERCURY_MAX_RUN_SECONDS_PER_USER,
        "bytes": settings.MERCURY_MAX_RUN_MB_PER_USER * MB,
        "calls": 0,  # a real model's calls are limited per run (and in tokens per game, MERCURY_MAX_TOKENS_PER_GAME)
    }


def _within(estimate: WorkEstimate, limits: dict[str, float], sentence: str, advice: str) -> None:
    values = {"seconds": estimate.seconds, "bytes": estimate.storage_bytes, "calls": estimate.model_calls}
    over = [kind for kind, limit in limits.items() if limit and values[kind] > limit]
    if over:
        need = _joined([_need_text(kind, values[kind]) for kind in over])
        raise OverBudget(sentence.format(need=need, limits=_joined([_limit_text(k, limits[k]) for k in over]),
                                         advice=advice))  # fmt: skip


def _background_runs(games: QuerySet[Game]) -> list[WorkEstimate]:
    """The estimates of those `games` that are background runs: of a kind whose runs advance without the student
    (its `work_estimate` is not None)."""
    found = []
    for game in games:
        estimate = get_kind(game.scenario.kind).work_estimate(game, game.run_config)  # type: ignore[attr-defined]
        if estimate is not None:  # `run_config`: the query's annotation
            found.append(estimate)
    return found


def _games_of(user_id: int) -> QuerySet[Game]:
    """Each with its set-up (`run_config`) and not its state: a feed's state is the whole simulation."""
    return (
        Game.objects.filter(owner_id=user_id)
        .select_related("scenario")
        .defer("state", "scenario__document")
        .annotate(run_config=KeyTransform("config", "state"))
        .order_by("pk")
    )


# --- words ---------------------------------------------------------------------------------------------------------


def _need_text(kind: str, value: float) -> str:
    if kind == "seconds":
        return f"take about {_duration(value)} of the server's time"
    if kind == "bytes":
        return f"store about {_size(value)}"
    return f"make about {int(value):,} model calls"


def _limit_text(kind: str, limit: float) -> str:
    if kind == "seconds":
        return _duration(limit)
    if kind == "bytes":
        return _size(limit)
    return f"{int(limit):,} model calls"


def _duration(seconds: float) -> str:
    # Rounded up, so a run just over a limit never reads as the limit itself.
    if seconds < 120:
        n = max(1, math.ceil(seconds))
        return f"{n} second{'s' if n != 1 else ''}"
    if seconds < 2 * 3600:
        return f"{math.ceil(seconds / 60)} minutes"
    return f"{math.ceil(seconds / 360) / 10:.1f} hours"


def _size(size: float) -> str:
    if size < MB:
        return f"{max(1, math.ceil(size / 1000))} KB"
    if size < 1000 * MB:
        return f"{math.ceil(size / MB)} MB"
    return f"{math.ceil(size / (100 * MB)) / 10:.1f} GB"


def _joined(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
