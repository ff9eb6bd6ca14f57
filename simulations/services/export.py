"""The game export (format "simulation-export/3", see `export_schema`; other tools read it) and a Markdown view."""

from __future__ import annotations

import html
import re
from typing import Any

from simulations.engine.visibility import visible_to
from simulations.kinds.negotiation import judge
from simulations.kinds.negotiation.games import scenario_of_version
from simulations.kinds.negotiation.scenario import Scenario
from simulations.models import Game

from . import export_schema as schema

FORMAT = schema.FORMAT
# Events whose transcript entry the judge read (one entry each, in the same order as the events).
JUDGED_EVENTS = ("HUMAN_MESSAGE_SUBMITTED", "AI_MESSAGE_COMMITTED", "HUMAN_TURN_SPEAK", "AI_TURN_COMMITTED")


def export_game(*, game: Game) -> dict[str, Any]:
    """Precondition: none; works for games at any stage. The file's content, as JSON-ready data."""
    return build_export(game=game).model_dump(mode="json")


def build_export(*, game: Game) -> schema.SimulationExport:
    """Precondition: none. The export as the schema's model (what the file holds, typed)."""
    scenario = scenario_of_version(game.scenario)
    return schema.SimulationExport(
        format=schema.FORMAT,
        kind="negotiation",
        game=schema.GameInfo(
            id=game.pk,
            scenario=schema.ScenarioRef(
                slug=game.scenario.slug,
                version=game.scenario.version,
                content_hash=game.scenario.content_hash,
            ),
            seed=game.seed,
            status=game.status,
            phase=game.phase,
            human_role=game.human_role or None,
            human_policy=game.human_policy or {},
            model=game.model or None,
            judge_model=game.judge_model or None,
            created_at=game.created_at,
            finished_at=game.finished_at,
        ),  # fmt: skip
        events=ledger_events(game=game),
        transcript=ledger_entries(game=game),
        checkpoints=[
            schema.CheckpointInfo(seq=seq, after_event=after, transcript_seq=tseq)
            for seq, after, tseq in game.checkpoints.order_by("seq").values_list(
                "seq", "after_event", "transcript_seq"
            )
        ],
        votes=[
            schema.VoteInfo(issue=v.issue, proposal=v.proposal, ballots=v.ballots, adopted=v.adopted)
            for v in game.votes.order_by("issue")
        ],
        judge_readings=judge_readings(game=game, scenario=scenario),
        model_calls=[
            schema.ModelCallInfo(
                seq=m.seq,
                event_seq=m.event_seq,
                role=m.role,
                purpose=m.purpose,
                phase=m.phase,
                context=m.context,
                prompt_version=m.prompt_version,
                prompt_tokens=m.prompt_tokens,
                completion_tokens=m.completion_tokens,
                counted_by=m.token_count_method or None,
                model=m.model,
                status=m.status,
                error=m.error or None,
                cost_usd=m.cost_usd,
                outcome=m.outcome or None,
                outcome_reason=m.outcome_reason or None,
            )
            for m in game.model_calls.order_by("seq")
        ],  # fmt: skip
        token_usage=token_usage(game=game),
        judge_calls=judge_calls(game=game),
        negotiation=schema.NegotiationSection(
            roles=_roles(scenario),
            issues=[
                schema.IssueInfo(
                    id=i.id,
                    title=i.title,
                    options=[schema.OptionInfo(id=o.id, label=o.label) for o in i.options],
                )
                for i in scenario.issues
            ],
            stance_changes=[
                schema.StanceChangeInfo(event_seq=e.seq, **change)
                for e in game.events.exclude(stance_changes=[]).order_by("seq")
                for change in e.stance_changes
            ],
            commitments=game.state.get("commitments", []),
            summary=game.state.get("summary"),
        ),
    )


def reader_export(*, game: Game) -> dict[str, Any]:
    """Precondition: none. The export as people may read it (review page, downloads): see `hide_running`."""
    return hide_running(build_export(game=game)).model_dump(mode="json")


def hide_running(doc: schema.SimulationExport) -> schema.SimulationExport:
    """While a game is still being played, what its student may know: the transcript they can see, no AI seat's
    stance changes and no commitments (whether a trade moved a seat). Once the game is in review, everything.
    (The complete document, for import and the `export_game` command, is `build_export`.)"""
    if doc.game.phase == "REVIEW" or doc.negotiation is None:
        return doc
    human = doc.game.human_role or ""
    section = doc.negotiation.model_copy(
        update={
            "stance_changes": [c for c in doc.negotiation.stance_changes if human and c.role == human],
            "commitments": [],
        }
    )
    entries = [e for e in doc.transcript if human and visible_to(e, human)]
    return doc.model_copy(update={"negotiation": section, "transcript": entries})


def ledger_events(*, game: Game, after: int = 0) -> list[schema.EventInfo]:
    """Precondition: none. The game's events after event `after`, in order, with their payloads."""
    return [
        schema.EventInfo(seq=e.seq, name=e.name, from_=e.from_state, to=e.to_state, actor=e.actor,
                         payload=e.payload)
        for e in game.events.filter(seq__gt=after).order_by("seq")
    ]  # fmt: skip


def ledger_entries(*, game: Game, after: int = 0) -> list[schema.EntryInfo]:
    """Precondition: none. The game's transcript entries after entry `after`, in order."""
    return [
        schema.EntryInfo(
            seq=e.seq, round=e.round, phase=e.phase, issue=e.issue or None, speaker=e.speaker, kind=e.kind,
            visibility=e.visibility, audience=e.audience, text=e.text,
        )
        for e in game.entries.filter(seq__gt=after).order_by("seq")
    ]  # fmt: skip


def judge_readings(*, game: Game, scenario: Scenario) -> list[schema.ReadingInfo]:
    """How the judge read each message and speech: what it took the speaker to back, oppose, offer, ask for or
    trade, and whether that reading is the rules', a model's (accepted) or the rules' after a refused model
    answer. The engine's own function, given the event's stored payload, so it is the reading that moved stances."""
    events = game.events.filter(name__in=JUDGED_EVENTS).order_by("seq").values_list("seq", "payload")
    entries = game.entries.filter(kind__in=("message", "speech")).order_by("seq")
    out: list[schema.ReadingInfo] = []
    for (event_seq, payload), entry in zip(events, entries, strict=False):
        judgement = judge.judge_message(
            scenario, speaker=entry.speaker, text=entry.text, payload=payload,
            issue=(entry.issue or None) if entry.kind == "speech" else None,
        )  # fmt: skip
        out.append(
            schema.ReadingInfo.model_validate(
                {"seq": entry.seq, "event_seq": event_seq, "speaker": entry.speaker,
                 **judge.describe(scenario, entry.speaker, judgement)}
            )
        )  # fmt: skip
    return out


def token_usage(*, game: Game) -> schema.TokenUsage:
    """Tokens and cost per seat and for the game, with how tokens were counted. Failed calls count too: their
    prompts were sent (estimated where the provider reported nothing), as the token budget counts them.

    A cost is litellm's price for the calls whose model it prices, in US dollars; None where it priced none."""
    per_role: dict[str, dict[str, Any]] = {}
    methods: set[str] = set()
    total: float | None = None
    calls = game.model_calls.order_by("seq").values_list(
        "role", "prompt_tokens", "completion_tokens", "token_count_method", "cost_usd"
    )
    for role, prompt_tokens, completion_tokens, method, cost in calls:
        row = per_role.setdefault(
            role, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": None}
        )
        row["calls"] += 1
        row["prompt_tokens"] += prompt_tokens
        row["completion_tokens"] += completion_tokens
        if cost is not None:
            row["cost_usd"] = (row["cost_usd"] or 0.0) + cost
            total = (total or 0.0) + cost
        if method:
            methods.add(method)
    return schema.TokenUsage(
        prompt_tokens=sum(r["prompt_tokens"] for r in per_role.values()),
        completion_tokens=sum(r["completion_tokens"] for r in per_role.values()),
        cost_usd=_dollars(total),
        per_role={
            role: schema.RoleUsage(**{**row, "cost_usd": _dollars(row["cost_usd"])})
            for role, row in sorted(per_role.items())
        },
        counted_by=sorted(methods),
    )


def judge_calls(*, game: Game) -> schema.JudgeCalls:
    """How the model judge's readings fared: used, fell back to the rules (the answer was unusable), or failed
    (no answer; the rules read the message too). fallback_rate = fallback / calls (None without judge calls)."""
    outcomes = list(
        game.model_calls.filter(purpose="judge").order_by("seq").values_list("outcome", flat=True)
    )
    fallback = outcomes.count("fallback")
    return schema.JudgeCalls(
        calls=len(outcomes),
        used=outcomes.count("used"),
        fallback=fallback,
        failed=outcomes.count("failed"),
        fallback_rate=round(fallback / len(outcomes), 4) if outcomes else None,
    )


def _dollars(value: float | None) -> float | None:
    """Sums of float prices carry noise in the last digits; ten decimals keep every real fraction of a cent."""
    return None if value is None else round(value, 10)


def _roles(scenario: Scenario) -> list[schema.RoleInfo]:
    roles = [schema.RoleInfo(id=r.id, name=r.name, kind=r.kind, votes=r.votes) for r in scenario.roles]
    roles.append(schema.RoleInfo(id=scenario.chair.id, name=scenario.chair.name, kind="chair", votes=False))
    return roles


def export_markdown(*, game: Game) -> str:
    """Precondition: none. The game for people to read: votes, transcript by round, stance shifts, usage (while
    the game runs, only what its student may know: `hide_running`)."""
    data = hide_running(build_export(game=game))
    section = data.negotiation
    assert section is not None  # the schema requires the section of the document's kind
    names = {r.id: r.name for r in section.roles}
    g = data.game
    out = [
        f"# {scenario_title(game)} — game {g.id}",
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


def dollars(value: float | None) -> str:
    """A cost for people: unknown where litellm has no price; fractions of a cent kept visible."""
    if value is None:
        return "unknown"
    return f"${value:.4f}" if value >= 0.01 or value == 0 else f"${value:.6f}"


def inert(text: str) -> str:
    """Markdown viewers render raw HTML: escape it so a message can never become markup or script."""
    return html.escape(text, quote=False)


# Inline Markdown a message could use to style itself as something else: emphasis, code, links and images
# (brackets), tables (pipes), strike-through, and the backslash itself. `<`, `>` and `&` are HTML-escaped.
_INLINE = re.compile(r"([\\`*_\[\]|~!])")
_ORDERED_ITEM = re.compile(r"^\d+(?=[.)])")


def quoted(text: str) -> list[str]:
    """A message as a Markdown block quote under its speaker's line: every line of it stays inside the quote and is
    plain text there (no heading, table, list, chair line, link, image or HTML of its own)."""
    return [
        ("> " + _unblocked(_INLINE.sub(r"\\\1", inert(raw).strip()))).rstrip()
        for raw in text.splitlines() or [""]
    ]


def _unblocked(line: str) -> str:
    """A line that cannot start a block: heading, list item, setext underline or thematic break, definition."""
    item = _ORDERED_ITEM.match(line)
    if item:
        return f"{line[: item.end()]}\\{line[item.end() :]}"
    return f"\\{line}" if line[:1] in ("#", "-", "+", "=", ":") else line


def no_links(text: str) -> str:
    """Model-written Markdown (the debrief) keeps its headings and lists but can link to nothing, load no image."""
    return text.replace("[", "\\[").replace("]", "\\]")


def scenario_title(game: Game) -> str:
    return scenario_of_version(game.scenario).title
