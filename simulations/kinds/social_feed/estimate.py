"""What a social-feed run will cost, from its set-up, before it starts (services/play/work_budget.py holds the limits).

Time is calibrated on runs of the town-square scenario played headless through the driver and the ledger, on
SQLite, with the offline reasoner and writer: 26 to 1,006 agents, 5 to 200 rounds, a checkpoint every 1 to 50
rounds, the reasoner on and off, on two shared cores (issue #64); the fitted time is doubled, so that the estimate
is above every run's CPU time. Every agent-round is played twice (by the driver, then replayed by the machine as
the block is committed); every checkpoint also reads, diffs and writes the whole state, and the garbage
collector's passes over a larger population cost more than in proportion.

Storage follows what a run stores in the compact form (stored.py; issue #68), calibrated on runs of 6 to 2,006
agents, 20 to 200 rounds, a checkpoint every 1 to 50 rounds, the reasoner on and off, both rankings (sized as the
ledger writes them, `bench/social_feed.py --storage`, and on SQLite). Each rate and size below is at or above the
largest measured, so the estimate is never below what a run stores and every refusal holds:

- a whole state — the first checkpoint, every KEYFRAME_EVERY-th, and the game's row — holds every agent and every
  post written so far, and a summary of each round played;
- a checkpoint between them holds what its block changed: the line of each agent who acted in it (once, however
  often it acted), the posts it looked at, the posts written and the counts that moved, the rounds' summaries.
  Agents act in about half their rounds (their own rhythm, rhythm.py), so this grows with agents × rounds at
  that rate, not with the checkpoints: checkpointing every round costs more only by its keyframes;
- each block's event holds its decision log (a short row a decision) and the reasoner's choices with their reasons.
"""

from __future__ import annotations

import math

from simulations.services.ledger.checkpoints import KEYFRAME_EVERY  # every 16th checkpoint is stored whole
from simulations.services.play.work_budget import WorkEstimate

from .config import SocialFeedScenario
from .entities import SEEN
from .machine import RunConfig, second_config, second_town

ADVICE = "Lower the number of agents or rounds, or checkpoint less often."

# What agents do, an agent-round (measured on the runs above; the largest of each, rounded up).
DECISIONS_PER_AGENT_ROUND = 0.5  # transitions (measured 0.44-0.49)
LOOKS_PER_AGENT_ROUND = 0.17  # posts looked at (measured 0.09-0.16)
# Posts, replies and reshares written: a generated agent (measured 0.027-0.032, the most with a hot feed), a listed
# resident (the six of the town square alone: 0.061-0.073; they are drawn keener).
POSTS_PER_AGENT_ROUND = 0.035
POSTS_PER_LISTED_AGENT_ROUND = 0.08
ENGAGEMENTS_PER_AGENT_ROUND = 0.1  # likes, replies and reshares (measured 0.054-0.094)
CHOICES_PER_AGENT_ROUND = 0.04  # the reasoner's choices (measured 0.022-0.037)
REASONER_CALLS_PER_AGENT_ROUND = 0.08  # a real model's reasoner: one call a choice, with room for its retries

# Bytes, as the ledger writes them (compact JSON).
POST_BYTES = 150  # a post's row, the offline writer's words (measured 134-146 on average)
MODEL_POST_BYTES = 900  # a real model's post: up to 600 characters of its words (machine.MAX_TEXT)
AGENT_BYTES = (
    150  # an agent in a whole state: its line, the posts it looked at, interests, tendencies (85-140)
)
LINE_BYTES = 80  # an agent's line set again in a checkpoint's changes (measured 57-64; 74 with a hot feed)
SEEN_BYTES = 36  # a post it looked at, set in its ring (measured 29-35)
COUNT_BYTES = 40  # a post's count set (measured 30-37 checkpointing every round)
ROUND_BYTES = 270  # a round's summary for the charts (measured 239-254)
STEP_BYTES = 300  # a checkpoint's and an event's own fields (round, sequence, metrics, status, timestamp)
STATE_BYTES = 1500  # a whole state's own fields (config, the listed agents' names, metrics)
DECISION_BYTES = 15  # a decision's row in the log (measured 12.7-13.6)
LOG_ROUND_BYTES = 30  # a round's entry in the log, besides its rows
CHOICE_BYTES = 220  # a reasoner's choice with its reason (measured 173-214)
ROW_BYTES = (
    2500  # SQLite's own for a checkpoint and its event: rows, index entries, pages' slack (about 2.2 KB)
)
DATABASE_OVERHEAD = 1.2  # the SQLite file grew by 1.16 × the compact JSON of the rows written (2,006 × 200)
# A comparison keeps who read each of the person's posts in each town: a reader is [place, post number] (at most
# every agent, a post), in every whole state and once more in the change that added it; room for this many posts.
READER_BYTES = 14
YOUR_POSTS = 5
# A real model's call: its row and the words it wrote, which the event carries (not measured: no model answers here).
MODEL_CALL_BYTES = 1000

# Seconds, fitted to the runs' CPU time (least squares on the relative error: within 0.76-1.21 × each run), then
# doubled: the estimate is 1.45-2.8 × every run's CPU time, measured again while other jobs loaded both cores too.
SECONDS_PER_AGENT_ROUND = 39.2e-6
SECONDS_PER_AGENT_ROUND_AT_CHECKPOINT = 6.49e-6  # a checkpoint handles the state: its agents × rounds played
SECONDS_PER_AGENT_CHECKPOINT = 166e-6
SECONDS_PER_AGENT_SQUARED_ROUND = 0.1293e-6  # the garbage collector's share: agents² × rounds
TIME_MARGIN = 2.0


def storage_bytes(scenario: SocialFeedScenario, config: RunConfig, *, offline: bool) -> float:
    """The bytes a run stores (before the database's own), the offline writer's words or a real model's."""
    agents = len(scenario.agents) + config.agents
    rounds, every = config.max_rounds, config.checkpoint_frequency
    # Rounds played at each checkpoint: the start, then one a block (the last block may be shorter).
    reached = [0] + [min(k * every, rounds) for k in range(1, math.ceil(rounds / every) + 1)]
    post_bytes = POST_BYTES if offline else MODEL_POST_BYTES
    writing = posts_per_round(scenario, config)

    def whole(played: int) -> float:
        posts = len(scenario.posts) + writing * played
        return STATE_BYTES + AGENT_BYTES * agents + post_bytes * posts + ROUND_BYTES * played

    def changes(block: int) -> float:
        acted = min(1.0, DECISIONS_PER_AGENT_ROUND * block) * agents  # agents whose line is set again
        looked = min(SEEN, LOOKS_PER_AGENT_ROUND * block) * agents
        return (LINE_BYTES * acted + SEEN_BYTES * looked + post_bytes * writing * block
                + COUNT_BYTES * ENGAGEMENTS_PER_AGENT_ROUND * agents * block + ROUND_BYTES * block)  # fmt: skip

    # The first checkpoint and the game's row (the last state); then each later checkpoint and its event.
    stored = whole(0) + whole(rounds) + STEP_BYTES + ROW_BYTES
    for k in range(1, len(reached)):
        block = reached[k] - reached[k - 1]
        stored += whole(reached[k]) if k % KEYFRAME_EVERY == 0 else changes(block)
        stored += 2 * STEP_BYTES + ROW_BYTES
    made = agents * rounds
    stored += DECISION_BYTES * DECISIONS_PER_AGENT_ROUND * made + LOG_ROUND_BYTES * rounds
    stored += CHOICE_BYTES * CHOICES_PER_AGENT_ROUND * made
    if not offline:  # the words a model wrote ride in the events too, and each call has its row
        stored += post_bytes * writing * rounds + MODEL_CALL_BYTES * model_calls(scenario, config)
    return stored


def posts_per_round(scenario: SocialFeedScenario, config: RunConfig) -> float:
    return POSTS_PER_LISTED_AGENT_ROUND * len(scenario.agents) + POSTS_PER_AGENT_ROUND * config.agents


def model_calls(scenario: SocialFeedScenario, config: RunConfig) -> float:
    """A real model's calls: one a post written and, with the reasoner on, one an ambiguous decision."""
    made = (len(scenario.agents) + config.agents) * config.max_rounds
    asked = REASONER_CALLS_PER_AGENT_ROUND * made if config.reasoner_enabled else 0.0
    return posts_per_round(scenario, config) * config.max_rounds + asked


def run_estimate(scenario: SocialFeedScenario, config: RunConfig, *, offline: bool) -> WorkEstimate:
    """The whole run's cost: `config` as set up, with the offline model or a real one (which writes the posts and,
    with the reasoner on, decides the ambiguous agents: one call each). A comparison costs both towns': each is a
    run of its own, played and stored beside the other, and the readers of the person's posts are counted."""
    if config.compare is None:
        return _one_town(scenario, config, offline=offline)
    first = _one_town(scenario, config.model_copy(update={"compare": None}), offline=offline)
    second = _one_town(second_town(scenario, config), second_config(config), offline=offline)
    readers = (
        READER_BYTES * 2 * (len(scenario.agents) + config.agents) * YOUR_POSTS * (_whole_states(config) + 1)
    )
    return WorkEstimate(
        seconds=first.seconds + second.seconds,
        storage_bytes=first.storage_bytes + second.storage_bytes + math.ceil(readers * DATABASE_OVERHEAD),
        model_calls=first.model_calls + second.model_calls,
    )


def _whole_states(config: RunConfig) -> int:
    """How many whole states a run stores: the first checkpoint, every KEYFRAME_EVERY-th, the game's row."""
    return 2 + math.ceil(config.max_rounds / config.checkpoint_frequency) // KEYFRAME_EVERY


def _one_town(scenario: SocialFeedScenario, config: RunConfig, *, offline: bool) -> WorkEstimate:
    agents = len(scenario.agents) + config.agents
    rounds, every = config.max_rounds, config.checkpoint_frequency
    reached = [0] + [min(k * every, rounds) for k in range(1, math.ceil(rounds / every) + 1)]
    calls = 0.0 if offline else model_calls(scenario, config)
    seconds = TIME_MARGIN * (
        SECONDS_PER_AGENT_ROUND * agents * rounds
        + SECONDS_PER_AGENT_ROUND_AT_CHECKPOINT * agents * sum(reached)
        + SECONDS_PER_AGENT_CHECKPOINT * agents * len(reached)
        + SECONDS_PER_AGENT_SQUARED_ROUND * agents * agents * rounds
    )
    stored = storage_bytes(scenario, config, offline=offline)
    return WorkEstimate(
        seconds=seconds, storage_bytes=math.ceil(stored * DATABASE_OVERHEAD), model_calls=math.ceil(calls)
    )
