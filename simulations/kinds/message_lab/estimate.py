"""What a Message Lab run will cost, from its set-up, before it starts (services/play/work_budget.py holds the limits).

Measured on the shipped scenario played headless through the driver and the ledger, on SQLite, with the offline
model and no typing delay (issue #64): 3 to 7 participants, 1 to 12 rounds, the shipped brief and a pasted one of
8,000 characters. A run makes a concept and a critique per participant a round, the evaluator's scores, the
moderator's synthesis and the refinements; its state (cards, critiques, the transcript) grows with every call, so
what a call stores grows with panel × rounds. The largest the form allows (7 × 12) made 228 calls, stored
7.9-9.3 MB of rows and took 7.4-7.7 s of CPU: under every default limit, so a panel is refused only for the runs a
person already has going, or under an administrator's lower limits. Each figure is at or above what was measured.
"""

from __future__ import annotations

import math

from simulations.services.play.work_budget import WorkEstimate

from .document import Config

ADVICE = "Choose fewer rounds or a smaller panel."

CALLS_FIRST = (
    9  # the first round's extra calls and the final verdict (measured 15 and 23 calls for 3 × 1 and 7 × 1)
)
CALLS_PER_ROUND = (
    5  # besides two per participant (measured 10.2-11 a round for 3 participants, 17.7-18.6 for 7)
)
BYTES_PER_CALL = 8000  # the rows a call leaves (measured 6.7-10.6 KB in one-round runs) ...
BYTES_PER_CALL_PER_PARTICIPANT_ROUND = 500  # ... growing with panel × rounds (41 KB a call at 7 × 12)
SECONDS_PER_CALL = (
    0.02  # the server's own work for a call: the offline persona, the commit (not a model's answer)
)
SECONDS_PER_CALL_PER_PARTICIPANT_ROUND = (
    0.0004  # a larger state to read, diff and write (33 ms a call at 7 × 12)
)
DATABASE_OVERHEAD = 1.15  # the SQLite file grows by more than the JSON of its rows


def run_estimate(config: Config, *, offline: bool) -> WorkEstimate:
    """The whole run's cost: `config` as set up, with the offline model (its calls cost only the server's time) or a
    real one."""
    size = len(config.participants) * config.rounds
    calls = config.rounds * (2 * len(config.participants) + CALLS_PER_ROUND) + CALLS_FIRST
    stored = calls * (BYTES_PER_CALL + BYTES_PER_CALL_PER_PARTICIPANT_ROUND * size) * DATABASE_OVERHEAD
    seconds = calls * (SECONDS_PER_CALL + SECONDS_PER_CALL_PER_PARTICIPANT_ROUND * size)
    return WorkEstimate(seconds=seconds, storage_bytes=math.ceil(stored), model_calls=0 if offline else calls)
