"""AI turns: build the seat's context, stream from the model outside any transaction, then commit the turn.

A half-streamed message is never stored: only the finished text reaches `commit_event`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings

from simulations.ai import gateway, prompts
from simulations.engine import mercury, rules
from simulations.engine.mercury import Step
from simulations.engine.scenario import Scenario
from simulations.engine.state import GameState
from simulations.models import Event, Game, TranscriptEntry

from .scenarios import scenario_of
from .turns import ModelCallRecord, commit_event, record_failed_call, state_of

NO_MODEL = {"skip": "AI_TURN_SKIPPED", "vote": "AI_VOTE_COMMITTED"}


def play_ai_step(*, game: Game, step: Step, on_chunk: Callable[[str], None] | None = None) -> Game:
    """Precondition: `step` is the game's next step and an AI one. Commits exactly one AI turn."""
    assert step.kind == "ai" and step.purpose
    if step.purpose in NO_MODEL:
        return commit_event(game_id=game.pk, expected_version=game.version, event=NO_MODEL[step.purpose])
    scenario, state = scenario_of(game.scenario), state_of(game)
    if step.purpose == "summary":
        prompt = prompts.build_summary_prompt(debrief_facts(game, scenario, state))
    else:
        prompt = prompts.build_prompt(scenario, state, step, _entries(game), _recent_changes(game, step.role))
    try:
        result = gateway.complete(prompt.messages, on_chunk=on_chunk)
    except gateway.ModelFailure as exc:
        record_failed_call(
            game=game, step=step, model=settings.MERCURY_MODEL, error=str(exc), context=prompt.context
        )
        raise
    record = ModelCallRecord(
        role=step.role or "debrief",
        purpose=step.purpose,
        context=prompt.context,
        prompt_version=prompt.version,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        token_count_method=result.token_count_method,
        model=result.model,
        latency_ms=result.latency_ms,
    )
    return commit_event(
        game_id=game.pk,
        expected_version=game.version,
        event=step.events[0],
        payload={"text": trim(result.text)},
        model_call=record,
    )


def trim(text: str) -> str:
    """Keep model text within the message limit, cutting at a sentence end where possible."""
    limit = mercury.MAX_MESSAGE_CHARS
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    return cut[: end + 1] if end > limit // 2 else cut


def _entries(game: Game) -> list[prompts.SeenEntry]:
    rows = TranscriptEntry.objects.filter(game=game).values_list(
        "seq", "speaker", "kind", "visibility", "audience", "text"
    )
    return [prompts.SeenEntry(*row) for row in rows]


def _recent_changes(game: Game, role: str | None) -> list[dict[str, Any]]:
    """This seat's stance changes since it last spoke: what it should say it was persuaded of."""
    last_own = (
        TranscriptEntry.objects.filter(game=game, speaker=role, kind__in=["message", "speech", "opening"])
        .order_by("-seq")
        .values_list("seq", flat=True)
        .first()
    ) or 0
    scenario = scenario_of(game.scenario)
    out: list[dict[str, Any]] = []
    for changes in (
        Event.objects.filter(game=game).exclude(stance_changes=[]).values_list("stance_changes", flat=True)
    ):
        for change in changes:
            if change["role"] == role and (change["cause_seq"] or 0) > last_own:
                issue = scenario.issue(change["issue"])
                out.append(
                    {
                        "issue": change["issue"],
                        "option_label": issue.option(change["after"]).label,
                        "field": change["field"],
                        "reason": change["reason"],
                    }
                )
    return out


def debrief_facts(game: Game, scenario: Scenario, state: GameState) -> dict[str, Any]:
    """The facts of a finished game that the debrief is written from."""
    human = state.human_role or ""
    aims = {i: s.preferred for i, s in state.stances[human].items()} if human else {}
    results = []
    for issue_state in state.round3.issues:
        issue = scenario.issue(issue_state.issue_id)
        assert issue_state.proposal is not None
        against = [scenario.display_name(r) for r, b in issue_state.ballots.items() if b == "no"]
        results.append(
            {
                "title": issue.title,
                "proposal_label": issue.option(issue_state.proposal).label,
                "adopted": bool(issue_state.adopted),
                "against": ", ".join(against),
                "aim_met": bool(issue_state.adopted) == (issue_state.proposal == aims.get(issue.id)),
            }
        )
    human_seqs = set(TranscriptEntry.objects.filter(game=game, speaker=human).values_list("seq", flat=True))
    moved = []
    for changes in (
        Event.objects.filter(game=game).exclude(stance_changes=[]).values_list("stance_changes", flat=True)
    ):
        for change in changes:
            if change["cause_seq"] in human_seqs:
                moved.append(
                    {
                        "role": scenario.display_name(change["role"]),
                        "title": scenario.issue(change["issue"]).title,
                        "reason": change["reason"],
                    }
                )
    missed = []
    for issue_state in state.round3.issues:
        if issue_state.adopted:
            continue
        for role, ballot in issue_state.ballots.items():
            if ballot == "no" and role != human:
                for cond in state.stances[role][issue_state.issue_id].conditions:
                    if cond.accept == issue_state.proposal and cond.if_offered:
                        offers = " and ".join(scenario.offer(o).label for o in cond.if_offered)
                        missed.append(f"{scenario.display_name(role)} would have accepted it with {offers}")
    return {
        "purpose": "summary",
        "seed": state.seed,
        "turn": state.event_seq + 1,
        "role": {"id": "debrief"},
        "human": {
            "name": scenario.display_name(human) if human else "the student",
            "aims": [
                {"title": scenario.issue(i).title, "label": scenario.issue(i).option(o).label}
                for i, o in aims.items()
            ],
        },
        "results": results,
        "moved_by_human": moved,
        "missed": missed,
        "adopted_count": sum(1 for i in state.round3.issues if i.adopted),
        "rules": {"unanimity_of": [scenario.display_name(v) for v in scenario.voters]},
        "support_at_vote": {
            i.issue_id: rules.support_counts(scenario, state, i.issue_id) for i in state.round3.issues
        },
    }
