"""Prompt-size benchmark: how big each AI seat's prompt is over a whole game, against a naive full transcript.

    .venv/bin/python bench/prompts.py [--role EU] [--human passive|advocate] [--seed 1] [--all-roles] [--per-call] [--json]

One game is created with `create_game` and played to REVIEW by `play_game` with a scripted human and the built-in
offline model (no network, no typing delay), on a fresh SQLite file. Every AI prompt of the game (purposes
talk_open, talk, talk_final and speech) is measured twice, from the same inputs:

* **ours**: the prompt `prompts.build_prompt` really built and sent; its size is the model call's recorded
  `ModelCall.prompt_tokens` (the offline model counts with `tokens.estimate_tokens`, and the script checks that
  its own count of the captured prompt equals the recorded one, call by call);
* **naive**: `prompts.build_prompt` called again with the same scenario, state, step, transcript and stance
  changes, but with the rolling memory replaced by "no digest, and every entry the seat may see in the window".
  So the system prompt (briefs, persona, positions, task, facts block) is identical, the memory section says
  "(nothing older than the latest exchanges)", and the user message holds the whole transcript visible to the
  seat so far, rendered as prompts.py renders its window ("[seq] Speaker: text" lines). The transcript passed
  in is every entry stored before the call (the call's own entry is written after it); visibility is
  `engine.visibility.visible_to`, inside `build_prompt`, as for the real prompt.

The capture swaps a wrapper into `simulations.kinds.negotiation.prompts.build_prompt` (turns.py calls it through the module), and
the naive rebuild swaps `prompts.build_memory` for the duration of that one call only.

Game progress of a call is its `ModelCall.event_seq` (the event it produced) over the game's last event seq. The
report gives prompt tokens per call by decile of progress, ours against naive; the spread (min/max) of ours once
the seat's window is full (it has seen more entries than the window holds, so older ones go to the digest); and
total prompt tokens per game, ours against naive, with the ratio. --all-roles plays one game per human seat.

See docs/benchmarks.md for the current figures and how they compare with the aims.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from simulations.kinds.negotiation.machine import Step
    from simulations.kinds.negotiation.memory import Memory, Seen
    from simulations.kinds.negotiation.prompts import Prompt, SeenEntry
    from simulations.kinds.negotiation.scenario import Scenario
    from simulations.kinds.negotiation.state import GameState
    from simulations.models import ScenarioVersion

ROOT = Path(__file__).resolve().parent.parent
SCENARIO_FOLDER = "scenarios/mercury"
SCENARIO_SLUG = "mercury"
PURPOSES = ("talk_open", "talk", "talk_final", "speech")
BUCKETS = 10
AIM_RATIO = 1 / 3


@dataclass
class Captured:
    """One `build_prompt` call as the wrapper saw it."""

    role: str
    purpose: str
    context: list[int]
    seen: int  # entries visible to the seat at the call
    window: int  # of which in the recent window
    digest_lines: int
    ours: int  # tokens of the prompt sent
    naive: int  # tokens of the same prompt with the whole visible transcript instead of digest + window
    digest_tokens: int
    window_tokens: int
    facts_tokens: int  # the machine-readable facts block (part of the fixed part)
    naive_transcript_tokens: int


@dataclass
class Call:
    index: int  # position among the game's prompt calls, from 0
    seq: int  # ModelCall.seq
    event_seq: int
    progress: float  # event_seq / the game's last event seq
    role: str
    purpose: str
    seen: int
    window: int
    window_full: bool  # the seat has seen more than its window holds: older entries are in the digest
    digest_lines: int
    ours: int
    naive: int
    digest_tokens: int
    window_tokens: int
    facts_tokens: int
    naive_transcript_tokens: int


@dataclass
class Bucket:
    lo: int  # percent of game progress
    hi: int
    calls: int
    seen_mean: float
    ours_mean: float
    ours_max: int
    naive_mean: float
    naive_max: int


@dataclass
class Spread:
    calls: int
    min: int
    max: int
    max_over_min: float


@dataclass
class GameReport:
    seed: int
    human_role: str
    human: str
    events: int
    transcript_entries: int
    calls: int
    calls_by_purpose: dict[str, int]
    ours_total: int
    naive_total: int
    ratio: float
    aim_ratio_met: bool
    first_full_call: int | None  # index of the first call made with a full window
    first_full_progress: float | None
    ours_after_full: Spread | None
    naive_after_full: Spread | None
    ours_after_full_by_purpose: dict[str, Spread]
    ours_after_full_first_third_mean: float | None
    ours_after_full_last_third_mean: float | None
    fixed_mean: float  # ours minus its digest and window: briefs, persona, task, facts
    facts_mean: float  # of which the facts block
    ratio_without_facts: (
        float  # what-if: both totals without the facts block (it is identical in both prompts)
    )
    digest_mean: float
    digest_min: int
    digest_max: int
    digest_first_third_mean: float | None  # over all calls
    digest_last_third_mean: float | None
    window_mean: float
    naive_transcript_mean: float
    buckets: list[Bucket]
    call_rows: list[Call]


if str(Path(__file__).resolve().parents[1]) not in sys.path:  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.games import configure as games_configure  # noqa: E402
from bench.games import prepare  # noqa: E402


def configure(db: Path) -> None:
    """The same standalone Django set-up as bench/games.py (SQLite, no token delay, DEBUG off)."""
    games_configure(db, debug=False)


def prompt_tokens(prompt: Prompt) -> int:
    """Counted as the offline model counts a prompt (simulations/ai/offline.py)."""
    from simulations.ai.tokens import estimate_tokens

    return sum(estimate_tokens(str(m.get("content", ""))) for m in prompt.messages)


def facts_block(prompt: Prompt) -> str:
    from simulations.kinds.negotiation.prompts import FACTS_CLOSE, FACTS_OPEN

    system = prompt.messages[0]["content"]
    start, end = system.find(FACTS_OPEN), system.find(FACTS_CLOSE)
    return system[start : end + len(FACTS_CLOSE)] if 0 <= start < end else ""


@contextmanager
def capturing(out: list[Captured]) -> Iterator[None]:
    """Wrap `prompts.build_prompt`: record each real prompt and, from the same inputs, the naive one."""
    from simulations.ai.tokens import estimate_tokens
    from simulations.engine.visibility import visible_to
    from simulations.kinds.negotiation import prompts
    from simulations.kinds.negotiation.memory import Memory

    original_build = prompts.build_prompt
    original_memory = prompts.build_memory

    def whole_transcript(scenario: Scenario, seen: Sequence[Seen], role: str) -> Memory:
        return Memory(digest=[], digest_seqs=[], window=list(seen))

    def build(
        scenario: Scenario,
        state: GameState,
        step: Step,
        entries: list[SeenEntry],
        recent_changes: list[dict[str, Any]],
        *,
        with_facts: bool = True,
    ) -> Prompt:
        prompt = original_build(scenario, state, step, entries, recent_changes, with_facts=with_facts)
        role = step.role
        assert role is not None and step.purpose is not None
        seen = [e for e in entries if visible_to(e, role)]
        memory: Memory = original_memory(scenario, seen, role)
        prompts.build_memory = whole_transcript
        try:
            naive = original_build(scenario, state, step, entries, recent_changes, with_facts=with_facts)
        finally:
            prompts.build_memory = original_memory

        def lines(items: Sequence[Seen]) -> int:
            return sum(
                estimate_tokens(f"[{e.seq}] {scenario.display_name(e.speaker)}: {e.text}") for e in items
            )

        out.append(
            Captured(
                role=role,
                purpose=step.purpose,
                context=list(prompt.context),
                seen=len(seen),
                window=len(memory.window),
                digest_lines=len(memory.digest),
                ours=prompt_tokens(prompt),
                naive=prompt_tokens(naive),
                digest_tokens=sum(estimate_tokens(f"- {line}") for line in memory.digest),
                window_tokens=lines(memory.window),
                facts_tokens=estimate_tokens(facts_block(prompt)),
                naive_transcript_tokens=lines(seen),
            )
        )
        return prompt

    prompts.build_prompt = build
    try:
        yield
    finally:
        prompts.build_prompt = original_build


def spread(values: Sequence[int]) -> Spread | None:
    if not values:
        return None
    low, high = min(values), max(values)
    return Spread(calls=len(values), min=low, max=high, max_over_min=high / low if low else 0.0)


def play(version: ScenarioVersion, *, seed: int, role: str, human: str) -> GameReport:
    from simulations.kinds.negotiation.bots import make_policy
    from simulations.kinds.negotiation.headless import play_game
    from simulations.models import Event, ModelCall, TranscriptEntry
    from simulations.services.ledger import turns

    captured: list[Captured] = []
    game = turns.create_game(scenario_version=version, seed=seed)
    with capturing(captured):
        game = play_game(game_id=game.pk, policy=make_policy(human, role))
    if game.phase != "REVIEW":
        raise RuntimeError(f"game {game.pk} (seed {seed}, {role}) stopped in {game.phase}")
    if game.human_role != role:
        raise RuntimeError(f"the human took {game.human_role}, not {role}")
    rows = list(ModelCall.objects.filter(game=game, purpose__in=PURPOSES).order_by("seq"))
    if len(rows) != len(captured):
        raise RuntimeError(
            f"{len(captured)} prompts built but {len(rows)} model calls stored: some caller of build_prompt "
            "escaped the wrapper; update bench/prompts.py"
        )
    last_event = max(Event.objects.filter(game=game).values_list("seq", flat=True))
    calls: list[Call] = []
    for index, (row, cap) in enumerate(zip(rows, captured, strict=True)):
        if (row.role, row.purpose, list(row.context)) != (cap.role, cap.purpose, cap.context):
            raise RuntimeError(f"call {row.seq} does not match the captured prompt {index}")
        if row.prompt_tokens != cap.ours:
            raise RuntimeError(
                f"call {row.seq}: stored {row.prompt_tokens} prompt tokens, counted {cap.ours} in its prompt"
            )
        event_seq = row.event_seq or 0
        calls.append(
            Call(
                index=index,
                seq=row.seq,
                event_seq=event_seq,
                progress=event_seq / last_event,
                role=cap.role,
                purpose=cap.purpose,
                seen=cap.seen,
                window=cap.window,
                window_full=cap.window < cap.seen,
                digest_lines=cap.digest_lines,
                ours=row.prompt_tokens,
                naive=cap.naive,
                digest_tokens=cap.digest_tokens,
                window_tokens=cap.window_tokens,
                facts_tokens=cap.facts_tokens,
                naive_transcript_tokens=cap.naive_transcript_tokens,
            )
        )
    entries = TranscriptEntry.objects.filter(game=game).count()
    return summarise(calls, seed=seed, role=role, human=human, events=last_event, entries=entries)


def summarise(
    calls: list[Call], *, seed: int, role: str, human: str, events: int, entries: int
) -> GameReport:
    buckets: list[Bucket] = []
    for b in range(BUCKETS):
        inside = [c for c in calls if min(BUCKETS - 1, int(c.progress * BUCKETS)) == b]
        if not inside:
            continue
        buckets.append(
            Bucket(
                lo=b * 100 // BUCKETS,
                hi=(b + 1) * 100 // BUCKETS,
                calls=len(inside),
                seen_mean=statistics.fmean(c.seen for c in inside),
                ours_mean=statistics.fmean(c.ours for c in inside),
                ours_max=max(c.ours for c in inside),
                naive_mean=statistics.fmean(c.naive for c in inside),
                naive_max=max(c.naive for c in inside),
            )
        )
    first_full = next((c for c in calls if c.window_full), None)
    # "After the window filled": every call from the first full-window call on (a later call's window is full too,
    # since a seat's visible transcript only grows).
    after = [c for c in calls if first_full is not None and c.index >= first_full.index]
    by_purpose = {
        p: s for p in PURPOSES for s in [spread([c.ours for c in after if c.purpose == p])] if s is not None
    }
    third, all_third = len(after) // 3, len(calls) // 3
    ours_total = sum(c.ours for c in calls)
    naive_total = sum(c.naive for c in calls)
    ratio = ours_total / naive_total if naive_total else 0.0
    facts_total = sum(c.facts_tokens for c in calls)
    digests = [c.digest_tokens for c in calls]
    return GameReport(
        seed=seed,
        human_role=role,
        human=human,
        events=events,
        transcript_entries=entries,
        calls=len(calls),
        calls_by_purpose=dict(Counter(c.purpose for c in calls)),
        ours_total=ours_total,
        naive_total=naive_total,
        ratio=ratio,
        aim_ratio_met=ratio <= AIM_RATIO,
        first_full_call=first_full.index if first_full else None,
        first_full_progress=first_full.progress if first_full else None,
        ours_after_full=spread([c.ours for c in after]),
        naive_after_full=spread([c.naive for c in after]),
        ours_after_full_by_purpose=by_purpose,
        ours_after_full_first_third_mean=statistics.fmean(c.ours for c in after[:third]) if third else None,
        ours_after_full_last_third_mean=statistics.fmean(c.ours for c in after[-third:]) if third else None,
        fixed_mean=statistics.fmean(c.ours - c.digest_tokens - c.window_tokens for c in calls),
        facts_mean=statistics.fmean(c.facts_tokens for c in calls),
        ratio_without_facts=(ours_total - facts_total) / (naive_total - facts_total) if naive_total else 0.0,
        digest_mean=statistics.fmean(digests),
        digest_min=min(digests),
        digest_max=max(digests),
        digest_first_third_mean=statistics.fmean(digests[:all_third]) if all_third else None,
        digest_last_third_mean=statistics.fmean(digests[-all_third:]) if all_third else None,
        window_mean=statistics.fmean(c.window_tokens for c in calls),
        naive_transcript_mean=statistics.fmean(c.naive_transcript_tokens for c in calls),
        buckets=buckets,
        call_rows=calls,
    )


def render_game(r: GameReport, *, per_call: bool) -> str:
    purposes = ", ".join(f"{p} {r.calls_by_purpose[p]}" for p in PURPOSES if p in r.calls_by_purpose)
    lines = [
        f"Seed {r.seed}, human ({r.human}) in {r.human_role}: {r.events} events, {r.transcript_entries} "
        f"transcript entries, {r.calls} prompt calls ({purposes})",
        "Progress = the call's event_seq / the game's last event seq. Tokens: tokens.estimate_tokens.",
        "",
        "  progress   calls  seen entries  ours mean  ours max  naive mean  naive max  ours/naive",
    ]
    for b in r.buckets:
        lines.append(
            f"  {b.lo:3d}-{b.hi:3d} %  {b.calls:5d} {b.seen_mean:13.1f} {b.ours_mean:10.0f} {b.ours_max:9d} "
            f"{b.naive_mean:11.0f} {b.naive_max:10d} {b.ours_mean / b.naive_mean:11.2f}"
        )
    lines.append("")
    if r.first_full_call is None or r.ours_after_full is None or r.naive_after_full is None:
        lines.append("The window never filled: every prompt held the whole visible transcript.")
    else:
        o, n = r.ours_after_full, r.naive_after_full
        assert r.first_full_progress is not None
        lines += [
            f"Window full from call {r.first_full_call} (progress {r.first_full_progress * 100:.0f} %) on: "
            f"{o.calls} calls",
            f"  ours  min {o.min:5d}  max {o.max:5d}  max/min {o.max_over_min:.2f}",
            f"  naive min {n.min:5d}  max {n.max:5d}  max/min {n.max_over_min:.2f}",
        ]
        for purpose, s in r.ours_after_full_by_purpose.items():
            lines.append(f"  ours, {purpose:<10} min {s.min:5d}  max {s.max:5d}  ({s.calls} calls)")
        if r.ours_after_full_first_third_mean is not None and r.ours_after_full_last_third_mean is not None:
            lines.append(
                f"  ours mean, first third of those calls {r.ours_after_full_first_third_mean:.0f}, "
                f"last third {r.ours_after_full_last_third_mean:.0f}"
            )
    lines += [
        "",
        f"Our prompt per call, mean: fixed part {r.fixed_mean:.0f} (of which the facts block "
        f"{r.facts_mean:.0f}, the rest briefs, persona, positions, task), digest "
        f"{r.digest_mean:.0f}, window {r.window_mean:.0f}; naive whole transcript {r.naive_transcript_mean:.0f}",
        f"Total prompt tokens: ours {r.ours_total}, naive {r.naive_total}, ratio {r.ratio:.3f} "
        f"(aim at most {AIM_RATIO:.3f}: {'met' if r.aim_ratio_met else 'NOT met'})",
        f"  what-if, the facts block (identical in both) left out of both: ratio {r.ratio_without_facts:.3f}",
    ]
    if r.digest_first_third_mean is not None and r.digest_last_third_mean is not None:
        lines.insert(
            -2,
            f"Digest per call: min {r.digest_min}, max {r.digest_max}; mean over the first third of the calls "
            f"{r.digest_first_third_mean:.0f}, last third {r.digest_last_third_mean:.0f}",
        )
    if per_call:
        lines += ["", "  call  event  progress  role  purpose     seen  window  ours  naive"]
        lines += [
            f"  {c.index:4d} {c.event_seq:6d} {c.progress * 100:8.0f}%  {c.role:<5} {c.purpose:<10} "
            f"{c.seen:5d} {c.window:7d} {c.ours:5d} {c.naive:6d}"
            for c in r.call_rows
        ]
    return "\n".join(lines)


def render_roles(reports: list[GameReport]) -> str:
    lines = [
        "",
        "One game per human seat",
        "  human  calls  ours total  naive total  ratio  w/o facts  ours min..max after window full  naive max",
    ]
    for r in reports:
        o, n = r.ours_after_full, r.naive_after_full
        span = f"{o.min}..{o.max} ({o.max_over_min:.2f})" if o else "-"
        lines.append(
            f"  {r.human_role:<6} {r.calls:5d} {r.ours_total:11d} {r.naive_total:12d} {r.ratio:6.3f} "
            f"{r.ratio_without_facts:10.3f}  {span:<31} {n.max if n else 0:9d}"
        )
    ratios = [r.ratio for r in reports]
    ours, naive = sum(r.ours_total for r in reports), sum(r.naive_total for r in reports)
    met = sum(r.aim_ratio_met for r in reports)
    lines.append(
        f"  ratio min {min(ratios):.3f}, max {max(ratios):.3f}; all games {ours} / {naive} = {ours / naive:.3f} "
        f"(aim at most {AIM_RATIO:.3f}: met in {met} of {len(reports)} games)"
    )
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--role", default="EU", help="the human's seat (default EU)")
    parser.add_argument("--human", choices=["passive", "advocate"], default="passive")
    parser.add_argument("--seed", type=int, default=1, help="the game's seed (default 1)")
    parser.add_argument(
        "--all-roles", action="store_true", help="also play one game per human seat (same seed and human)"
    )
    parser.add_argument("--per-call", action="store_true", help="also list every call of the main game")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mercury-bench-prompts-") as folder:
        configure(Path(folder) / "bench.sqlite3")
        from django.db import connections

        from simulations.kinds.negotiation.games import scenario_of_version

        try:
            version = prepare()
            roles = [r.id for r in scenario_of_version(version).roles]
            if args.role not in roles:
                raise SystemExit(f"unknown role {args.role!r}: choose one of {', '.join(roles)}")
            report = play(version, seed=args.seed, role=args.role, human=args.human)
            others = (
                [
                    report
                    if role == args.role
                    else play(version, seed=args.seed, role=role, human=args.human)
                    for role in roles
                ]
                if args.all_roles
                else []
            )
        finally:
            connections.close_all()
    print(render_game(report, per_call=args.per_call))
    if others:
        print(render_roles(others))
    if args.json:
        out: dict[str, Any] = {"game": asdict(report)}
        if others:
            out["roles"] = [{k: v for k, v in asdict(r).items() if k != "call_rows"} for r in others]
        print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
