"""The game export (format "simulation-export/3", see `export_schema`; other tools read it), for every kind.

This module writes the envelope every kind shares (`common_fields`) and the helpers a kind's Markdown view uses;
the kind adds its own part (`Kind.exports`: `build`, `reader_view`, `markdown`)."""

from __future__ import annotations

import html
import re
from typing import Any

from simulations.kinds import kind_of
from simulations.models import Game
from simulations.services.files import export_schema as schema
from simulations.services.ledger.snapshot import one_snapshot

FORMAT = schema.FORMAT


def export_game(*, game: Game) -> dict[str, Any]:
    """Precondition: none; works for games at any stage. The file's content, as JSON-ready data."""
    return build_export(game=game).model_dump(mode="json")


def build_export(*, game: Game) -> schema.SimulationExport:
    """Precondition: none. The export as its kind's schema model (what the file holds, typed), read in one
    snapshot: a turn committed meanwhile is either wholly in it or not at all."""
    with one_snapshot():
        return kind_of(game).exports.build(_reread(game))


def reader_export(*, game: Game) -> dict[str, Any]:
    """Precondition: none. The export as people may read it (review page, downloads): see `hide_running`."""
    return kind_of(game).exports.reader_view(build_export(game=game)).model_dump(mode="json")


def export_markdown(*, game: Game) -> str:
    """Precondition: none. The game for people to read (while it runs, only what its user may know)."""
    with one_snapshot():
        return kind_of(game).exports.markdown(_reread(game))


def _reread(game: Game) -> Game:
    """The game's row as the snapshot sees it (the caller's copy may be older than the events read next), for the
    same reader (`viewer_seat`)."""
    fresh = Game.objects.select_related("scenario").get(pk=game.pk)
    fresh.viewer_seat = game.viewer_seat
    return fresh


def common_fields(*, game: Game) -> dict[str, Any]:
    """The envelope's fields every kind's export has (see `export_schema.SimulationExport`)."""
    return dict(
        format=schema.FORMAT,
        kind=game.scenario.kind,
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
        ),
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
    )


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
