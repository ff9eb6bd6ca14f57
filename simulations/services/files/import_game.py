"""Importing a game export (format "simulation-export/3", see `export_schema`): apply it in order, then compare.

The file holds every event with its payload. The import creates a game with the same scenario version and seed,
then commits each step's first event with its recorded payload through `turns.commit_event`, the one writer
every move goes through: the machine validates it as any move and takes its automatic follow-ups. An AI turn is
committed with its recorded text, a model judge's reading with its recorded signals, so no model is ever called.
Model calls are written with the step they produced. Then the new game is exported and must equal the file
(its id aside); the first difference is named, with the event it belongs to. Everything happens in one
transaction: a refused file leaves nothing behind.
"""

from __future__ import annotations

from collections import deque
from typing import Any, NoReturn

from django.contrib.auth.models import User
from django.db import transaction
from pydantic import ValidationError

from simulations.engine.errors import MachineError
from simulations.kinds import UnknownKind, get_kind
from simulations.models import Game, ModelCall, ScenarioVersion
from simulations.services.files import export_schema as schema
from simulations.services.files.export import build_export, ledger_entries, ledger_events
from simulations.services.ledger.turns import (
    GameFinished,
    ModelCallRecord,
    StaleTurn,
    commit_event,
    create_game,
)


class ExportImportError(Exception):
    """An export that cannot be imported. Messages start with one of the constant prefixes below."""

    BAD_FORMAT = "Unsupported export format"
    BAD_SHAPE = "Invalid export"
    UNKNOWN_SCENARIO = "Unknown scenario version"
    SCENARIO_MISMATCH = "Scenario content differs"
    REFUSED_EVENT = "The export does not apply"
    NOT_FAITHFUL = "The imported game differs from the export"

    def __init__(self, prefix: str, detail: str) -> None:
        self.prefix, self.detail = prefix, detail
        super().__init__(f"{prefix}: {detail}")


def parse_export(data: Any) -> schema.SimulationExport:
    """The file's document, checked against the schema (format, shape, numbering); raises ExportImportError."""
    if not isinstance(data, dict):
        raise ExportImportError(ExportImportError.BAD_SHAPE, "the document is not a JSON object.")
    got = data.get("format")
    if got in schema.OLD_FORMATS:
        raise ExportImportError(
            ExportImportError.BAD_FORMAT,
            f"{got!r} is an older format that holds no event payloads; export the game again "
            f"(`python manage.py export_game ID`) to get {schema.FORMAT!r}.",
        )
    if got != schema.FORMAT:
        raise ExportImportError(
            ExportImportError.BAD_FORMAT,
            f"expected {schema.FORMAT!r}, got {repr(got) if 'format' in data else 'no format field'}.",
        )
    try:
        model = get_kind(str(data.get("kind"))).exports.export_model
    except UnknownKind as exc:
        raise ExportImportError(ExportImportError.BAD_SHAPE, f"kind: {exc}") from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(part) for part in err['loc']) or '(document)'}: {err['msg']}"
            for err in exc.errors()[:5]
        ]
        more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        raise ExportImportError(ExportImportError.BAD_SHAPE, "; ".join(problems) + more) from exc


def import_game(*, data: Any, owner: User | None = None) -> Game:
    """Precondition: the export's scenario version is loaded. Creates and returns a new game equal to the
    exported one (same export, its id aside); raises ExportImportError and writes nothing otherwise."""
    doc = parse_export(data)
    ref = doc.game.scenario
    version = ScenarioVersion.objects.filter(slug=ref.slug, version=ref.version).first()
    if version is None:
        raise ExportImportError(
            ExportImportError.UNKNOWN_SCENARIO,
            f"{ref.slug} v{ref.version} is not loaded here. Run `python manage.py load_scenario "
            f"scenarios/{ref.slug}` first (the version the export names must be the one it loads as).",
        )
    if version.kind != doc.kind:
        raise ExportImportError(
            ExportImportError.SCENARIO_MISMATCH,
            f"{ref.slug} v{ref.version} here is a {version.kind}, the export a {doc.kind}.",
        )
    if version.content_hash != ref.content_hash:
        raise ExportImportError(
            ExportImportError.SCENARIO_MISMATCH,
            f"{ref.slug} v{ref.version} here has content hash {version.content_hash}, the export "
            f"{ref.content_hash}.",
        )
    with transaction.atomic():
        game = _apply(doc, version, owner)
        _compare(doc, game)
    return game


def _apply(doc: schema.SimulationExport, version: ScenarioVersion, owner: User | None) -> Game:
    """Every committed step of the file, in order: its first event with its payload and its model calls."""
    options = get_kind(version.kind).exports.start_options(doc)
    game = create_game(scenario_version=version, seed=doc.game.seed, owner=owner, options=options)
    Game.objects.filter(pk=game.pk).update(
        model_choice=None, model=doc.game.model or "", judge_model=doc.game.judge_model or "",
        model_access={}, human_policy=doc.game.human_policy,  # pinned to the model strings, as imported games are
    )  # fmt: skip
    calls = deque(doc.model_calls)
    _check_step(doc, game, None, doc.checkpoints[0])
    for before, after in zip(doc.checkpoints, doc.checkpoints[1:], strict=False):
        event = doc.events[before.after_event]  # the step's first event
        while calls and calls[0].event_seq is None:  # calls that failed before this step
            _write_failed_call(game, calls.popleft())
        produced = []
        while calls and calls[0].event_seq == event.seq:
            produced.append(_record(calls.popleft()))
        try:
            game = commit_event(
                game_id=game.pk, expected_version=game.version, event=event.name, payload=event.payload,
                model_calls=tuple(produced),
            )  # fmt: skip
        except (MachineError, GameFinished, StaleTurn) as exc:
            raise ExportImportError(
                ExportImportError.REFUSED_EVENT, f"event {event.seq} ({event.name}) is refused: {exc}"
            ) from exc
        _check_step(doc, game, before, after)
    for call in calls:  # what remains failed after the last step (or belongs to no step: the comparison says)
        _write_failed_call(game, call)
    Game.objects.filter(pk=game.pk).update(created_at=doc.game.created_at, finished_at=doc.game.finished_at)
    return Game.objects.select_related("scenario").get(pk=game.pk)


def _check_step(
    doc: schema.SimulationExport,
    game: Game,
    before: schema.CheckpointInfo | None,
    after: schema.CheckpointInfo,
) -> None:
    """The step wrote exactly the file's events and transcript entries up to `after` (follow-ups included)."""
    events, entries = (before.after_event, before.transcript_seq) if before else (0, 0)
    for name, start, ours, theirs in (
        ("events", events, ledger_events(game=game, after=events), doc.events[events : after.after_event]),
        ("transcript", entries, ledger_entries(game=game, after=entries), doc.transcript[entries : after.transcript_seq]),
    ):  # fmt: skip
        dump = [i.model_dump(mode="json") for i in theirs], [i.model_dump(mode="json") for i in ours]
        if found := _differences(*dump, ()):
            (n, *rest), file, mine = found[0]
            _refuse(doc, doc.events[events].seq, (name, start + n, *rest), file, mine)


def _record(call: schema.ModelCallInfo) -> ModelCallRecord:
    return ModelCallRecord(
        role=call.role, purpose=call.purpose, context=call.context, prompt_version=call.prompt_version,
        prompt_tokens=call.prompt_tokens, completion_tokens=call.completion_tokens,
        token_count_method=call.counted_by or "", model=call.model, latency_ms=0, status=call.status,
        error=call.error or "", outcome=call.outcome or "", outcome_reason=call.outcome_reason or "",
        cost_usd=call.cost_usd,
    )  # fmt: skip


def _write_failed_call(game: Game, call: schema.ModelCallInfo) -> None:
    """A call that produced no event is not part of any step: it is logged as it was (see turns.record_failed_call)."""
    fields = vars(_record(call))
    ModelCall.objects.create(
        game=game, seq=game.model_calls.count() + 1, event_seq=call.event_seq, phase=call.phase, **fields
    )


def _compare(doc: schema.SimulationExport, game: Game) -> None:
    """The imported game exports to the file, its id aside; else name the first difference and its event."""
    again = build_export(game=game)
    again.game.id = doc.game.id
    differences = _differences(doc.model_dump(mode="json"), again.model_dump(mode="json"), ())
    if not differences:
        return
    located = [(_event_of(doc, path), path, file, ours) for path, file, ours in differences]
    _refuse(doc, *min(located, key=lambda d: d[0] or len(doc.events) + 1))


def _refuse(
    doc: schema.SimulationExport, event: int, path: tuple[Any, ...], file: Any, ours: Any
) -> NoReturn:
    """The first difference, with the event it belongs to (0: it belongs to the game as a whole)."""
    where = f"event {event} ({doc.events[event - 1].name}): " if event else ""
    raise ExportImportError(
        ExportImportError.NOT_FAITHFUL,
        f"{where}{'.'.join(map(str, path))} is {_short(file)} in the export, {_short(ours)} once applied.",
    )


def _differences(file: Any, ours: Any, path: tuple[Any, ...]) -> list[tuple[tuple[Any, ...], Any, Any]]:
    if isinstance(file, dict) and isinstance(ours, dict):
        keys = [*file, *(k for k in ours if k not in file)]
        return [d for k in keys for d in _differences(file.get(k), ours.get(k), (*path, k))]
    if isinstance(file, list) and isinstance(ours, list):
        pairs = [(file[n] if n < len(file) else None, ours[n] if n < len(ours) else None)
                 for n in range(max(len(file), len(ours)))]  # fmt: skip
        return [d for n, (a, b) in enumerate(pairs) for d in _differences(a, b, (*path, n))]
    return [] if file == ours else [(path, file, ours)]


def _event_of(doc: schema.SimulationExport, path: tuple[Any, ...]) -> int:
    """The event a differing item belongs to, where the file says (0: the game as a whole)."""
    section, path = (getattr(doc, doc.kind), path[1:]) if path[0] == doc.kind else (doc, path)
    items = getattr(section, str(path[0]), None)
    if not isinstance(items, list) or len(path) < 2 or not isinstance(path[1], int) or path[1] >= len(items):
        return 0
    item = items[path[1]]
    seq = item.after_event if isinstance(item, schema.CheckpointInfo) else getattr(item, "event_seq", None)
    return seq if seq and seq <= len(doc.events) else 0


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 160 else text[:157] + "..."
