"""How often a streaming turn may send a frame: at most one per FRAME_INTERVAL on average, up to FRAME_BURST back
to back (a token bucket, one per turn).

A frame carries the turn's whole text so far to every page of the game, so a model streaming word by word (30 words
a second) must not send 30 frames a second: after its first few words it settles at one frame per interval.
Words that come faster wait for the next frame (`drive.StreamRelay` sends them on a timer if nothing else comes).

The burst is for words that arrive already coalesced. The negotiation's output screen releases a sentence at a
time (`output_guard.ScreenedStream`); with a strict interval, a short sentence that followed another closely would
wait out the interval in the worker, and such waits make the latency tail. With a burst allowance such a sentence
goes out at once, and the average rate is bounded as before.
"""

from __future__ import annotations

FRAME_INTERVAL = 0.2  # seconds a frame costs of the allowance: at most 5 a second on average
FRAME_BURST = 3  # frames that may go out back to back when the allowance is full


class FramePacer:
    def __init__(self, interval: float = FRAME_INTERVAL, burst: int = FRAME_BURST) -> None:
        self.interval, self.burst = interval, burst
        self._allowance = float(burst)  # frames allowed as of monotonic time `_at` (None: no frame yet)
        self._at: float | None = None

    def wait(self, now: float) -> float:
        """Seconds from `now` until a frame may go (0: at once)."""
        short = 1.0 - self._allowance_at(now)
        return max(0.0, short * self.interval)

    def took(self, now: float) -> None:
        """A frame went out at `now`."""
        self._allowance, self._at = self._allowance_at(now) - 1.0, now

    def _allowance_at(self, now: float) -> float:
        if self.interval <= 0:
            return 1.0  # no pacing: every frame at once
        if self._at is None:
            return float(self.burst)
        return min(float(self.burst), self._allowance + (now - self._at) / self.interval)
