"""The output screen of a streamed turn (simulations/kinds/negotiation/output_guard.py): CPU per AI turn.

    .venv/bin/python bench/screen.py [--games 2] [--rounds 5]

Plays --games headless advocate games on a fresh SQLite file and keeps every delegation's stored turn, then
screens each turn as a streamed turn is screened: its words fed to a `ScreenedStream` four at a time (as the
offline model streams them with no typing delay), then the whole text through `clean` (the stored turn). Two ways,
--rounds times each, the seat's memory of screened sentences emptied before every turn:

- as it stands: `clean` finds the stream's sentences remembered;
- each sentence screened afresh (the memory emptied between the stream and `clean`: the screen without its memory).

Both ways must give the same stored texts (checked); it prints microseconds of CPU a turn, min over the rounds.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import games  # noqa: E402

SEATS = ("EU", "USA", "BRA", "CHN", "CAN", "TZA")


def stored_turns(count: int) -> tuple[Any, list[tuple[str, str]]]:
    """The scenario and every delegation's stored turn (its seat, its text) of `count` headless games."""
    games.configure(Path(tempfile.mkdtemp()) / "screen.sqlite3", debug=False)
    from simulations.kinds.negotiation.games import scenario_of
    from simulations.models import Game, TranscriptEntry

    version = games.prepare()
    clock = games.Clock()
    with games.instrumented(clock):
        for seed in range(count):
            games.play_one(version, seed=seed, role=SEATS[seed % len(SEATS)], human="advocate", clock=clock)
    scenario = scenario_of(Game.objects.order_by("pk")[0])
    seats = set(scenario.role_ids)
    turns = [(e.speaker, e.text) for e in TranscriptEntry.objects.order_by("pk") if e.speaker in seats]
    return scenario, turns


def screen_all(scenario: Any, turns: list[tuple[str, str]], *, remembered: bool) -> tuple[float, list[str]]:
    from simulations.ai.offline import WORDS_PER_CHUNK_AT_ONCE, pieces
    from simulations.kinds.negotiation import output_guard

    cleaned: list[str] = []
    started = time.process_time()
    for role, text in turns:
        screen = output_guard.seat_screen(scenario, role)
        screen._screened.clear()
        stream = output_guard.ScreenedStream(scenario, role, lambda _: None)
        for piece in pieces(text, WORDS_PER_CHUNK_AT_ONCE):
            stream.feed(piece)
        if not remembered:
            screen._screened.clear()
        cleaned.append(output_guard.clean(scenario, role, text))
    return time.process_time() - started, cleaned


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    scenario, turns = stored_turns(args.games)
    best = {True: float("inf"), False: float("inf")}
    texts: dict[bool, list[str]] = {}
    for _ in range(args.rounds):
        for remembered in (True, False):
            seconds, texts[remembered] = screen_all(scenario, turns, remembered=remembered)
            best[remembered] = min(best[remembered], seconds)
    assert texts[True] == texts[False], "remembering changed what a turn stores"
    per_turn = {k: v / len(turns) * 1e6 for k, v in best.items()}
    print(f"{len(turns)} delegation turns of {args.games} games, min of {args.rounds} rounds")
    print(f"stream + clean, sentences remembered: {per_turn[True]:.0f} µs a turn")
    print(f"stream + clean, screened afresh:      {per_turn[False]:.0f} µs a turn")
    print(f"ratio: {per_turn[True] / per_turn[False]:.2f}")


if __name__ == "__main__":
    main()
