"""Message Lab's prompts and replies: what each persona is asked at each stage, and its JSON answer read back as
the machine's payload (pure).

A critic sees concepts only by alias, and the text of each is scrubbed of the panel's names (a model may sign its
work), so no critique prompt names an author. The offline model reads one extra message, the `facts`: exactly the
inputs its persona function takes — for a critic, the same anonymous concepts and nothing more."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from simulations.engine.model_replies import ReplyError, attach_facts, json_object, read_facts

from . import payloads as p
from .document import Concept, LabState
from .machine import Event, Step, Unit, in_panel_order, merged_into, shown_to
from .scenario import MessageLabScenario, Persona
from .state import ConceptStatus

PROMPT_VERSION = "message-lab-v1"
FACTS = "message-lab-facts"  # the offline model's facts block (simulations/engine/model_replies.py)
AUTHOR = "[a panellist]"


@dataclass(frozen=True)
class Request:
    """One model call a step owes: who makes it, for what, and the messages (facts last, for the offline model)."""

    unit: Unit
    event: Event
    messages: list[dict[str, str]]
    facts: dict[str, Any]

    @property
    def purpose(self) -> str:
        return self.event.value.split("_")[0].lower()  # concept, critique, evaluation ...


# --- building ------------------------------------------------------------------------------------------------


def requests_for(scenario: MessageLabScenario, state: LabState, step: Step) -> list[Request]:
    """The calls `step` owes, in commit order, each built from the state as the stage found it."""
    assert step.event is not None
    return [request(scenario, state, step.event, unit) for unit in step.units]


def request(scenario: MessageLabScenario, state: LabState, event: Event, unit: Unit) -> Request:
    persona = scenario.persona(unit.persona)
    build = BUILDERS[event]
    task, facts = build(scenario, state, unit)
    facts |= {
        "op": event.value,
        "seed": state.seed,
        "round": state.round,
        "persona": persona.model_dump(mode="json"),
    }
    facts["brief"] = state.config.brief.model_dump(mode="json")
    messages = [
        {"role": "system", "content": _system(state, persona)},
        {"role": "user", "content": task},
    ]
    return Request(unit=unit, event=event, messages=messages, facts=facts)


def with_facts(req: Request) -> list[dict[str, str]]:
    """The messages plus the facts (only the offline model is given these)."""
    return attach_facts(req.messages, FACTS, req.facts)


def _system(state: LabState, persona: Persona) -> str:
    brief = state.config.brief
    # The seat this run gives the persona (a participant off the panel may moderate or evaluate), not its role.
    cfg = state.config
    role = "the panel's moderator" if persona.id == cfg.moderator else "the panel's evaluator" if persona.id == cfg.evaluator else "a member of a creative panel"  # fmt: skip
    return (
        f"You are {persona.name}, {role}, working on a brief over {state.config.rounds} rounds.\n"
        f"Your voice: {persona.voice}\nYour strengths: {', '.join(persona.strengths)}.\n"
        f"You push for: {persona.pushes_for}\nHow you critique: {persona.critique_style}\n\n"
        f"THE BRIEF\n{brief.text}\n\n"
        "Use only facts the brief gives; break none of its constraints. Answer with one JSON object and nothing else."
    )


def _focus(state: LabState) -> str:
    focus = state.current.focus
    return f"This round's direction:\n{focus}\n\n" if focus else ""


def scrub(scenario: MessageLabScenario, text: str) -> str:
    """Text a critic may read: any panellist's name (a signed draft) replaced."""
    for persona in scenario.of_role("participant"):
        for name in {persona.name, persona.name.split()[0], persona.name.split()[-1]}:
            text = re.sub(rf"\b{re.escape(name)}\b", AUTHOR, text)
    return text


def _shown(scenario: MessageLabScenario, concepts: list[Concept]) -> list[dict[str, str]]:
    return [
        {"alias": c.alias, "name": scrub(scenario, c.name), "text": scrub(scenario, c.text)} for c in concepts
    ]


def _listing(shown: list[dict[str, str]]) -> str:
    return "\n\n".join(f"### {s['alias']}: {s['name']}\n{s['text']}" for s in shown)


def _concept(scenario: MessageLabScenario, state: LabState, unit: Unit) -> tuple[str, dict[str, Any]]:
    taken = [c.name for c in state.concepts]
    task = (
        f"Round {state.round} of {state.config.rounds}. {_focus(state)}"
        "Write ONE new concept for the brief, in your own method: a short name and the full text of the "
        "deliverable the brief asks for."
        + (f" Names already used: {', '.join(taken)}." if taken else "")
        + '\nReply as {"name": "...", "text": "..."}'
    )
    return task, {"direction": state.current.focus, "taken_names": taken} | _cast(
        scenario, state, unit.persona, ""
    )


def _cast(scenario: MessageLabScenario, state: LabState, persona: str, concept_id: str) -> dict[str, Any]:
    """The offline writer's seat and brief (its own invented people) and the people the run's other concepts name."""
    from . import offline

    others = [v.text for c in state.concepts if c.id != concept_id for v in c.versions]
    panel, briefs = state.config.participants, [b.id for b in scenario.briefs]
    block = briefs.index(state.config.brief.id) if state.config.brief.id in briefs else len(briefs)
    return {
        "slot": panel.index(persona),
        "seats": len(panel),
        "block": block,
        "people": offline.people_in(others),
    }


def _critique(scenario: MessageLabScenario, state: LabState, unit: Unit) -> tuple[str, dict[str, Any]]:
    shown = _shown(scenario, shown_to(state, unit.persona))
    task = (
        f"Round {state.round}. Critique each of these concepts (their authors are not named):\n\n{_listing(shown)}\n\n"
        "For every concept give its strongest point, its most important weakness and a score from 1 to 10.\n"
        'Reply as {"notes": [{"alias": "Concept A", "strength": "...", "weakness": "...", "score": 7}, ...]}'
    )
    return task, {"concepts": shown}


def _evaluation(scenario: MessageLabScenario, state: LabState, unit: Unit) -> tuple[str, dict[str, Any]]:
    shown = _shown(scenario, shown_to(state, None))
    critiques = list(state.current.critiques.values())
    notes = "\n".join(
        f"- on {n['alias']} ({n['score']}/10): + {n['strength']} / - {n['weakness']}"
        for c in critiques
        for n in c["notes"]
    )
    task = (
        f"Round {state.round}. Score every concept against the brief, criterion by criterion: the clarity of its "
        "single idea, its fit to the audience, proof used well (not piled up), tone, the call to action, and the "
        "constraints. Never reward length or a count of proof points for its own sake.\n\n"
        f"{_listing(shown)}\n\nThe panel's critiques:\n{notes}\n\n"
        'Reply as {"scores": [{"alias": "Concept A", "score": 7.5, "reason": "..."}, ...]}'
    )
    return task, {"concepts": shown, "critiques": critiques}


def _synthesis(scenario: MessageLabScenario, state: LabState, unit: Unit) -> tuple[str, dict[str, Any]]:
    shown = _shown(scenario, shown_to(state, None))
    scores = state.current.evaluation or {}
    listed = "\n".join(f"- {s['alias']}: {s['score']}/10 — {s['reason']}" for s in scores.get("scores", []))
    gate = state.gate_after(state.round - 1)
    player = (gate.decision or {}).get("direction", "") if gate else ""
    task = (
        f"Round {state.round} of {state.config.rounds}. {_focus(state)}The concepts:\n\n{_listing(shown)}\n\n"
        f"The evaluator's scores:\n{listed}\n\nDecide every concept's fate: keep at most {state.config.keep} "
        "(at least one) to survive, eliminate the rest or merge one into a survivor whose idea it shares; give a "
        "reason for each. Then give the direction for the next round in two to four concrete instructions.\n"
        'Reply as {"decisions": [{"alias": "Concept A", "verdict": "survive|eliminate|merge", "into": "", '
        '"reason": "..."}], "direction": "..."}'
    )
    return task, {"concepts": shown, "scores": scores, "keep": state.config.keep, "rounds": state.config.rounds,
                  "direction_from_user": player}  # fmt: skip


def _refinement(scenario: MessageLabScenario, state: LabState, unit: Unit) -> tuple[str, dict[str, Any]]:
    concept = state.concept(unit.concept)
    current = {"alias": concept.alias, "name": concept.name, "text": concept.text}
    notes = [n for c in state.current.critiques.values() for n in c["notes"] if n["alias"] == concept.alias]
    merged = _shown(scenario, merged_into(state, concept.id))
    task = (
        f"Round {state.round}. Your concept survived:\n\n{_listing([current])}\n\nWhat the panel said:\n"
        + "\n".join(f"- + {n['strength']} / - {n['weakness']}" for n in notes)
        + f"\n\nThe moderator's direction: {state.current.direction}\n"
        + (f"\nFold in the best of these merged concepts:\n\n{_listing(merged)}\n" if merged else "")
        + "\nWrite the next version. Reply as "
        '{"name": "...", "text": "...", "changes": "what changed", "why": "which critique or direction it answers"}'
    )
    return task, {"concept_id": concept.id, "current": current, "notes": notes, "direction": state.current.direction,
                  "merged": merged} | _cast(scenario, state, concept.persona, concept.id)  # fmt: skip


def _presentation(scenario: MessageLabScenario, state: LabState, unit: Unit) -> tuple[str, dict[str, Any]]:
    concept = state.concept(unit.concept)
    current = {"alias": concept.alias, "name": concept.name, "text": concept.text}
    score = concept.scores.get(f"round_{state.round}")
    task = (
        f"Round {state.round}. Present your refined concept to the room in two to four sentences:\n\n"
        f"{_listing([current])}\n\n" + 'Reply as {"text": "..."}'
    )
    return task, {"concept_id": concept.id, "current": current, "score": score}


def _verdict(scenario: MessageLabScenario, state: LabState, unit: Unit) -> tuple[str, dict[str, Any]]:
    finalists = in_panel_order(state, state.with_status(ConceptStatus.PRESENTED))
    rows = [(c.id, {"alias": c.id, "name": c.name, "text": c.text}, _latest(c)) for c in finalists]
    task = (
        "The last round is over. Choose the winner and up to two runners-up among the finalists:\n\n"
        + "\n\n".join(f"### {cid} ({score}/10): {s['name']}\n{s['text']}" for cid, s, score in rows)
        + '\n\nReply as {"winner": "<id>", "runners_up": ["<id>"], "reasoning": "why the winner beat the others"}'
    )
    return task, {"finalists": [[cid, s, score] for cid, s, score in rows]}


def _latest(concept: Concept) -> float:
    return list(concept.scores.values())[-1] if concept.scores else 0.0


BUILDERS = {
    Event.CONCEPT_SUBMITTED: _concept,
    Event.CRITIQUE_SUBMITTED: _critique,
    Event.EVALUATION_SUBMITTED: _evaluation,
    Event.SYNTHESIS_SUBMITTED: _synthesis,
    Event.REFINEMENT_SUBMITTED: _refinement,
    Event.PRESENTATION_GIVEN: _presentation,
    Event.VERDICT_GIVEN: _verdict,
}


# --- reading replies -----------------------------------------------------------------------------------------


def payload_from_reply(req: Request, text: str) -> p.Payload:
    """The reply as the event's payload; who made it comes from the request, never from the reply."""
    from .machine import PAYLOADS

    data = json_object(text)
    if req.event in (Event.CONCEPT_SUBMITTED, Event.CRITIQUE_SUBMITTED):
        data["persona"] = req.unit.persona
    if req.event in (Event.REFINEMENT_SUBMITTED, Event.PRESENTATION_GIVEN):
        data["concept"] = req.unit.concept
    model = PAYLOADS[req.event]
    try:
        return model.model_validate({k: v for k, v in data.items() if k in model.model_fields})
    except ValidationError as exc:
        raise ReplyError(f"the reply does not fit: {exc.errors()[0]['msg']}") from None


_STRING_FIELD = re.compile(
    r'"(name|text|strength|weakness|reason|direction|changes|why|reasoning)"\s*:\s*"((?:[^"\\]|\\.)*)'
)


def streamed_text(text: str) -> str:
    """What a page shows of a JSON reply still streaming: its prose fields so far, not the braces."""
    parts = []
    for _, value in _STRING_FIELD.findall(text):
        try:
            parts.append(json.loads(f'"{value}"'))
        except json.JSONDecodeError:
            parts.append(value.replace("\\n", "\n"))
    return " — ".join(x for x in parts if x)


# --- the offline model -------------------------------------------------------------------------------------------


def offline_answer(messages: list[dict[str, Any]]) -> str | None:
    """The offline personas' reply to a Message Lab prompt (None: not one of ours)."""
    from . import offline
    from .scenario import Brief

    facts = read_facts(messages, FACTS)
    if facts is None:
        return None
    brief, persona = Brief.model_validate(facts["brief"]), Persona.model_validate(facts["persona"])
    common = {"seed": facts["seed"], "round_number": facts["round"]}
    shown = [offline.Shown(**s) for s in facts.get("concepts", [])]
    op = Event(facts["op"])
    reply: p.Payload
    if op is Event.CONCEPT_SUBMITTED:
        reply = offline.concept(
            brief, persona, direction=facts["direction"], taken_names=facts["taken_names"],
            slot=facts.get("slot"), seats=facts.get("seats", 1), block=facts.get("block", 0),
            people=facts.get("people", ()), **common,
        )  # fmt: skip
    elif op is Event.CRITIQUE_SUBMITTED:
        reply = offline.critique(brief, persona, concepts=shown, **common)
    elif op is Event.EVALUATION_SUBMITTED:
        critiques = [p.CritiqueSubmitted.model_validate(c) for c in facts["critiques"]]
        reply = offline.evaluation(brief, persona, concepts=shown, critiques=critiques, **common)
    elif op is Event.SYNTHESIS_SUBMITTED:
        scores = p.EvaluationSubmitted.model_validate(facts["scores"])
        reply = offline.synthesis(
            brief, persona, concepts=shown, scores=scores, keep=facts["keep"], rounds=facts["rounds"],
            direction_from_user=facts["direction_from_user"], **common,
        )  # fmt: skip
    elif op is Event.REFINEMENT_SUBMITTED:
        reply = offline.refinement(
            brief, persona, concept_id=facts["concept_id"], current=offline.Shown(**facts["current"]),
            notes=[p.CritiqueNote.model_validate(n) for n in facts["notes"]], direction=facts["direction"],
            merged=[offline.Shown(**s) for s in facts["merged"]], slot=facts.get("slot"),
            seats=facts.get("seats", 1), block=facts.get("block", 0), people=facts.get("people", ()), **common,
        )  # fmt: skip
    elif op is Event.PRESENTATION_GIVEN:
        reply = offline.presentation(
            brief, persona, concept_id=facts["concept_id"], current=offline.Shown(**facts["current"]),
            score=facts["score"], **common,
        )  # fmt: skip
    else:
        finalists = [(cid, offline.Shown(**s), score) for cid, s, score in facts["finalists"]]
        reply = offline.verdict(brief, persona, seed=facts["seed"], finalists=finalists)
    return json.dumps(reply.model_dump(mode="json"))
