"""The review of a negotiation, for the student and their instructor: a summary card to read in a minute (each
issue's outcome, who blocked, the student's aims), pictures (`review_pictures`), the debrief in short sections, the
transcript folded by round and issue, and the model's usage. Prints as a handout of a few pages: the summary, the
pictures, the votes and the debrief, the transcript only when the reader ticks it (`?transcript=1` ticks it at
once); the print rules are in static/mercury/review.css.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from simulations.kinds.negotiation.machine import Status
from simulations.models import Event, Game, TranscriptEntry
from simulations.services.files.export import dollars, reader_export
from simulations.services.pages import model_markdown
from simulations.services.pages.fragments import fragment
from simulations.services.people.access import can_drive, share_link

from . import review_pictures, unmoved
from .debrief import debrief_facts
from .games import scenario_of_version, seated, state_of
from .presenters import EntryView, transcript


def review(request: HttpRequest, game: Game) -> HttpResponse:
    game = seated(game)  # a class group's student reads it from their own seat
    data = reader_export(game=game)
    section = data["negotiation"]
    names = {r["id"]: r["name"] for r in section["roles"]}
    labels = {o["id"]: o["label"] for i in section["issues"] for o in i["options"]}
    titles = {i["id"]: i["title"] for i in section["issues"]}
    entries = transcript(game)
    votes = [
        {"title": titles[v["issue"]], "proposal": f"{v['proposal']} {labels[v['proposal']]}", "adopted": v["adopted"],
         "ballots": [(names[r], b) for r, b in v["ballots"].items()]}
        for v in data["votes"]
    ]  # fmt: skip
    shifts = [
        {"role": names[c["role"]], "field": c["field"], "option": c["after"] or c["before"],
         "label": labels[c["after"] or c["before"]], "reason": c["reason"]}
        for c in section["stance_changes"]
    ]  # fmt: skip
    usage_rows = [
        {"name": names.get(role, role.title()), **row, "cost": dollars(row.get("cost_usd"))}
        for role, row in data["token_usage"]["per_role"].items()
    ]
    played_by = data["game"]["model"]
    judged_by = data["game"]["judge_model"]
    return render(
        request,
        "negotiation/review.html",
        {
            "game": game, "human": names.get(game.human_role, ""), "parts": transcript_parts(entries), "votes": votes,
            "shifts": shifts, "summary": section["summary"], "debrief": model_markdown.to_html(section["summary"] or ""),
            "usage": data["token_usage"], "usage_rows": usage_rows,
            "cost": dollars(data["token_usage"]["cost_usd"]), "model": played_by,
            "judge_model": judged_by if judged_by and judged_by != played_by else "", "judge": data["judge_calls"],
            "fallback_percent": _percent(data["judge_calls"]["fallback_rate"]),
            "owner": can_drive(request.user, game), "share_url": share_link(request, game), "finished": game.phase == Status.REVIEW,
            "print_transcript": request.GET.get("transcript") == "1", "co_player": game.viewer_seat is not None,
            **(at_a_glance(game) if game.phase == Status.REVIEW else {}),
            **(moved_nothing(game, data) if game.phase == Status.REVIEW else {}),
        },
    )  # fmt: skip


def _percent(rate: float | None) -> str:
    return "" if rate is None else f"{rate:.0%}"


def transcript_parts(entries: list[EntryView]) -> list[dict[str, Any]]:
    """The transcript folded where its dividers are: Round 1, Round 2, then each issue of Round 3."""
    parts: list[dict[str, Any]] = []
    for entry in entries:
        if entry.divider or not parts:
            parts.append({"title": entry.divider or "Transcript", "round": entry.round, "entries": []})
        parts[-1]["entries"].append(entry)
    for part in parts:
        part["private"] = sum(1 for e in part["entries"] if e.private)
        part["entries_html"] = fragment(
            "negotiation/_entries.html", {"entries": part["entries"], "no_dividers": True}
        )
    return parts


def at_a_glance(game: Game) -> dict[str, Any]:
    """What a teacher reads first, once the session is over: each issue's outcome and the student's aim there,
    who voted it down, the talks held, how many positions the student's words moved; and the pictures."""
    scenario, state = scenario_of_version(game.scenario), state_of(game)
    facts = debrief_facts(game, scenario, state)
    glance = [
        {"number": i.number, "title": i.title, "proposal": f"{i.proposal.id} {i.proposal.label}",
         "adopted": i.adopted, "against": [h.seat for h in i.against],
         "aim": f"{i.aim.option.id} {i.aim.option.label}", "result": i.result, "vote": i.student_vote or ""}
        for i in facts.issues
    ]  # fmt: skip
    events = [
        (seq, to_state, list(changes))
        for seq, to_state, changes in Event.objects.filter(game=game)
        .order_by("seq")
        .values_list("seq", "to_state", "stance_changes")
    ]
    private = [
        (speaker, list(audience))
        for speaker, audience in TranscriptEntry.objects.filter(game=game, visibility="private").values_list(
            "speaker", "audience"
        )
        if state.human_role in audience
    ]
    return {
        "glance": glance,
        "aims_met": facts.aims_met,
        "talks_held": facts.talks_held,
        "talks_declined": facts.talks_declined,
        "moved": sum(len(i.changes) for i in facts.influence),
        "stance_charts": review_pictures.stance_charts(scenario, state, events),
        "vote_matrix": review_pictures.vote_matrix(scenario, state),
        "network": review_pictures.talk_network(scenario, state, private),
    }


def moved_nothing(game: Game, data: dict[str, Any]) -> dict[str, Any]:
    """The student's messages that moved no position, and why (unmoved.py), from the export the page shows: the
    readings the engine applied and the stance changes it recorded, so the review never judges a message again."""
    scenario, state = scenario_of_version(game.scenario), state_of(game)
    human = state.human_role
    said = [
        unmoved.Said(e["seq"], e["kind"], e["text"], list(e["audience"]), e["issue"])
        for e in data["transcript"]
        if e["speaker"] == human and e["kind"] in ("message", "speech")
    ]
    readings = {r["seq"]: r for r in data["judge_readings"]}
    items = unmoved.unmoved(scenario, state, said, readings, data["negotiation"]["stance_changes"])
    return {
        "unmoved": items,
        "unmoved_counts": [(unmoved.WHY_LABELS[w], n) for w, n in unmoved.counts(items).items() if n],
        "student_lines": len(said),
    }
