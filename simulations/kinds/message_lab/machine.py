"""Message Lab's machine (pure): applies a move to a copy of the state, then every step the round takes on its own.

Moves are the personas' outputs (a concept, a critique, the evaluator's scores, the moderator's synthesis, a
refinement, a presentation, the final verdict) and the player's (a gate decision, a resume). Each is checked
against the state — is this persona owed here, does a critique cover exactly the concepts it may see, does a merge
go into a survivor — and refused with the engine's typed errors, changing nothing. After a move the machine walks
the seed's round table (`state.stage_after`) while a stage has nothing left to wait for, logging every transition
with its reason, and moves each concept only along the lifecycle table (`state.CONCEPT_MOVES`).

Reading of the seed where it is silent (kept here):
- Round 1: every participant drafts one concept. Later rounds: a participant with no concept in play drafts a new
  one taking the round's focus, except in the last round, which only polishes what is left.
- Critique: every participant critiques every concept in play except their own, knowing each only by an alias that
  is drawn afresh each round from the seed (so a critic cannot follow an author across rounds either).
- Synthesis: the evaluator scores first; the moderator then keeps at most `keep` concepts (at least one), eliminates
  or merges the rest, each with a reason, and sets the next round's direction.
- A quality gate comes after the rounds configured for it; the player may eliminate survivors (one must stay),
  rescue eliminated concepts while a round remains (they re-enter the next critique) and add a direction.
- The last round's presentations end the simulation (COMPLETED); the moderator's verdict places the winner,
  runners-up and finalists (OUTPUT_READY).
- A model that keeps failing or a spent budget moves the simulation to FAILED with the reason; resuming returns to
  where it stood, and only the outputs the stage still owes are asked for again.
"""

from __future__ import annotations

import hashlib
import random
import string
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from simulations.engine.errors import IllegalEvent, InvalidMove
from simulations.engine.payloads import PayloadProblems, read_payload, restore_snapshot
from simulations.engine.transitions import Transition

from . import payloads as p
from .document import (
    SCHEMA_VERSION,
    Change,
    Concept,
    Config,
    Failure,
    Gate,
    LabState,
    Line,
    RoundRecord,
    Verdict,
)
from .document import Version as ConceptVersion
from .state import (
    CONCEPT_MOVES,
    PARALLEL_STAGES,
    ConceptStatus,
    RoundStage,
    SimulationStatus,
    can_move,
    stage_after,
)

Status, Stage, CS = SimulationStatus, RoundStage, ConceptStatus


class Event(StrEnum):
    # moves: a persona's output, or the player's decision
    CONCEPT_SUBMITTED = "CONCEPT_SUBMITTED"
    CRITIQUE_SUBMITTED = "CRITIQUE_SUBMITTED"
    EVALUATION_SUBMITTED = "EVALUATION_SUBMITTED"
    SYNTHESIS_SUBMITTED = "SYNTHESIS_SUBMITTED"
    REFINEMENT_SUBMITTED = "REFINEMENT_SUBMITTED"
    PRESENTATION_GIVEN = "PRESENTATION_GIVEN"
    GATE_DECIDED = "GATE_DECIDED"
    VERDICT_GIVEN = "VERDICT_GIVEN"
    SIMULATION_FAILED = "SIMULATION_FAILED"
    SIMULATION_RESUMED = "SIMULATION_RESUMED"
    # the machine's own steps
    SIMULATION_STARTED = "SIMULATION_STARTED"
    STAGE_ADVANCED = "STAGE_ADVANCED"
    GATE_OPENED = "GATE_OPENED"
    SIMULATION_COMPLETED = "SIMULATION_COMPLETED"


PAYLOADS: dict[Event, type[p.Payload]] = {
    Event.CONCEPT_SUBMITTED: p.ConceptSubmitted,
    Event.CRITIQUE_SUBMITTED: p.CritiqueSubmitted,
    Event.EVALUATION_SUBMITTED: p.EvaluationSubmitted,
    Event.SYNTHESIS_SUBMITTED: p.SynthesisSubmitted,
    Event.REFINEMENT_SUBMITTED: p.RefinementSubmitted,
    Event.PRESENTATION_GIVEN: p.PresentationGiven,
    Event.GATE_DECIDED: p.GateDecided,
    Event.VERDICT_GIVEN: p.VerdictGiven,
    Event.SIMULATION_FAILED: p.SimulationFailed,
    Event.SIMULATION_RESUMED: p.SimulationResumed,
}
PLAYER = "player"  # the actor of a gate decision and a resume
SYSTEM = "system"  # the actor of the machine's own steps
IN_PLAY_AFTER_ROUND = (CS.PRESENTED,)
LIVE = frozenset(
    {CS.SUBMITTED, CS.ANONYMIZED, CS.CRITIQUED, CS.SCORED, CS.SURVIVING, CS.REFINED, CS.PRESENTED}
)


class Refusal(InvalidMove):
    NOT_OWED = "this persona owes nothing at this stage"
    WRONG_CONCEPTS = "the notes must cover exactly the concepts shown, each once"
    SURVIVORS = "keep at least one concept and no more than the round allows"
    BAD_MERGE = "a concept can only merge into another concept that survives"
    UNKNOWN_CONCEPT = "no such concept in play here"
    NOT_ITS_TURN = "another concept presents first"
    LAST_ONE = "at least one concept must stay in play"
    NO_ROUND_LEFT = "a concept can only be rescued while a round remains"
    BOTH = "a concept cannot be eliminated and rescued at once"
    BAD_PLACING = "winner and runners-up must be different concepts still in play"


# The player's refused gate decisions, in the page's words: the machine's reason says what to change.
Refusal.STUDENT_SENTENCES = {
    reason: f"The panel cannot take that decision: {reason}."
    for reason in (
        Refusal.SURVIVORS,
        Refusal.UNKNOWN_CONCEPT,
        Refusal.LAST_ONE,
        Refusal.NO_ROUND_LEFT,
        Refusal.BOTH,
    )
}


# --- who acts next ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    """One output a step owes: a persona's (and, for refining and presenting, which concept)."""

    persona: str
    concept: str = ""


@dataclass(frozen=True)
class Step:
    event: Event | None  # None: the simulation has nothing more to do
    actor: str  # "ai" | "human" | "done"
    units: tuple[Unit, ...] = ()  # AI steps: the outputs still owed, in the order they commit
    parallel: bool = False

    @property
    def done(self) -> bool:
        return self.event is None


def next_step(state: LabState) -> Step:
    if state.status is Status.PAUSED_AT_GATE:
        return Step(Event.GATE_DECIDED, "human")
    if state.status is Status.FAILED:
        return Step(Event.SIMULATION_RESUMED, "human")
    if state.status is Status.COMPLETED:
        return Step(Event.VERDICT_GIVEN, "ai", (Unit(state.config.moderator),))
    if state.status is not Status.RUNNING:
        return Step(None, "done")
    stage, cfg = state.stage, state.config
    parallel = stage in PARALLEL_STAGES
    if stage is Stage.STAGE_1_CREATING:
        return Step(Event.CONCEPT_SUBMITTED, "ai", tuple(Unit(x) for x in owed_creators(state)), parallel)
    if stage is Stage.STAGE_2_CRITIQUING:
        return Step(Event.CRITIQUE_SUBMITTED, "ai", tuple(Unit(x) for x in owed_critics(state)), parallel)
    if stage is Stage.STAGE_3_SYNTHESIZING:
        if state.current.evaluation is None:
            return Step(Event.EVALUATION_SUBMITTED, "ai", (Unit(cfg.evaluator),))
        return Step(Event.SYNTHESIS_SUBMITTED, "ai", (Unit(cfg.moderator),))
    if stage is Stage.STAGE_4_REFINING:
        units = tuple(Unit(c.persona, c.id) for c in in_panel_order(state, state.with_status(CS.SURVIVING)))
        return Step(Event.REFINEMENT_SUBMITTED, "ai", units, parallel)
    if stage is Stage.STAGE_5_PRESENTING:
        first = in_panel_order(state, state.with_status(CS.REFINED))[:1]
        return Step(Event.PRESENTATION_GIVEN, "ai", tuple(Unit(c.persona, c.id) for c in first))
    raise AssertionError(f"a running simulation rests in a working stage, not {stage}")


def in_panel_order(state: LabState, concepts: list[Concept]) -> list[Concept]:
    order = state.config.participants
    return sorted(concepts, key=lambda c: (order.index(c.persona), c.id))


def owed_creators(state: LabState) -> list[str]:
    made = {c.persona for c in state.concepts if c.round_created == state.round}
    return [x for x in state.current.creators if x not in made]


def critics(state: LabState) -> list[str]:
    """Participants with at least one concept in play that is not theirs, in panel order."""
    authors = [c.persona for c in state.concepts if c.alias and c.status is CS.ANONYMIZED]
    return [x for x in state.config.participants if any(a != x for a in authors)]


def owed_critics(state: LabState) -> list[str]:
    return [x for x in critics(state) if x not in state.current.critiques]


def shown_to(state: LabState, persona: str | None) -> list[Concept]:
    """The concepts in this round's critique, by alias; without `persona`'s own (None: all of them)."""
    aliases = state.current.aliases
    concepts = [state.concept(aliases[a]) for a in sorted(aliases)]
    return [c for c in concepts if c.persona != persona]


def merged_into(state: LabState, concept_id: str) -> list[Concept]:
    """Concepts merged into `concept_id` this round: its refinement folds their best idea in."""
    return [
        c
        for c in state.concepts
        if c.merged_into == concept_id and c.history and c.history[-1].round == state.round
    ]


def rounds_left(state: LabState) -> bool:
    return state.round < state.config.rounds


# --- applying a move ----------------------------------------------------------------------------------------


@dataclass
class Outcome(Transition[Event, LabState]):
    """One transition and what it wrote. Its `state` is the state after the whole `apply`, shared by its outcomes
    (copying each cost a fifth of the time)."""

    lines: list[Line] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)


def where(state: LabState) -> str:
    """The simulation's position as one word: its stage while running, else its status."""
    return state.stage.value if state.status is Status.RUNNING else state.status.value


class _Ctx:
    """The copy a transition works on, and what it records."""

    def __init__(self, state: LabState, event: Event, actor: str) -> None:
        self.state, self.event, self.actor = state, event, actor
        self.source = where(state)
        self.lines: list[Line] = []
        self.changes: list[dict[str, Any]] = []

    def refuse(self, reason: str, detail: str = "") -> Refusal:
        return Refusal(self.source, self.event.value, f"{reason}{': ' + detail if detail else ''}")

    def say(
        self, persona: str, kind: str, content: str, *, stage: int | None = None, concept: str = ""
    ) -> None:
        number = stage if stage is not None else stage_number(self.state.stage)
        line = Line(
            round=self.state.round, stage=number, persona=persona, type=kind, content=content, concept=concept
        )
        self.state.transcript.append(line)
        self.lines.append(line)

    def move(self, concept: Concept, to: ConceptStatus, reason: str = "") -> None:
        if not can_move(CONCEPT_MOVES, concept.status, to):
            raise AssertionError(f"{concept.id}: {concept.status} -> {to} is not in the lifecycle table")
        self.changes.append(
            {"event": f"concept_{to.value.lower()}", "concept": concept.id, "round": self.state.round,
             "from": concept.status.value, "to": to.value, "reason": reason}
        )  # fmt: skip
        concept.status = to
        concept.history.append(
            Change(round=self.state.round, stage=self.state.stage.value, status=to, reason=reason)
        )


def stage_number(stage: RoundStage) -> int:
    """1-5 for a round's stage (the seed's `current.stage`), 0 outside them."""
    name = stage.value
    return int(name[6]) if name.startswith("STAGE_") else 0


def parse_payload(event: Event, payload: dict[str, Any] | BaseModel | None, *, source: str) -> p.Payload:
    try:
        return read_payload(PAYLOADS[event], payload)
    except PayloadProblems as exc:
        raise Refusal(source, event.value, f"{Refusal.BAD_PAYLOAD}: {exc}") from None


def apply(
    state: LabState, event: Event | str, payload: dict[str, Any] | BaseModel | None = None
) -> list[Outcome]:
    """Apply one move to a copy of `state`, then every step the machine takes on its own after it.
    Raises IllegalEvent or Refusal and then changes nothing."""
    step = next_step(state)
    try:
        ev = Event(event)
    except ValueError:
        raise IllegalEvent(where(state), str(event), _allowed(state, step)) from None
    if ev not in _allowed(state, step):
        raise IllegalEvent(where(state), ev.value, _allowed(state, step))
    parsed = parse_payload(ev, payload, source=where(state))
    new = state.model_copy(deep=True)
    actor = _actor_of(new, ev, parsed)
    ctx = _Ctx(new, ev, actor)
    MOVES[ev](ctx, parsed)
    outcomes = [_close(ctx, parsed.model_dump(mode="json"))]
    _settle(new, outcomes)
    return outcomes


def _allowed(state: LabState, step: Step) -> list[str]:
    allowed = [step.event.value] if step.event else []
    if state.status in (Status.RUNNING, Status.COMPLETED):
        allowed.append(Event.SIMULATION_FAILED.value)
    return allowed


def _actor_of(state: LabState, event: Event, payload: p.Payload) -> str:
    if event in (Event.GATE_DECIDED, Event.SIMULATION_RESUMED):
        return PLAYER
    if isinstance(payload, (p.ConceptSubmitted, p.CritiqueSubmitted)):
        return payload.persona
    if isinstance(payload, (p.RefinementSubmitted, p.PresentationGiven)):
        try:
            return state.concept(payload.concept).persona
        except KeyError:
            return SYSTEM  # refused by the move itself
    if event is Event.EVALUATION_SUBMITTED:
        return state.config.evaluator
    if event in (Event.SYNTHESIS_SUBMITTED, Event.VERDICT_GIVEN):
        return state.config.moderator
    return SYSTEM


def _close(ctx: _Ctx, payload: dict[str, Any]) -> Outcome:
    ctx.state.event_seq += 1
    return Outcome(
        seq=ctx.state.event_seq, event=ctx.event, actor=ctx.actor, source=ctx.source, target=where(ctx.state),
        payload=payload, state=ctx.state, lines=ctx.lines, changes=ctx.changes,
    )  # fmt: skip


# --- the moves ----------------------------------------------------------------------------------------------


def _submit_concept(c: _Ctx, m: p.ConceptSubmitted) -> None:
    st = c.state
    if m.persona not in owed_creators(st):
        raise c.refuse(Refusal.NOT_OWED, m.persona)
    number = 1 + sum(1 for x in st.concepts if x.persona == m.persona)
    concept = Concept(
        id=f"concept_{m.persona}_{number:02d}", persona=m.persona, name=m.name, status=CS.DRAFT,
        round_created=st.round, versions=[ConceptVersion(round=st.round, version=1, name=m.name, text=m.text)],
    )  # fmt: skip
    st.concepts.append(concept)
    c.move(concept, CS.SUBMITTED, f"drafted in round {st.round}")
    c.say(m.persona, "concept", f"{m.name}\n\n{m.text}", concept=concept.id)


def _critique(c: _Ctx, m: p.CritiqueSubmitted) -> None:
    st = c.state
    if m.persona not in owed_critics(st):
        raise c.refuse(Refusal.NOT_OWED, m.persona)
    expected = {x.alias for x in shown_to(st, m.persona)}
    given = [n.alias for n in m.notes]
    if sorted(given) != sorted(expected):
        raise c.refuse(Refusal.WRONG_CONCEPTS, f"expected {', '.join(sorted(expected))}")
    st.current.critiques[m.persona] = m.model_dump(mode="json")
    body = "\n".join(
        f"{n.alias} ({n.score:g}/10) — strength: {n.strength} Weakness: {n.weakness}"
        for n in sorted(m.notes, key=lambda n: n.alias)
    )
    c.say(m.persona, "critique", body)


def _covers_all(c: _Ctx, aliases: list[str]) -> None:
    if sorted(aliases) != sorted(c.state.current.aliases):
        raise c.refuse(Refusal.WRONG_CONCEPTS, f"expected {', '.join(sorted(c.state.current.aliases))}")


def _evaluate(c: _Ctx, m: p.EvaluationSubmitted) -> None:
    st = c.state
    _covers_all(c, [s.alias for s in m.scores])
    st.current.evaluation = m.model_dump(mode="json")
    for s in sorted(m.scores, key=lambda s: s.alias):
        concept = st.concept(st.current.aliases[s.alias])
        concept.scores[f"round_{st.round}"] = round(s.score, 2)
        c.move(concept, CS.SCORED, f"Evaluator: {s.score:g}/10 — {s.reason}")
    c.say(
        st.config.evaluator,
        "evaluation",
        "\n".join(f"{s.alias}: {s.score:g}/10 — {s.reason}" for s in sorted(m.scores, key=lambda s: s.alias)),
    )


def _synthesize(c: _Ctx, m: p.SynthesisSubmitted) -> None:
    st = c.state
    _covers_all(c, [d.alias for d in m.decisions])
    survivors = {d.alias for d in m.decisions if d.verdict == "survive"}
    if not 1 <= len(survivors) <= st.config.keep:
        raise c.refuse(Refusal.SURVIVORS, f"kept {len(survivors)}, at most {st.config.keep}")
    for d in m.decisions:
        if d.verdict == "merge" and (d.into not in survivors or d.into == d.alias):
            raise c.refuse(Refusal.BAD_MERGE, d.alias)
    st.current.synthesis = m.model_dump(mode="json")
    st.current.direction = m.direction
    moderator = st.config.moderator
    for d in sorted(m.decisions, key=lambda d: d.alias):
        concept = st.concept(st.current.aliases[d.alias])
        if d.verdict == "survive":
            c.move(concept, CS.SURVIVING, f"Moderator: {d.reason}")
        elif d.verdict == "eliminate":
            c.move(concept, CS.ELIMINATED, f"Moderator: {d.reason}")
        else:
            concept.merged_into = st.current.aliases[d.into]
            c.move(concept, CS.MERGED, f"Moderator: merged into {d.into} — {d.reason}")
    lines = [
        f"{d.alias}: {d.verdict}{' into ' + d.into if d.into else ''} — {d.reason}"
        for d in sorted(m.decisions, key=lambda d: d.alias)
    ]
    c.say(moderator, "synthesis", "\n".join(lines) + f"\n\nDirection: {m.direction}")


def _refine(c: _Ctx, m: p.RefinementSubmitted) -> None:
    st = c.state
    try:
        concept = st.concept(m.concept)
    except KeyError:
        raise c.refuse(Refusal.UNKNOWN_CONCEPT, m.concept) from None
    if concept.status is not CS.SURVIVING:
        raise c.refuse(Refusal.NOT_OWED, m.concept)
    version = concept.versions[-1].version + 1
    concept.versions.append(
        ConceptVersion(
            round=st.round, version=version, name=m.name, text=m.text, changes=m.changes, why=m.why
        )
    )
    concept.name = m.name
    st.current.refined.append(concept.id)
    c.move(concept, CS.REFINED, m.changes)
    c.say(
        concept.persona,
        "refinement",
        f"{m.name} (v{version})\n\n{m.text}\n\nChanged: {m.changes} Why: {m.why}",
        concept=concept.id,
    )


def _present(c: _Ctx, m: p.PresentationGiven) -> None:
    st = c.state
    step = next_step(st)
    if not step.units or step.units[0].concept != m.concept:
        raise c.refuse(Refusal.NOT_ITS_TURN, m.concept)
    concept = st.concept(m.concept)
    st.current.presented.append(concept.id)
    c.move(concept, CS.PRESENTED, "presented to the room")
    c.say(concept.persona, "presentation", m.text, concept=concept.id)


def _decide_gate(c: _Ctx, m: p.GateDecided) -> None:
    st = c.state
    eliminate, rescue = set(m.eliminate), set(m.rescue)
    if eliminate & rescue:
        raise c.refuse(Refusal.BOTH, ", ".join(sorted(eliminate & rescue)))
    presented = {x.id for x in st.with_status(CS.PRESENTED)}
    eliminated = {x.id for x in st.with_status(CS.ELIMINATED)}
    if not eliminate <= presented:
        raise c.refuse(Refusal.UNKNOWN_CONCEPT, ", ".join(sorted(eliminate - presented)))
    if not rescue <= eliminated:
        raise c.refuse(Refusal.UNKNOWN_CONCEPT, ", ".join(sorted(rescue - eliminated)))
    if rescue and not rounds_left(st):
        raise c.refuse(Refusal.NO_ROUND_LEFT)
    if not (presented - eliminate) | rescue:
        raise c.refuse(Refusal.LAST_ONE)
    for concept in in_panel_order(st, [st.concept(x) for x in eliminate]):
        c.move(concept, CS.ELIMINATED, "Quality gate: eliminated by the player")
    for concept_id in sorted(rescue):
        concept = st.concept(concept_id)
        concept.rescued = True
        concept.history.append(
            Change(
                round=st.round,
                stage=st.stage.value,
                status=concept.status,
                reason="Quality gate: rescued by the player",
            )
        )
        c.changes.append(
            {
                "event": "concept_rescued",
                "concept": concept_id,
                "round": st.round,
                "reason": "Quality gate: rescued by the player",
            }
        )
    gate = st.gate_after(st.round)
    assert gate is not None
    gate.status, gate.decision = "decided", m.model_dump(mode="json")
    c.say(PLAYER, "gate", _gate_summary(st, m), stage=0)
    st.status = Status.RUNNING


def _gate_summary(st: LabState, m: p.GateDecided) -> str:
    parts = []
    if m.eliminate:
        parts.append("Eliminated: " + ", ".join(st.concept(x).name for x in m.eliminate) + ".")
    if m.rescue:
        parts.append("Rescued: " + ", ".join(st.concept(x).name for x in m.rescue) + ".")
    if not parts:
        parts.append("Approved the survivors as they stand.")
    if m.direction:
        parts.append(f"Direction: {m.direction}")
    return " ".join(parts)


def _verdict(c: _Ctx, m: p.VerdictGiven) -> None:
    st = c.state
    finalists = {x.id for x in st.with_status(CS.PRESENTED)}
    placed = [m.winner, *m.runners_up]
    if len(set(placed)) != len(placed) or not set(placed) <= finalists:
        raise c.refuse(Refusal.BAD_PLACING)
    rest = [x.id for x in in_panel_order(st, st.with_status(CS.PRESENTED)) if x.id not in placed]
    c.move(st.concept(m.winner), CS.WINNER, m.reasoning)
    for x in m.runners_up:
        c.move(st.concept(x), CS.RUNNER_UP, "runner-up in the moderator's verdict")
    for x in rest:
        c.move(st.concept(x), CS.FINALIST, "finalist in the moderator's verdict")
    st.verdict = Verdict(
        winner=m.winner, runners_up=list(m.runners_up), finalists=rest, reasoning=m.reasoning
    )
    c.say(st.config.moderator, "verdict", m.reasoning, stage=0, concept=m.winner)
    st.status = Status.OUTPUT_READY


def _fail(c: _Ctx, m: p.SimulationFailed) -> None:
    st = c.state
    st.failure = Failure(reason=m.reason, cause=m.cause, resume_to=st.status)
    c.say(SYSTEM, "note", f"The simulation stopped: {m.reason}", stage=0)
    st.status = Status.FAILED


def _resume(c: _Ctx, m: p.SimulationResumed) -> None:
    st = c.state
    assert st.failure is not None
    st.status, st.failure = st.failure.resume_to, None
    c.say(PLAYER, "note", "Resumed where the simulation stopped.", stage=0)


MOVES: dict[Event, Any] = {
    Event.CONCEPT_SUBMITTED: _submit_concept,
    Event.CRITIQUE_SUBMITTED: _critique,
    Event.EVALUATION_SUBMITTED: _evaluate,
    Event.SYNTHESIS_SUBMITTED: _synthesize,
    Event.REFINEMENT_SUBMITTED: _refine,
    Event.PRESENTATION_GIVEN: _present,
    Event.GATE_DECIDED: _decide_gate,
    Event.VERDICT_GIVEN: _verdict,
    Event.SIMULATION_FAILED: _fail,
    Event.SIMULATION_RESUMED: _resume,
}


# --- the machine's own steps --------------------------------------------------------------------------------


def _stage_done(state: LabState) -> bool:
    """The working stage the simulation rests in has nothing left to wait for."""
    stage = state.stage
    if stage is Stage.STAGE_1_CREATING:
        return not owed_creators(state)
    if stage is Stage.STAGE_2_CRITIQUING:
        return not owed_critics(state)
    if stage is Stage.STAGE_3_SYNTHESIZING:
        return state.current.synthesis is not None
    if stage is Stage.STAGE_4_REFINING:
        return not state.with_status(CS.SURVIVING)
    if stage is Stage.STAGE_5_PRESENTING:
        return not state.with_status(CS.REFINED)
    return (
        True  # the _COMPLETE stages, ROUND_STARTING/COMPLETE, NEXT_ROUND and the gate pass straight through
    )


def _settle(state: LabState, outcomes: list[Outcome]) -> None:
    """Walk the round table while the current stage has nothing to wait for."""
    while state.status is Status.RUNNING and _stage_done(state):
        cfg = state.config
        target = stage_after(
            state.stage, round_number=state.round, rounds=cfg.rounds, gates=frozenset(cfg.gates)
        )
        ctx = _Ctx(state, Event.STAGE_ADVANCED, SYSTEM)
        state.stage = target
        reason = ENTER[target](ctx)
        if target is Stage.QUALITY_GATE:
            state.status = Status.PAUSED_AT_GATE
            ctx.event = Event.GATE_OPENED
        elif target is Stage.SIMULATION_COMPLETE:
            state.status = Status.COMPLETED
            ctx.event = Event.SIMULATION_COMPLETED
        outcomes.append(_close(ctx, {"reason": reason}))


def _enter_round(c: _Ctx) -> str:
    st = c.state
    previous = st.rounds[-1] if st.rounds else None
    st.round += 1
    gate = st.gate_after(st.round - 1)
    player = gate.decision.get("direction", "") if gate and gate.decision else ""
    focus = "\n".join(
        x
        for x in (previous.direction if previous else "", f"From the player: {player}" if player else "")
        if x
    )
    st.rounds.append(RoundRecord(number=st.round, focus=focus))
    return f"round {st.round} of {st.config.rounds} begins"


def _enter_creating(c: _Ctx) -> str:
    st = c.state
    if st.round == 1:
        st.current.creators = list(st.config.participants)
        return "every participant drafts a concept"
    in_play = {x.persona for x in st.concepts if x.status is CS.PRESENTED or x.rescued}
    creators = [] if not rounds_left(st) else [x for x in st.config.participants if x not in in_play]
    st.current.creators = creators
    if not creators:
        return "no new concepts: the round works on those in play"
    return f"{len(creators)} participant(s) without a concept in play draft a new one"


def _enter_critiquing(c: _Ctx) -> str:
    """Anonymize every concept in play under aliases drawn afresh from the seed."""
    st = c.state
    in_play = [
        x
        for x in st.concepts
        if x.status in (CS.SUBMITTED, CS.PRESENTED) or (x.status is CS.ELIMINATED and x.rescued)
    ]
    digest = hashlib.sha256(f"{st.seed}:{st.round}:aliases".encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    order = sorted(in_play, key=lambda x: x.id)
    rng.shuffle(order)
    st.current.aliases = {}
    for letter, concept in zip(string.ascii_uppercase, order, strict=False):
        alias = f"Concept {letter}"
        concept.alias, concept.rescued = alias, False
        st.current.aliases[alias] = concept.id
        c.move(concept, CS.ANONYMIZED, f"shown to critics as {alias}")
    return f"{len(order)} concept(s) anonymized for critique"


def _enter_critique_complete(c: _Ctx) -> str:
    st = c.state
    for concept in shown_to(st, None):
        c.move(
            concept,
            CS.CRITIQUED,
            f"critiqued by {sum(1 for x in critics(st) if x != concept.persona)} participant(s)",
        )
    return f"{len(st.current.critiques)} critique(s) in"


def _enter_round_complete(c: _Ctx) -> str:
    st = c.state
    st.current.status = "complete"
    return f"round {st.round} complete: {len(st.with_status(CS.PRESENTED))} concept(s) in play"


def _enter_gate(c: _Ctx) -> str:
    gate = c.state.gate_after(c.state.round)
    assert gate is not None
    gate.status = "open"
    return f"quality gate after round {c.state.round}: waiting for the player"


def _simply(reason: str) -> Any:
    return lambda c: reason


ENTER: dict[RoundStage, Any] = {
    Stage.ROUND_STARTING: _enter_round,
    Stage.STAGE_1_CREATING: _enter_creating,
    Stage.STAGE_1_COMPLETE: _simply("every owed concept is in"),
    Stage.STAGE_2_CRITIQUING: _enter_critiquing,
    Stage.STAGE_2_COMPLETE: _enter_critique_complete,
    Stage.STAGE_3_SYNTHESIZING: _simply("the evaluator scores, then the moderator decides"),
    Stage.STAGE_3_COMPLETE: _simply("survivors, eliminations and merges decided"),
    Stage.STAGE_4_REFINING: _simply("surviving authors refine"),
    Stage.STAGE_4_COMPLETE: _simply("every survivor refined"),
    Stage.STAGE_5_PRESENTING: _simply("authors present in turn"),
    Stage.STAGE_5_COMPLETE: _simply("every survivor presented"),
    Stage.ROUND_COMPLETE: _enter_round_complete,
    Stage.QUALITY_GATE: _enter_gate,
    Stage.NEXT_ROUND: _simply("on to the next round"),
    Stage.SIMULATION_COMPLETE: _simply("the last round is complete: the moderator gives the verdict"),
}


# --- starting and resuming ----------------------------------------------------------------------------------


def start(config: Config, *, seed: int) -> list[Outcome]:
    """A new simulation: INITIALIZED -> RUNNING, into round 1's first stage."""
    state = LabState(seed=seed, config=config, gates=[Gate(after_round=g) for g in sorted(config.gates)])
    ctx = _Ctx(state, Event.SIMULATION_STARTED, SYSTEM)
    state.status = Status.RUNNING
    state.stage = Stage.NEXT_ROUND  # so that the walk enters round 1 as it enters every later one
    outcomes = [_close(ctx, {"reason": f"{len(config.participants)} participants, {config.rounds} rounds"})]
    _settle(state, outcomes)
    return outcomes


def restore(snapshot: dict[str, Any]) -> LabState:
    return restore_snapshot(LabState, snapshot, schema_version=SCHEMA_VERSION, what="a Message Lab state")
