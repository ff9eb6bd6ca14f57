"""A worker's group sends to Redis (mercury/channel_layer.py): CPU and wall time a send, as a drive thread sends.

    .venv/bin/python bench/channel_sends.py [--redis-url redis://127.0.0.1:6379/9] [--sends 2000] [--rounds 3]

A drive in a `drive_worker` has no event loop; it sends each committed turn and each streamed frame to its game's
group (one page in it here, a streamed frame of 60 words). Two ways, alternated --rounds times, the best of each
printed (the sender's CPU, `time.process_time`, and wall time a send):

- blocking: `BatchedRedisChannelLayer.group_send_blocking` over redis-py's blocking client (what a worker does);
- loop: the same layer's `group_send` run on an event loop the thread keeps (`broadcast._thread_loop`, what a
  worker did before 1 Dec 2026, and what another Redis layer still gets).

The page's queue has room for every message; the layer's keys are flushed at the end. Redis runs on this machine,
so a round trip costs little wall time: the figures are mostly the sender's own work.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mercury.settings")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--sends", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import django

    django.setup()
    from mercury.channel_layer import BatchedRedisChannelLayer

    layer = BatchedRedisChannelLayer(
        hosts=[{"address": args.redis_url}], prefix=f"bench-sends-{os.getpid()}", capacity=10 * args.sends
    )
    loop = asyncio.new_event_loop()
    loop.run_until_complete(layer.group_add("game-1", "specific.bench!page"))
    message = {"type": "game.stream", "speaker": "EU", "text": "word " * 60, "at": [1.0, 2.0], "slot": "",
               "version": 3}  # fmt: skip
    ways = {
        "blocking": lambda: layer.group_send_blocking("game-1", message),
        "loop": lambda: loop.run_until_complete(layer.group_send("game-1", message)),
    }
    best: dict[str, tuple[float, float]] = {}
    try:
        for _ in range(args.rounds):
            for name, send in ways.items():
                for _ in range(100):  # warm: connections open, the script known to Redis
                    send()
                cpu, wall = time.process_time(), time.perf_counter()
                for _ in range(args.sends):
                    send()
                cpu, wall = (
                    (time.process_time() - cpu) / args.sends,
                    (time.perf_counter() - wall) / args.sends,
                )
                old = best.get(name, (cpu, wall))
                best[name] = (min(old[0], cpu), min(old[1], wall))
                loop.run_until_complete(layer.flush())
                loop.run_until_complete(layer.group_add("game-1", "specific.bench!page"))
    finally:
        loop.run_until_complete(layer.flush())
    for name, (cpu, wall) in best.items():
        print(f"{name:9s} CPU {cpu * 1e6:5.0f} µs, wall {wall * 1e6:5.0f} µs a send")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
