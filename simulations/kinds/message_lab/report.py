"""Message Lab's final report (Markdown) and its state in the seed's JSON shape.

The report answers what the player asks at the end: which concept won and why, who came close, how each finalist
changed round by round (every version with what changed and why, its scores), what the moderator asked of each
round and what the player decided at the gates. Persona and model text is quoted inert (services.files.export.quoted)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from simulations.services.files.export import quoted

from .document import Concept, LabState
from .machine import in_panel_order
from .scenario import MessageLabScenario
from .state import ConceptStatus, SimulationStatus
from .words import STAGE_NAMES, STATUS_WORDS, phase_label

CS = ConceptStatus


def _who(scenario: MessageLabScenario, persona: str) -> str:
    try:
        return scenario.persona(persona).name
    except KeyError:
        return {"player": "You", "system": "Message Lab"}.get(persona, persona)


def _scores(concept: Concept) -> str:
    return ", ".join(f"round {k.split('_')[1]}: {v:g}" for k, v in concept.scores.items()) or "not scored"


def _evolution(scenario: MessageLabScenario, concept: Concept) -> list[str]:
    out = [f"*By {_who(scenario, concept.persona)} · scores {_scores(concept)}*", ""]
    for v in concept.versions:
        out += [f"**v{v.version} (round {v.round}): {quoted(v.name)[0][2:]}**", ""]
        if v.changes:
            out += [f"- Changed: {quoted(v.changes)[0][2:]}", f"- Why: {quoted(v.why)[0][2:]}", ""]
        out += [*quoted(v.text), ""]
    return out


def render_report(scenario: MessageLabScenario, state: LabState) -> str:
    cfg = state.config
    lines = [
        f"# Message Lab report: {quoted(cfg.brief.title)[0][2:]}",
        "",
        f"{cfg.rounds} rounds · panel: {', '.join(_who(scenario, p) for p in cfg.participants)} · moderator "
        f"{_who(scenario, cfg.moderator)} · evaluator {_who(scenario, cfg.evaluator)} · seed {state.seed}",
        "",
    ]
    if state.status is not SimulationStatus.OUTPUT_READY or state.verdict is None:
        lines += [f"*The simulation has not finished: round {state.round}, {phase_label(state.stage.value).lower()} "
                  f"({phase_label(state.status.value).lower()}).*", ""]  # fmt: skip
    else:
        v = state.verdict
        winner = state.concept(v.winner)
        lines += ["## Winner", "", f"### {quoted(winner.name)[0][2:]}", *_evolution(scenario, winner)]
        lines += ["### Why it won", "", *quoted(v.reasoning), ""]
        for title, ids in (("Runners-up", v.runners_up), ("Finalists", v.finalists)):
            if ids:
                lines += [f"## {title}", ""]
                for concept_id in ids:
                    concept = state.concept(concept_id)
                    lines += [f"### {quoted(concept.name)[0][2:]}", *_evolution(scenario, concept)]
    lines += ["## Round by round", ""]
    for record in state.rounds:
        lines.append(f"### Round {record.number}")
        if record.focus:
            lines += ["Direction carried in:", *quoted(record.focus)]
        made = [c for c in state.concepts if c.round_created == record.number]
        if made:
            lines.append(f"New concepts: {', '.join(quoted(c.name)[0][2:] for c in made)}.")
        for change in _fates(state, record.number):
            lines.append(f"- {change}")
        if record.direction:
            lines += ["", "The moderator's direction:", *quoted(record.direction)]
        gate = state.gate_after(record.number)
        if gate and gate.decision is not None:
            said = next(
                (x.content for x in state.transcript if x.type == "gate" and x.round == record.number), ""
            )
            lines += ["", "Your quality gate:", *quoted(said)]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _fates(state: LabState, round_number: int) -> list[str]:
    out = []
    for concept in in_panel_order(state, state.concepts):
        for h in concept.history:
            if h.round == round_number and h.status in (CS.ELIMINATED, CS.MERGED, CS.SURVIVING):
                out.append(
                    f"{quoted(concept.name)[0][2:]}: {STATUS_WORDS[h.status]} — {quoted(h.reason)[0][2:]}"
                )
    return out


# --- the seed's JSON shape ----------------------------------------------------------------------------------------


def seed_document(
    state: LabState,
    *,
    sim_id: str = "",
    created_at: datetime | None = None,
    line_times: Sequence[datetime | None] = (),
) -> dict[str, Any]:
    """The state as seed 000's "State Schema (JSON)": `line_times`, the transcript's times in order (the ledger's).
    Without id and times it is a function of the state alone (the export's section, which an import re-derives)."""
    cfg = state.config
    stage = int(state.stage.value[6]) if state.stage.value.startswith("STAGE_") else 0
    rounds = []
    for record in state.rounds:
        made = [c for c in state.concepts if c.round_created == record.number]
        fates = [h for c in state.concepts for h in c.history if h.round == record.number]
        stages = {}
        for n in range(1, 6):
            outputs = [
                {"persona": x.persona, "type": x.type, "concept": x.concept or None, "content": x.content}
                for x in state.transcript
                if x.round == record.number and x.stage == n
            ]
            done = record.status == "complete" or (record.number == state.round and n < stage)
            stages[str(n)] = {"status": "complete" if done else ("in_progress" if outputs else "pending"),
                              "outputs": outputs}  # fmt: skip
        rounds.append({
            "number": record.number, "status": record.status,
            "concepts_created": len(made),
            "concepts_surviving": sum(1 for h in fates if h.status is CS.SURVIVING),
            "concepts_eliminated": sum(1 for h in fates if h.status is CS.ELIMINATED),
            "moderator_direction": record.direction, "stages": stages,
        })  # fmt: skip

    def concept(c: Concept) -> dict[str, Any]:
        return {
            "id": c.id, "persona": c.persona, "name": c.name, "status": c.status.value.lower(),
            "round_created": c.round_created, "scores": dict(c.scores),
            "evolution_history": [
                {"round": v.round, "version": f"v{v.version}", **({"changes": f"{v.changes} ({v.why})"} if v.changes
                 else {"snapshot": v.text})}
                for v in c.versions
            ],
        }  # fmt: skip

    out_of_play = {CS.ELIMINATED, CS.MERGED}
    times = list(line_times) + [None] * (len(state.transcript) - len(line_times))
    return {
        "simulation": {
            "id": sim_id, "type": "message_lab", "status": state.status.value.lower(),
            "created_at": _iso(created_at),
            "config": {"rounds": cfg.rounds, "participants": cfg.participants, "moderator": cfg.moderator,
                       "evaluator": cfg.evaluator, "brief": cfg.brief.title, "quality_gates": cfg.gates,
                       "parallel": cfg.parallel},
            "current": {"round": state.round, "stage": stage, "stage_name": STAGE_NAMES.get(stage, state.stage.value.lower())},
            "rounds": rounds,
            "quality_gates": [{"after_round": g.after_round, "status": g.status, **({"decision": g.decision} if g.decision else {})}
                              for g in state.gates],
            "concepts": {
                "active": [concept(c) for c in state.concepts if c.status not in out_of_play],
                "eliminated": [concept(c) for c in state.concepts if c.status is CS.ELIMINATED],
                "merged": [concept(c) | {"merged_into": c.merged_into} for c in state.concepts if c.status is CS.MERGED],
            },
            "transcript": {"entries": [
                {"round": x.round, "stage": x.stage, "persona": x.persona, "type": x.type, "content": x.content,
                 "timestamp": _iso(t)}
                for x, t in zip(state.transcript, times, strict=True)
            ]},
        }
    }  # fmt: skip


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None
