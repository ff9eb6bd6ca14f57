"""Scoring a judge on the labelled corpus (tests/kinds/negotiation/judge_corpus.yaml): per reading kind and per sentence family.

Used by the corpus test (the rule judge, in CI) and by `manage.py score_judge` (the configured model judge, by
hand). A judge is any function from a corpus item to `Signals` (None: it gave no usable reading). Readings are
compared as the engine applies them: in public debate only the issue under discussion counts, whoever read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from simulations.kinds.negotiation.judge import Signals

CORPUS = Path(__file__).resolve().parents[3] / "tests" / "kinds" / "negotiation" / "judge_corpus.yaml"
KINDS = ("support", "oppose", "conditional", "offers", "asks", "trades")


@dataclass(frozen=True)
class Item:
    family: str
    text: str
    speaker: str | None
    issue: str | None
    expect: dict[str, frozenset[str]]


def load_corpus(path: Path = CORPUS) -> list[Item]:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [
        Item(
            family=str(entry["kind"]),
            text=str(entry["text"]),
            speaker=entry.get("speaker"),
            issue=str(entry["issue"]) if entry.get("issue") else None,
            expect=_normalise(entry.get("expect") or {}),
        )
        for entry in raw
    ]


def _normalise(reading: dict[str, Any]) -> dict[str, frozenset[str]]:
    """Each kind as a set of comparable strings ("2:2.1", "financing", "4.1>2.2")."""
    out: dict[str, frozenset[str]] = {}
    for kind in KINDS:
        value = reading.get(kind) or ({} if kind in ("support", "oppose", "conditional") else [])
        if isinstance(value, dict):
            out[kind] = frozenset(
                f"{issue}:{option}" for issue, options in value.items() for option in options
            )
        elif kind == "trades":
            pairs = [(t["want"], t["promise"]) if isinstance(t, dict) else (t[0], t[1]) for t in value]
            out[kind] = frozenset(f"{want}>{promise}" for want, promise in pairs)
        else:
            out[kind] = frozenset(str(v) for v in value)
    return out


def as_read(item: Item, signals: Signals | None) -> dict[str, frozenset[str]]:
    """A judge's signals as the engine would apply them to this item (other issues dropped in debate)."""
    if signals is None:
        return {kind: frozenset() for kind in KINDS}
    dumped = signals.model_dump()
    if item.issue is not None:
        for kind in ("support", "oppose", "conditional"):
            dumped[kind] = {i: o for i, o in dumped[kind].items() if i == item.issue}
    return _normalise(dumped)


@dataclass
class Score:
    items: int = 0
    correct: int = 0
    unusable: int = 0  # items the judge gave no reading for (a failed or invalid model answer)
    # Items where the judge read something that is not there (a wrong option, side, offer or trade): what moves a
    # delegation the wrong way, while a reading missed only moves nobody.
    wrong: int = 0
    kinds: dict[str, list[int]] = field(
        default_factory=lambda: {k: [0, 0] for k in KINDS}
    )  # kind -> [right, seen]
    families: dict[str, list[int]] = field(default_factory=dict)  # family -> [right, items]
    misses: list[tuple[Item, dict[str, frozenset[str]]]] = field(default_factory=list)

    @property
    def overall(self) -> float:
        return self.correct / self.items if self.items else 0.0

    def kind_accuracy(self, kind: str) -> float:
        right, seen = self.kinds[kind]
        return right / seen if seen else 1.0


def score(items: list[Item], judge: Callable[[Item], Signals | None]) -> Score:
    """An item is right when every kind matches; a kind is scored on the items where either side names something."""
    result = Score()
    for item in items:
        signals = judge(item)
        result.unusable += signals is None
        got = as_read(item, signals)
        result.items += 1
        family = result.families.setdefault(item.family, [0, 0])
        family[1] += 1
        for kind in KINDS:
            if item.expect[kind] or got[kind]:
                result.kinds[kind][1] += 1
                result.kinds[kind][0] += item.expect[kind] == got[kind]
        result.wrong += any(got[k] - item.expect[k] for k in KINDS)
        if all(item.expect[k] == got[k] for k in KINDS):
            result.correct += 1
            family[0] += 1
        else:
            result.misses.append((item, got))
    return result


def report(result: Score, *, title: str, misses: int = 0) -> str:
    lines = [f"{title}: {result.correct}/{result.items} sentences read right ({result.overall:.1%})"]
    lines.append(f"  sentences with a reading that is not there: {result.wrong}")
    if result.unusable:
        lines.append(f"  no usable reading for {result.unusable} sentences")
    lines.append("  per reading kind (sentences where the corpus or the judge names one):")
    for kind in KINDS:
        right, seen = result.kinds[kind]
        lines.append(f"    {kind:<12} {right:>4}/{seen:<4} {result.kind_accuracy(kind):.1%}")
    lines.append("  per sentence family:")
    for family, (right, seen) in sorted(result.families.items()):
        lines.append(f"    {family:<12} {right:>4}/{seen:<4} {right / seen:.1%}")
    for item, got in result.misses[:misses]:
        diff = {k: (sorted(item.expect[k]), sorted(got[k])) for k in KINDS if item.expect[k] != got[k]}
        lines.append(
            f"  miss [{item.speaker or '-'} {item.issue or '-'}] {item.text[:90]} expected/got {diff}"
        )
    return "\n".join(lines)
