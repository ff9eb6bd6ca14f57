"""The negotiation's part of the export: its section (roles, issues, stance changes, commitments, debrief), the
judge's readings of every message, what a student may see while the game runs, and the Markdown view.

`NegotiationExport` is the file's schema for this kind (`Kind.export_model`): the shared envelope
(`services/files/export_schema.py`) plus `judge_readings` and the `negotiation` section, written and read by the same
classes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from simulations.engine.visibility import visible_to
from simulations.kinds.negotiation.machine import Event, Status
from simulations.models import Game
from simulations.services.files.export import common_fields, dollars, inert, no_links, quoted
from simulations.services.files.export_schema import SimulationExport, Strict

from . import judge
from .games import scenario_of_version, seated
from .scenario import Scenario
from .state import Commitment

# Events whose transcript entry the judge read (one entry each, in the same order as the events).
JUDGED_EVENTS = (
    Event.HUMAN_MESSAGE_SUBMITTED,
    Event.AI_MESSAGE_COMMITTED,
    Event.HUMAN_TURN_SPEAK,
    Event.AI_TURN_COMMITTED,
)


class ReadingItem(Strict):
    kind: Literal["support", "oppose", "conditional", "offer", "ask", "trade"]
    issue: str | None = None
    option: str | None = None
    offer: str | None = None
    credible: bool | None = None
    want: str | None = None
    promise: str | None = None

    @model_serializer(mode="wrap")
    def _only_what_it_names(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """An offer has no option, a trade no issue: the file shows each item's own fields only."""
        return {k: v for k, v in handler(self).items() if v is not None}


class ReadingInfo(Strict):
    """How the judge read one message: the rules', a model's (accepted), or the rules' after a refused answer."""

    seq: int = Field(ge=1)
    event_seq: int = Field(ge=1)
    speaker: str
    source: Literal["rules", "llm", "fallback"]
    items: list[ReadingItem]
    note: str | None = None


class RoleInfo(Strict):
    id: str
    name: str
    kind: Literal["country", "ngo", "chair"]
    votes: bool


class OptionInfo(Strict):
    id: str
    label: str


class IssueInfo(Strict):
    id: str
    title: str
    options: list[OptionInfo]


class StanceChangeInfo(Strict):
    event_seq: int = Field(ge=1)
    role: str
    issue: str
    field: Literal["acceptable", "preferred", "withdrawn"]
    before: str
    after: str
    reason: str
    cause_seq: int | None


class NegotiationSection(Strict):
    roles: list[RoleInfo]
    issues: list[IssueInfo]
    stance_changes: list[StanceChangeInfo]
    commitments: list[Commitment]
    summary: str | None


class NegotiationExport(SimulationExport):
    kind: Literal["negotiation"]
    judge_readings: list[ReadingInfo]
    negotiation: NegotiationSection


export_model = NegotiationExport


def build(game: Game) -> NegotiationExport:
    """Precondition: none. The negotiation's export, typed (for a class group's student, `seated`: their seat is
    the student's)."""
    game = seated(game)
    scenario = scenario_of_version(game.scenario)
    return NegotiationExport(
        **common_fields(game=game),
        judge_readings=judge_readings(game=game, scenario=scenario),
        negotiation=NegotiationSection(
            roles=_roles(scenario),
            issues=[
                IssueInfo(
                    id=i.id,
                    title=i.title,
                    options=[OptionInfo(id=o.id, label=o.label) for o in i.options],
                )
                for i in scenario.issues
            ],
            stance_changes=[
                StanceChangeInfo(event_seq=e.seq, **change)
                for e in game.events.exclude(stance_changes=[]).order_by("seq")
                for change in e.stance_changes
            ],
            commitments=game.state.get("commitments", []),
            summary=game.state.get("summary"),
        ),
    )


def hide_running(doc: NegotiationExport) -> NegotiationExport:
    """While a game is still being played, what its student may know: the transcript they can see, no AI seat's
    stance changes and no commitments (whether a trade moved a seat). Once the game is in review, everything; but a
    game several students shared (`shared`) keeps showing only the talks the reading student was in.
    (The complete document, for import and the `export_game` command, is `build_export`.)"""
    human = doc.game.human_role or ""
    if doc.game.phase == Status.REVIEW:
        first = shared(doc)
        if not first:
            return doc
        # The written debrief is the first student's (it quotes their talks): theirs alone.
        section = doc.negotiation if human == first else doc.negotiation.model_copy(update={"summary": None})
        entries = [e for e in doc.transcript if human and visible_to(e, human)]
        return doc.model_copy(update={"transcript": entries, "negotiation": section})
    section = doc.negotiation.model_copy(
        update={
            "stance_changes": [c for c in doc.negotiation.stance_changes if human and c.role == human],
            "commitments": [],
        }
    )
    entries = [e for e in doc.transcript if human and visible_to(e, human)]
    return doc.model_copy(update={"negotiation": section, "transcript": entries})


def shared(doc: NegotiationExport) -> str:
    """The first student's seat of a game several students played (a class group's), "" for any other game: its
    readers never see the talks of a pair they were not in, even once it is over."""
    for event in doc.events:
        if event.name == "ROLE_CONFIRMED" and event.payload.get("others"):
            return str(event.payload["role"])
    return ""


def judge_readings(*, game: Game, scenario: Scenario) -> list[ReadingInfo]:
    """How the judge read each message and speech: what it took the speaker to back, oppose, offer, ask for or
    trade, and whether that reading is the rules', a model's (accepted) or the rules' after a refused model
    answer. The engine's own function, given the event's stored payload, so it is the reading that moved stances."""
    events = game.events.filter(name__in=JUDGED_EVENTS).order_by("seq").values_list("seq", "payload", "name")
    entries = game.entries.filter(kind__in=("message", "speech")).order_by("seq")
    out: list[ReadingInfo] = []
    for (event_seq, payload, name), entry in zip(events, entries, strict=False):
        judgement = judge.judge_message(
            scenario, speaker=entry.speaker, text=entry.text, payload=payload,
            issue=(entry.issue or None) if entry.kind == "speech" else None,
            meaning=name.startswith("HUMAN_"),  # a student's words, read as the engine read them
        )  # fmt: skip
        out.append(
            ReadingInfo.model_validate(
                {"seq": entry.seq, "event_seq": event_seq, "speaker": entry.speaker,
                 **judge.describe(scenario, entry.speaker, judgement)}
            )
        )  # fmt: skip
    return out


def _roles(scenario: Scenario) -> list[RoleInfo]:
    roles = [RoleInfo(id=r.id, name=r.name, kind=r.kind, votes=r.votes) for r in scenario.roles]
    roles.append(RoleInfo(id=scenario.chair.id, name=scenario.chair.name, kind="chair", votes=False))
    return roles


def markdown(game: Game) -> str:
    """Precondition: none. The game for people to read: votes, transcript by round, stance shifts, usage (while
    the game runs, only what its student may know: `hide_running`)."""
    data = hide_running(build(game))
    section = data.negotiation
    names = {r.id: r.name for r in section.roles}
    g = data.game
    out = [
        f"# {_scenario_title(game)} — game {g.id}",
        "",
        f"- Scenario: {g.scenario.slug} v{g.scenario.version}, seed {g.seed}",
        f"- Student's seat: {names.get(g.human_role or '', '—')}",
        f"- Status: {g.phase}",
        "",
    ]
    titles = {i.id: i.title for i in section.issues}
    labels = {o.id: o.label for i in section.issues for o in i.options}
    if data.votes:
        out += ["## Votes", "", "| Issue | Proposal | Result | Against |", "|---|---|---|---|"]
        for v in data.votes:
            against = ", ".join(names[r] for r, b in v.ballots.items() if b == "no") or "—"
            result = "adopted" if v.adopted else "rejected"
            out.append(f"| {titles[v.issue]} | {v.proposal} {labels[v.proposal]} | {result} | {against} |")
        out.append("")
    current = None
    headings = {
        1: "Round 1: opening statements",
        2: "Round 2: private talks",
        3: "Round 3: public debate and votes",
    }
    for e in data.transcript:
        if e.round != current:
            current = e.round
            out += [f"## {headings.get(current, 'Session')}", ""]
        flag = " (private)" if e.visibility == "private" else ""
        out += [f"**{names[e.speaker]}**{flag}:", *quoted(e.text), ""]
    if section.stance_changes:
        out += ["## Stance shifts", ""]
        verbs = {"acceptable": "can now accept", "preferred": "now prefers", "withdrawn": "withdrew"}
        for change in section.stance_changes:
            what = change.after or change.before
            out.append(f"- {names[change.role]} {verbs[change.field]} {what} {labels[what]}: {change.reason}")
        out.append("")
    if section.summary:
        out += ["## Debrief", "", no_links(inert(section.summary)), ""]
    usage, judged = data.token_usage, data.judge_calls
    out += [
        "## Model usage",
        "",
        f"Model: {g.model or 'the settings at the time'}"
        + (f"; judge: {g.judge_model}" if g.judge_model and g.judge_model != g.model else "")
        + ".",
        "",
        f"{usage.prompt_tokens} prompt and {usage.completion_tokens} completion tokens "
        f"(counted by {', '.join(usage.counted_by) or 'nothing'}); cost: {dollars(usage.cost_usd)}.",
        "",
    ]
    if judged.calls:
        out += [
            f"Judge: {judged.calls} calls, {judged.used} used, {judged.fallback} fell back to the rules "
            f"(rate {judged.fallback_rate or 0:.0%}), {judged.failed} failed.",
            "",
        ]
    return "\n".join(out)


def _scenario_title(game: Game) -> str:
    return scenario_of_version(game.scenario).title


def start_options(doc: SimulationExport) -> dict[str, Any]:
    """A negotiation starts the same for everyone, the student's seat its first move; a class group's game had its
    students' seats confirmed in its first step (the `seats` its start was given)."""
    first = doc.checkpoints[0].after_event if doc.checkpoints else 0
    for event in doc.events[:first]:
        if event.name == "ROLE_CONFIRMED":
            return {"seats": [event.payload["role"], *event.payload.get("others", [])]}
    return {}


def reader_view(doc: SimulationExport) -> SimulationExport:
    assert isinstance(doc, NegotiationExport)
    return hide_running(doc)


def download(game: Game, fmt: str) -> tuple[str, str, str] | None:
    return None  # the platform's JSON and Markdown exports are the negotiation's
