"""The offline model's token estimate (simulations/ai/tokens.py) on real prompts: CPU per model call.

    .venv/bin/python bench/tokens.py [--games 3] [--rounds 3]

Plays --games headless advocate games (seats EU, USA, BRA, ... in turn) on a fresh SQLite file and keeps every
text the offline model counted (each call's messages and its answer), then counts them all in order, --rounds
times each way, with fresh memos each time:

- `estimate_tokens` as it stands (each comma-or-line cut memoised);
- each line memoised (a prompt's facts block is one long line, new every turn);
- each text whole, nothing memoised.

Every way must give the same counts (checked); it prints microseconds of CPU a model call, min over the rounds.
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import games  # noqa: E402

SEATS = ("EU", "USA", "BRA", "CHN", "CAN", "TZA")


def captured_texts(count: int) -> list[list[str]]:
    """Per model call, the texts the offline model counted (the messages' contents and the answer)."""
    games.configure(Path(tempfile.mkdtemp()) / "tokens.sqlite3", debug=False)
    from simulations.ai import offline

    calls: list[list[str]] = []
    counted = offline.usage

    def keep(messages: list[dict[str, str]], text: str) -> offline.Usage:
        calls.append([str(m.get("content", "")) for m in messages] + [text])
        return counted(messages, text)

    offline.usage = keep  # type: ignore[assignment]
    try:
        version = games.prepare()
        clock = games.Clock()
        with games.instrumented(clock):
            for seed in range(count):
                games.play_one(
                    version, seed=seed, role=SEATS[seed % len(SEATS)], human="advocate", clock=clock
                )
    finally:
        offline.usage = counted  # type: ignore[assignment]
    return calls


def by_line() -> Callable[[str], int]:
    from simulations.ai.tokens import _PIECE

    @functools.lru_cache(maxsize=16_384)
    def line_tokens(line: str) -> int:
        return len(_PIECE.findall(line))

    return lambda text: sum(map(line_tokens, text.split("\n")))


def whole() -> Callable[[str], int]:
    from simulations.ai.tokens import _PIECE

    return lambda text: len(_PIECE.findall(text))


def current() -> Callable[[str], int]:
    from simulations.ai import tokens

    tokens._cut_tokens.cache_clear()
    return tokens.estimate_tokens


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    calls = captured_texts(args.games)
    texts = [t for call in calls for t in call]
    longest = max(len(line) for t in texts for line in t.split("\n"))
    print(f"{len(calls)} model calls, {sum(map(len, texts)) // len(calls)} characters counted a call, "
          f"longest line {longest}")  # fmt: skip
    reference = [whole()(t) for t in texts]
    best: dict[str, float] = {}
    for _ in range(args.rounds):
        for name, make in (("memoised cuts (now)", current), ("memoised lines", by_line), ("whole", whole)):
            count = make()
            started = time.process_time()
            counts = [count(t) for t in texts]
            spent = (time.process_time() - started) / len(calls)
            if counts != reference:
                raise SystemExit(f"{name} counted differently")
            best[name] = min(best.get(name, spent), spent)
    for name, seconds in best.items():
        print(f"{name:20s} {seconds * 1e6:7.0f} µs a call")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
