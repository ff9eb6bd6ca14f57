"""What a social-feed run will cost, from its set-up, before it starts (services/play/work_budget.py holds the limits).

Calibrated on runs of the town-square scenario played headless through the driver and the ledger, on SQLite, with
the offline reasoner and writer: 26 to 1,006 agents, 5 to 200 rounds, a checkpoint every 1 to 50 rounds, the
reasoner on and off, on two shared cores (issue #64). Each constant below is at or above the largest figure
measured; the fitted time is doubled, so that the estimate is above every run's CPU time. The formula
follows where the cost comes from:

- every agent-round is played twice (by the driver, then replayed by the machine as the block is committed) and
  logged: about 190 bytes of decision log an agent-round;
- every checkpoint stores each agent's changes (its last transitions and seen posts are windows that shift: about
  1.6 KB an agent) and the whole list of posts once more (a post's counts change, so the platform's checkpoint diff
  stores the grown list whole); every 16th checkpoint is a whole state. The posts grow with the rounds played, so
  storage grows with rounds × checkpoints: a checkpoint every round costs the most;
- every checkpoint also reads, diffs and writes the whole state, so time grows likewise, and the garbage
  collector's passes over a larger population cost more than in proportion (with it off a run took half the time).
"""

from __future__ import annotations

import math

from simulations.services.ledger.checkpoints import KEYFRAME_EVERY  # every 16th checkpoint is stored whole
from simulations.services.play.work_budget import WorkEstimate

from .config import SocialFeedScenario
from .machine import RunConfig

ADVICE = "Lower the number of agents or rounds, or checkpoint less often."

# Posts, replies and reshares an agent-round (measured 0.039-0.085; fewer with the reasoner off).
POSTS_PER_AGENT_ROUND = 0.09
POST_BYTES = 250  # a post as stored, the offline writer's words (measured 229-243)
MODEL_POST_BYTES = 900  # a real model's post: up to 600 characters of its words (machine.MAX_TEXT)
AGENT_BYTES = 550  # an agent in a whole state (measured 390-529)
AGENT_CHANGE_BYTES = 1850  # an agent's changes in one checkpoint (measured up to 1,821)
ROUND_BYTES = 260  # a round's summary for the charts (measured up to 256)
DECISION_BYTES = 210  # an agent-round's decision log and reasoner choice (measured up to 205)
DATABASE_OVERHEAD = 1.15  # the SQLite file grew by 1.10-1.12 × the JSON of the rows written
REASONER_CALLS_PER_AGENT_ROUND = 0.08  # a real model's reasoner (measured 0.045-0.065 ambiguous decisions)
# A real model's call: its row and the words it wrote, which the event carries (not measured: no model answers here).
MODEL_CALL_BYTES = 1000

# Seconds, fitted to the runs' CPU time (least squares on the relative error: within 0.76-1.21 × each run), then
# doubled: the estimate is 1.45-2.8 × every run's CPU time, measured again while other jobs loaded both cores too.
SECONDS_PER_AGENT_ROUND = 39.2e-6
SECONDS_PER_AGENT_ROUND_AT_CHECKPOINT = 6.49e-6  # a checkpoint handles the state: its agents × rounds played
SECONDS_PER_AGENT_CHECKPOINT = 166e-6
SECONDS_PER_AGENT_SQUARED_ROUND = 0.1293e-6  # the garbage collector's share: agents² × rounds
TIME_MARGIN = 2.0


def run_estimate(scenario: SocialFeedScenario, config: RunConfig, *, offline: bool) -> WorkEstimate:
    """The whole run's cost: `config` as set up, with the offline model or a real one (which writes the posts and,
    with the reasoner on, decides the ambiguous agents: one call each)."""
    agents = len(scenario.agents) + config.agents
    rounds, every = config.max_rounds, config.checkpoint_frequency
    # Rounds played at each checkpoint: the start, then one a block (the last block may be shorter).
    reached = [0] + [min(k * every, rounds) for k in range(1, math.ceil(rounds / every) + 1)]
    post_bytes = POST_BYTES if offline else MODEL_POST_BYTES

    def posts(played: int) -> float:
        return (len(scenario.posts) + POSTS_PER_AGENT_ROUND * agents * played) * post_bytes

    def whole(played: int) -> float:
        return AGENT_BYTES * agents + posts(played) + ROUND_BYTES * played

    # The first checkpoint, the game's row (the last state) and the decision log; then each later checkpoint.
    stored = whole(0) + whole(rounds) + DECISION_BYTES * agents * rounds
    for k in range(1, len(reached)):
        played = reached[k]
        if k % KEYFRAME_EVERY == 0:
            stored += whole(played)
        else:
            stored += AGENT_CHANGE_BYTES * agents + posts(played) + ROUND_BYTES * (played - reached[k - 1])
    calls = 0.0
    if not offline:
        calls = POSTS_PER_AGENT_ROUND * agents * rounds + (
            REASONER_CALLS_PER_AGENT_ROUND * agents * rounds if config.reasoner_enabled else 0
        )
        stored += MODEL_CALL_BYTES * calls
    seconds = TIME_MARGIN * (
        SECONDS_PER_AGENT_ROUND * agents * rounds
        + SECONDS_PER_AGENT_ROUND_AT_CHECKPOINT * agents * sum(reached)
        + SECONDS_PER_AGENT_CHECKPOINT * agents * len(reached)
        + SECONDS_PER_AGENT_SQUARED_ROUND * agents * agents * rounds
    )
    return WorkEstimate(
        seconds=seconds, storage_bytes=math.ceil(stored * DATABASE_OVERHEAD), model_calls=math.ceil(calls)
    )
