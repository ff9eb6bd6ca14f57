"""A seat's rolling memory: a compact digest of older entries plus a recent window, so prompts stop growing.

The digest keeps, per delegation and issue, the last position it stated, the offers and trades it made, and the
results of votes: bounded by seats x issues, however long the game runs. The window holds the most recent entries
up to a token budget. Both come only from entries the seat may see (the caller filters).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from simulations.ai.tokens import estimate_tokens
from simulations.kinds.negotiation import judge
from simulations.kinds.negotiation.scenario import Scenario

WINDOW_ENTRIES = 10
WINDOW_TOKENS = 900


class Seen(Protocol):
    @property
    def seq(self) -> int: ...

    @property
    def speaker(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True)
class Memory:
    digest: list[str]  # one line per remembered fact
    digest_seqs: list[int]  # entries the digest was built from
    window: list[Seen]


def split_window(seen: Sequence[Seen]) -> tuple[list[Seen], list[Seen]]:
    """(older, window): the window is the newest entries within WINDOW_ENTRIES and WINDOW_TOKENS (at least one)."""
    window: list[Seen] = []
    budget = WINDOW_TOKENS
    for entry in reversed(seen):
        cost = estimate_tokens(entry.text)
        if window and (len(window) >= WINDOW_ENTRIES or cost > budget):
            break
        window.append(entry)
        budget -= cost
    window.reverse()
    return list(seen[: len(seen) - len(window)]), window


def build_memory(scenario: Scenario, seen: Sequence[Seen], role: str) -> Memory:
    older, window = split_window(seen)
    positions: dict[tuple[str, str], str] = {}
    offers: dict[str, set[str]] = {}
    trades: list[str] = []
    results: list[str] = []
    used: list[int] = []
    for entry in older:
        if entry.kind == "result":
            results.append(entry.text)
            used.append(entry.seq)
            continue
        if entry.kind not in ("opening", "message", "speech") or entry.speaker == role:
            continue
        signals = judge.shared_signals(
            scenario, entry.text, speaker=entry.speaker
        )  # its own words, not reports
        if signals.empty:
            continue
        used.append(entry.seq)
        for issue_id, options in signals.support.items():
            positions[(entry.speaker, issue_id)] = f"supports {', '.join(options)}"
        for issue_id, options in signals.oppose.items():
            positions.setdefault((entry.speaker, issue_id), f"opposes {', '.join(options)}")
        credible = judge.credible_offers(scenario, entry.speaker, signals)
        if credible:
            offers.setdefault(entry.speaker, set()).update(credible)
        for trade in signals.trades:
            line = f"{scenario.display_name(entry.speaker)} offered to support {trade.promise} if you support {trade.want}"
            if line not in trades:
                trades.append(line)
    digest: list[str] = []
    for speaker in [*scenario.role_ids]:
        said = [f"{issue} {positions[(speaker, issue)]}" for issue in (i.id for i in scenario.issues)
                if (speaker, issue) in positions]  # fmt: skip
        if said:
            digest.append(f"{scenario.display_name(speaker)}: " + "; ".join(said) + ".")
    for speaker, made in offers.items():
        labels = ", ".join(scenario.offer(o).label for o in sorted(made))
        digest.append(f"{scenario.display_name(speaker)} put on the table: {labels}.")
    digest += trades[-4:]
    digest += results
    return Memory(digest=digest, digest_seqs=used, window=window)
