"""Importing a game export (format "mercury-game/2") into this database, by replaying it through the engine.

The export is a ledger: transcript, events (name, states, actor), votes, stance changes, model calls and where
each checkpoint fell. It holds neither the events' payloads nor any state snapshot. The import recovers each
payload from what the event produced, replays the events from a fresh state with `mercury.apply`, and accepts
the game only if the replay reproduces the export exactly (every event, transcript entry, stance change, vote,
commitment and the debrief); it then writes the game, its ledger and the state at every checkpoint in one
transaction, and checks that the new game exports to the same document, ids and timestamps aside.

Payloads recovered:

- a talk message, speech or debrief: the transcript entry it wrote (the debrief: the export's `summary`); for a
  message a model judged, its reading from `judge_readings` (accepted: the signals; refused: none, so the rules
  read it again);
- ROLE_CONFIRMED: the seat is `game.human_role`; the opening variant is the one whose text the student
  delivered in Round 1 (before that opening was delivered it is unknown: the role's first variant is assumed);
- CONVO_n_STARTED: the partner is the audience of the chair's opening line, the starter who spoke first;
- ISSUE_INTRO_COMPLETE: the placement whose speaking orders match the debate that followed;
- HUMAN_VOTE_CAST: the student's ballot.

Where several payloads fit, each is tried in turn (with backtracking) and the first that replays the whole
export wins. For a finished game only one detail can stay open: two placements give the same speaking orders
when "random" drew the first slot in both debate rounds; the state then records "random", and nothing else
depends on it. An unfinished export can end before a choice shows: before the student's opening is delivered
(the first variant is assumed) or before the debate shows the student's place ("random" is assumed, which may
order the rest of that debate differently if the game is continued).

Not recovered: signals a model judge returned that the engine refused (the export keeps only that they were
refused), so such a game exports a different note and the import refuses it. Also lost: the model calls' prompt
versions, latencies and error texts (older exports also lack each call's counting method: only the set), the
admin's model entry the game was started with (the model strings are kept, not its address or kwargs), share
links, and the ledger rows' own timestamps. A model call's event is re-derived from the ledger.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from django.contrib.auth.models import User
from django.db import transaction
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from simulations.engine import mercury
from simulations.engine.errors import MachineError
from simulations.engine.mercury import Entry, Outcome
from simulations.engine.scenario import Scenario
from simulations.engine.state import Commitment, GameState
from simulations.models import Checkpoint, Game, ModelCall, ScenarioVersion

from .export import FORMAT, export_game
from .scenarios import scenario_of
from .turns import games_with_scenario, write_ledger


class ExportImportError(Exception):
    """An export that cannot be imported. Messages start with one of the constant prefixes below."""

    BAD_FORMAT = "Unsupported export format"
    BAD_SHAPE = "Invalid export"
    UNKNOWN_SCENARIO = "Unknown scenario version"
    SCENARIO_MISMATCH = "Scenario content differs"
    NO_REPLAY = "The export does not replay"
    NOT_FAITHFUL = "The imported game does not export the same"

    def __init__(self, prefix: str, detail: str) -> None:
        self.prefix, self.detail = prefix, detail
        super().__init__(f"{prefix}: {detail}")


# --- the document ------------------------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScenarioRef(_Strict):
    slug: str
    version: int = Field(ge=1)


class GameInfo(_Strict):
    id: int | None = None
    scenario: ScenarioRef
    seed: int
    status: str
    human_role: str | None
    created_at: datetime
    finished_at: datetime | None
    model: str | None = None  # absent from exports made before per-game models
    judge_model: str | None = None


class RoleInfo(_Strict):
    id: str
    name: str
    kind: Literal["country", "ngo", "chair"]
    votes: bool


class OptionInfo(_Strict):
    id: str
    label: str


class IssueInfo(_Strict):
    id: str
    title: str
    options: list[OptionInfo]


class EntryInfo(_Strict):
    seq: int = Field(ge=1)
    round: int = Field(ge=0)
    phase: str
    issue: str | None
    speaker: str
    kind: str
    visibility: Literal["public", "private"]
    audience: list[str] | None = None
    text: str


class VoteInfo(_Strict):
    issue: str
    proposal: str
    ballots: dict[str, Literal["yes", "no"]]
    adopted: bool


class EventInfo(_Strict):
    seq: int = Field(ge=1)
    name: str
    from_: str = Field(alias="from")
    to: str
    actor: str


class StanceChangeInfo(_Strict):
    event_seq: int = Field(ge=1)
    role: str
    issue: str
    field: Literal["acceptable", "preferred", "withdrawn"]
    before: str
    after: str
    reason: str
    cause_seq: int | None


class ModelCallInfo(_Strict):
    seq: int = Field(ge=1)
    role: str
    purpose: str
    phase: str
    context: list[int]
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    model: str
    status: str
    counted_by: str | None = None  # these four are absent from older exports
    cost_usd: float | None = None
    outcome: str | None = None
    outcome_reason: str | None = None


class ReadingItem(_Strict):
    kind: Literal["support", "oppose", "conditional", "offer", "ask", "trade"]
    issue: str | None = None
    option: str | None = None
    offer: str | None = None
    credible: bool | None = None
    want: str | None = None
    promise: str | None = None


class ReadingInfo(_Strict):
    seq: int = Field(ge=1)
    event_seq: int = Field(ge=1)
    speaker: str
    source: Literal["rules", "llm", "fallback"]
    items: list[ReadingItem]
    note: str | None = None

    def signals(self) -> dict[str, Any]:
        """The reading as the `signals` payload a model judge gave (for an accepted model reading)."""
        out: dict[str, Any] = {
            "support": {},
            "oppose": {},
            "conditional": {},
            "offers": [],
            "asks": [],
            "trades": [],
        }
        for item in self.items:
            if item.kind in ("support", "oppose", "conditional"):
                out[item.kind].setdefault(item.issue, []).append(item.option)
            elif item.kind == "offer":
                out["offers"].append(item.offer)
            elif item.kind == "ask":
                out["asks"].append(item.offer)
            else:
                out["trades"].append({"want": item.want, "promise": item.promise})
        return out


class CheckpointInfo(_Strict):
    seq: int = Field(ge=1)
    after_event: int = Field(ge=1)
    transcript_seq: int = Field(ge=0)


class RoleUsage(_Strict):
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None = None


class TokenUsage(_Strict):
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None = None
    per_role: dict[str, RoleUsage]
    counted_by: list[str]


class JudgeCalls(_Strict):
    calls: int
    used: int
    fallback: int
    failed: int
    fallback_rate: float | None


class ExportDocument(_Strict):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    format: str
    game: GameInfo
    roles: list[RoleInfo]
    issues: list[IssueInfo]
    transcript: list[EntryInfo]
    votes: list[VoteInfo]
    events: list[EventInfo]
    stance_changes: list[StanceChangeInfo]
    model_calls: list[ModelCallInfo]
    checkpoints: list[CheckpointInfo]
    judge_readings: list[ReadingInfo]
    commitments: list[Commitment]
    token_usage: TokenUsage
    judge_calls: JudgeCalls | None = None
    summary: str | None


def parse_export(data: Any) -> ExportDocument:
    """Check the format string and the document's shape; lists come back in their export order."""
    if not isinstance(data, dict):
        raise ExportImportError(ExportImportError.BAD_SHAPE, "the document is not a JSON object.")
    if data.get("format") != FORMAT:
        got = repr(data["format"]) if "format" in data else "no format field"
        raise ExportImportError(ExportImportError.BAD_FORMAT, f"expected {FORMAT!r}, got {got}.")
    try:
        doc = ExportDocument.model_validate(data)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(part) for part in err['loc']) or '(document)'}: {err['msg']}"
            for err in exc.errors()[:5]
        ]
        more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        raise ExportImportError(ExportImportError.BAD_SHAPE, "; ".join(problems) + more) from exc
    doc.transcript.sort(key=lambda e: e.seq)
    doc.events.sort(key=lambda e: e.seq)
    doc.votes.sort(key=lambda v: v.issue)
    doc.model_calls.sort(key=lambda m: m.seq)
    doc.checkpoints.sort(key=lambda c: c.seq)
    doc.stance_changes.sort(key=lambda c: c.event_seq)  # stable: keeps each event's own order
    _check_numbering(doc)
    return doc


def _check_numbering(doc: ExportDocument) -> None:
    def bad(detail: str) -> ExportImportError:
        return ExportImportError(ExportImportError.BAD_SHAPE, detail)

    for name, seqs in (
        ("transcript", [e.seq for e in doc.transcript]),
        ("events", [e.seq for e in doc.events]),
        ("checkpoints", [c.seq for c in doc.checkpoints]),
    ):
        if seqs != list(range(1, len(seqs) + 1)):
            raise bad(f"{name}: seq must run 1, 2, 3, ... without gaps or repeats.")
    if not doc.events or not doc.checkpoints:
        raise bad("events, checkpoints: a game has at least one of each.")
    if len({v.issue for v in doc.votes}) != len(doc.votes):
        raise bad("votes: an issue is voted on twice.")
    afters = [c.after_event for c in doc.checkpoints]
    if any(b <= a for a, b in zip(afters, afters[1:], strict=False)) or afters[-1] != len(doc.events):
        raise bad("checkpoints.after_event: must increase and end at the last event.")
    if any(c.event_seq > len(doc.events) for c in doc.stance_changes):
        raise bad("stance_changes.event_seq: names an event the export does not have.")


# --- the import ----------------------------------------------------------------------------------------------


def import_game(*, data: dict[str, Any], owner: User | None = None) -> Game:
    """Precondition: the export's scenario version is loaded. Creates and returns a new game equal to the
    exported one (same export, ids and ledger timestamps aside); raises ExportImportError and writes nothing
    otherwise."""
    doc = parse_export(data)
    ref = doc.game.scenario
    version = ScenarioVersion.objects.filter(slug=ref.slug, version=ref.version).first()
    if version is None:
        raise ExportImportError(
            ExportImportError.UNKNOWN_SCENARIO,
            f"{ref.slug} v{ref.version} is not loaded here. Run `python manage.py load_scenario "
            f"scenarios/{ref.slug}` first (the version the export names must be the one it loads as).",
        )
    scenario = scenario_of(version)
    _check_scenario(scenario, doc)
    outcomes = _replay(scenario, _Ledger.of(doc))
    with transaction.atomic():
        game = _write(version, doc, outcomes, owner)
        _check_round_trip(doc, game)
    return game


def _check_scenario(scenario: Scenario, doc: ExportDocument) -> None:
    roles = [
        *({"id": r.id, "name": r.name, "kind": r.kind, "votes": r.votes} for r in scenario.roles),
        {"id": scenario.chair.id, "name": scenario.chair.name, "kind": "chair", "votes": False},
    ]
    issues = [
        {"id": i.id, "title": i.title, "options": [{"id": o.id, "label": o.label} for o in i.options]}
        for i in scenario.issues
    ]
    exported = ([r.model_dump() for r in doc.roles], [i.model_dump() for i in doc.issues])
    for what, here, there in (("roles", roles, exported[0]), ("issues", issues, exported[1])):
        if here != there:
            raise ExportImportError(
                ExportImportError.SCENARIO_MISMATCH,
                f"{doc.game.scenario.slug} v{doc.game.scenario.version} here has other {what} than the export.",
            )


# --- the replay ----------------------------------------------------------------------------------------------

TEXT_EVENTS = ("HUMAN_MESSAGE_SUBMITTED", "AI_MESSAGE_COMMITTED", "HUMAN_TURN_SPEAK", "AI_TURN_COMMITTED")
SPEECH_EVENTS = ("HUMAN_TURN_SPEAK", "HUMAN_TURN_SKIP", "AI_TURN_COMMITTED", "AI_TURN_SKIPPED")
PLACEMENTS = ("random", "first", "skip")
# Applying events tried per exported event, at most: backtracking never runs away on an export that diverges.
TRIES_PER_EVENT = 4


@dataclass
class _Ledger:
    """The export, indexed for the replay."""

    doc: ExportDocument
    entries: dict[int, EntryInfo]
    changes: dict[int, list[dict[str, object]]]
    votes: dict[str, dict[str, object]]
    readings: dict[int, ReadingInfo]  # transcript seq -> the judge's reading of that message

    @classmethod
    def of(cls, doc: ExportDocument) -> _Ledger:
        changes: dict[int, list[dict[str, object]]] = {}
        for c in doc.stance_changes:
            changes.setdefault(c.event_seq, []).append(c.model_dump(exclude={"event_seq"}))
        return cls(
            doc=doc,
            entries={e.seq: e for e in doc.transcript},
            changes=changes,
            votes={v.issue: v.model_dump() for v in doc.votes},
            readings={r.seq: r for r in doc.judge_readings},
        )


def _replay(scenario: Scenario, ledger: _Ledger) -> list[Outcome]:
    """Depth-first over the payloads that fit each event; returns the outcomes of the first full match."""
    events = ledger.doc.events
    start = mercury.new_game(ledger.doc.game.seed)
    outcomes: list[Outcome] = []
    pending: list[list[dict[str, Any]]] = []  # per event: payloads still to try
    budget = TRIES_PER_EVENT * len(events) + 100
    deepest: tuple[int, str] = (-1, "after too many attempts")

    def note(index: int, problem: str) -> None:
        nonlocal deepest
        if index > deepest[0]:
            seq = f"event {events[index].seq} ({events[index].name})" if index < len(events) else "the end"
            deepest = (index, f"at {seq}: {problem}")

    while True:
        i = len(outcomes)
        if i == len(events):
            problem = _final_problem(scenario, ledger, outcomes)
            if problem is None:
                return outcomes
            note(i, problem)
        else:
            state = outcomes[-1].state if outcomes else start
            if len(pending) == i:
                payloads, why = _payloads(scenario, ledger, i, state)
                pending.append(payloads)
                if not payloads:
                    note(i, why)
            while pending[i] and budget > 0:
                payload, budget = pending[i].pop(0), budget - 1
                try:
                    outcome = mercury.apply(scenario, state, events[i].name, payload)
                except MachineError as exc:
                    note(i, str(exc))
                    continue
                problem = _mismatch(ledger, i, outcome)
                if problem is None:
                    outcomes.append(outcome)
                    break
                note(i, problem)
            if len(outcomes) > i:
                continue
            pending.pop()
        if not outcomes or budget <= 0:
            raise ExportImportError(
                ExportImportError.NO_REPLAY,
                f"replaying it from seed {ledger.doc.game.seed} diverges {deepest[1]} (the export holds no "
                "event payloads: a game whose messages a model judged, or an edited export, cannot be replayed).",
            )
        outcomes.pop()


def _payloads(
    scenario: Scenario, ledger: _Ledger, index: int, state: GameState
) -> tuple[list[dict[str, Any]], str]:
    """The payloads that may have produced event `index`, likeliest first (and why there are none)."""
    doc, event = ledger.doc, ledger.doc.events[index]
    name, produced = event.name, ledger.entries.get(state.transcript_seq + 1)
    later = doc.events[index + 1].name if index + 1 < len(doc.events) else None
    if name in TEXT_EVENTS:
        # A debate speech follows the chair's call to the floor: the text is the first entry not the chair's.
        seq = state.transcript_seq + 1
        if produced is not None and produced.kind == "chair":
            seq += 1
            produced = ledger.entries.get(seq)
        if produced is None:
            return [], f"transcript entry {seq} (the message) is missing"
        judged = ledger.readings.get(produced.seq)
        if judged is not None and judged.source == "llm":
            return [{"text": produced.text, "signals": judged.signals()}], ""
        if judged is not None and judged.source == "fallback":
            return [{"text": produced.text, "signals": None}], ""
        return [{"text": produced.text}], ""
    if name == "AI_SUMMARY_READY":
        return ([{"text": doc.summary}], "") if doc.summary else ([], "the export has no summary")
    if name == "ROLE_CONFIRMED":
        human = doc.game.human_role
        if human not in scenario.role_ids:
            return [], f"human_role {human!r} is not a seat of the scenario"
        role = scenario.role(human)
        delivered = [e.text for e in doc.transcript if e.speaker == human and e.kind == "opening"]
        variants = sorted((v.id for v in role.openings), key=lambda v: role.opening(v).text not in delivered)
        return [{"role": human, "variant": v} for v in variants], ""
    if name in ("CONVO_1_STARTED", "CONVO_2_STARTED"):
        audience = produced.audience if produced else None
        partners = [r for r in audience or [] if r != state.human_role]
        if len(partners) != 1:
            return (
                [],
                f"transcript entry {state.transcript_seq + 1} (the chair opening the talk) names no partner",
            )
        starters = ["human", "partner"] if later == "HUMAN_MESSAGE_SUBMITTED" else ["partner", "human"]
        return [{"partner": partners[0], "starter": s} for s in starters], ""
    if name == "ISSUE_INTRO_COMPLETE":
        return [{"placement": p} for p in PLACEMENTS], ""
    if name == "HUMAN_VOTE_CAST":
        issue = state.active_issue
        vote = next((v for v in doc.votes if issue and v.issue == issue.issue_id), None)
        first = vote.ballots.get(state.human_role or "", "yes") if vote else "yes"
        return [{"ballot": b} for b in (first, "no" if first == "yes" else "yes")], ""
    return [{}], ""


def _entry_fields(e: Entry | EntryInfo) -> dict[str, object]:
    private = e.visibility == "private"
    return {
        "round": e.round, "phase": e.phase, "issue": e.issue or None, "speaker": e.speaker, "kind": e.kind,
        "visibility": e.visibility, "audience": (e.audience or []) if private else None, "text": e.text,
    }  # fmt: skip


def _mismatch(ledger: _Ledger, index: int, o: Outcome) -> str | None:
    """How the replayed outcome differs from the exported event and what it wrote (None: it does not)."""
    ev = ledger.doc.events[index]
    if (o.seq, o.source, o.target, o.actor) != (ev.seq, ev.from_, ev.to, ev.actor):
        return f"the replay goes {o.source} -> {o.target} by {o.actor}, the export {ev.from_} -> {ev.to} by {ev.actor}"
    for entry in o.entries:
        exported = ledger.entries.get(entry.seq)
        if exported is None:
            return f"the replay writes transcript entry {entry.seq}, which the export lacks"
        ours, theirs = _entry_fields(entry), _entry_fields(exported)
        if ours != theirs:
            fields = ", ".join(k for k in ours if ours[k] != theirs[k])
            return f"transcript entry {entry.seq} differs in {fields}"
    if [c.as_dict() for c in o.stance_changes] != ledger.changes.get(ev.seq, []):
        return "the stance changes differ"
    if o.vote is not None and o.vote != ledger.votes.get(str(o.vote["issue"])):
        return f"the vote on issue {o.vote['issue']} differs"
    return None


def _final_problem(scenario: Scenario, ledger: _Ledger, outcomes: list[Outcome]) -> str | None:
    doc, final = ledger.doc, outcomes[-1].state
    if final.transcript_seq != len(doc.transcript):
        return f"the replay writes {final.transcript_seq} transcript entries, the export has {len(doc.transcript)}"
    voted = {str(o.vote["issue"]) for o in outcomes if o.vote}
    if voted != set(ledger.votes):
        return "the votes differ"
    if (final.status, final.human_role) != (doc.game.status, doc.game.human_role):
        return f"the replay ends in {final.status} with seat {final.human_role}"
    if final.summary != doc.summary:
        return "the summary differs"
    if final.commitments != doc.commitments:
        return "the commitments differ"
    start = 0
    for cp in doc.checkpoints:
        group = doc.events[start : cp.after_event]
        if (start and group[0].actor == "system") or any(e.actor != "system" for e in group[1:]):
            return f"checkpoint {cp.seq} does not close one committed turn"
        state = outcomes[cp.after_event - 1].state
        if state.transcript_seq != cp.transcript_seq:
            return f"checkpoint {cp.seq} is at transcript entry {cp.transcript_seq}, the replay at {state.transcript_seq}"
        if mercury.next_step(scenario, state).kind == "system":
            return f"checkpoint {cp.seq} falls where the game never rests"
        start = cp.after_event
    return None


# --- writing -------------------------------------------------------------------------------------------------


def _write(
    version: ScenarioVersion, doc: ExportDocument, outcomes: list[Outcome], owner: User | None
) -> Game:
    final = outcomes[-1].state
    game = Game.objects.create(
        owner=owner, scenario=version, seed=doc.game.seed, phase=final.status, human_role=final.human_role or "",
        state=final.model_dump(mode="json"), version=len(doc.checkpoints), finished_at=doc.game.finished_at,
        status=Game.Status.FINISHED if final.status == "REVIEW" else Game.Status.ACTIVE,
        model=doc.game.model or "", judge_model=doc.game.judge_model or "",
    )  # fmt: skip
    Game.objects.filter(pk=game.pk).update(created_at=doc.game.created_at)
    write_ledger(game, outcomes)
    ModelCall.objects.bulk_create(_model_calls(game, doc, outcomes))
    Checkpoint.objects.bulk_create(
        Checkpoint(
            game=game, seq=cp.seq, after_event=cp.after_event, transcript_seq=cp.transcript_seq,
            schema_version=outcomes[cp.after_event - 1].state.schema_version,
            state=outcomes[cp.after_event - 1].state.model_dump(mode="json"),
        )
        for cp in doc.checkpoints
    )  # fmt: skip
    return games_with_scenario().get(pk=game.pk)


def _model_calls(game: Game, doc: ExportDocument, outcomes: list[Outcome]) -> list[ModelCall]:
    """The calls, each tied again to the turn it produced: a judge's call to the message it read (its context),
    a seat's call to the next AI turn of that seat in that phase. A failed call produced no turn."""
    firsts = [0] + [cp.after_event for cp in doc.checkpoints[:-1]]  # index of each turn's first event
    turn_of_entry = {
        e.seq: firsts[n]
        for n, (a, b) in enumerate(zip(firsts, [cp.after_event for cp in doc.checkpoints], strict=True))
        for o in outcomes[a:b]
        for e in o.entries
    }
    ai_turns = [
        outcomes[a]
        for a in firsts
        if outcomes[a].actor.startswith("ai:") and outcomes[a].event != "AI_VOTE_COMMITTED"
    ]
    methods = doc.token_usage.counted_by
    rows: list[ModelCall] = []
    cursor, ok = 0, 0
    for call in doc.model_calls:
        event_seq: int | None = None
        method = ""
        if call.status == "ok":
            if call.role == "judge":
                turn = turn_of_entry.get(call.context[0]) if call.context else None
                event_seq = outcomes[turn].seq if turn is not None else None
            else:
                actor = f"ai:{call.role}"
                found = next(
                    (n for n in range(cursor, len(ai_turns))
                     if ai_turns[n].actor == actor and ai_turns[n].source == call.phase),
                    None,
                )  # fmt: skip
                if found is not None:
                    event_seq, cursor = ai_turns[found].seq, found + 1
            method = methods[ok] if ok < len(methods) else (methods[0] if methods else "")
            ok += 1
        if call.counted_by is not None:  # newer exports say it per call
            method = call.counted_by
        rows.append(
            ModelCall(
                game=game, seq=call.seq, event_seq=event_seq, role=call.role, purpose=call.purpose, phase=call.phase,
                context=call.context, prompt_tokens=call.prompt_tokens, completion_tokens=call.completion_tokens,
                token_count_method=method, model=call.model, status=call.status, cost_usd=call.cost_usd,
                outcome=call.outcome or "", outcome_reason=call.outcome_reason or "",
            )
        )  # fmt: skip
    return rows


def _shaped_like(ours: Any, theirs: Any) -> Any:
    """`ours` without the dictionary keys `theirs` lacks, recursively (lists element by element)."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return {k: _shaped_like(v, theirs[k]) for k, v in ours.items() if k in theirs}
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        return [_shaped_like(a, b) for a, b in zip(ours, theirs, strict=True)]
    return ours


def _check_round_trip(doc: ExportDocument, game: Game) -> None:
    """The new game must export to the same document, its id aside (raising rolls the import back)."""
    again = parse_export(export_game(game=game))
    again.game.id = doc.game.id
    # Compare what the document carries: an older export lacks the newer optional fields.
    theirs = doc.model_dump(exclude_unset=True)
    ours = _shaped_like(again.model_dump(), theirs)
    if ours != theirs:
        fields = [name for name in ours if ours[name] != theirs[name]]
        raise ExportImportError(ExportImportError.NOT_FAITHFUL, f"{', '.join(fields)} would differ.")
