"""A stored social-feed run's machine (pure): RUNNING plays rounds, a block of `checkpoint_frequency` at a time
(one committed step, one checkpoint); PAUSED waits for the user; FINISHED after the last round.

The only thing a model decides in a run is the reasoner's choice for an ambiguous agent, so that is what a
ROUNDS_PLAYED event carries: each choice with its reason. Applying the event replays the block's rounds from the
stored simulation with exactly those choices, and refuses the event if one is missing or names a target the
guards did not offer — model output changes the run only through this check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from simulations.engine.errors import IllegalEvent, InvalidMove, ResumeError

from . import rounds, stored, twins
from .config import SocialFeedScenario, generated_identity
from .entities import STUDENT, AgentState, CheckpointData, RoundResult
from .ranking import DEFAULT as DEFAULT_RANKING
from .ranking import Ranking
from .stored import StoredSimulation

SCHEMA_VERSION = 2  # 1: the simulation stored as the seed's CheckpointData (restore reads it still)
STUDENT_TEXT = 280  # the longest post the person may write
MAX_AGENTS = 5000  # in a stored run (a checkpoint holds every agent and post); the benchmark goes further
TOP_POSTS = 5


class Status(StrEnum):
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    FINISHED = "FINISHED"


class Event(StrEnum):
    RUN_STARTED = "RUN_STARTED"
    ROUNDS_PLAYED = "ROUNDS_PLAYED"
    RUN_PAUSED = "RUN_PAUSED"
    RUN_RESUMED = "RUN_RESUMED"
    POST_WRITTEN = "POST_WRITTEN"  # the person watching posts to the feed, as one of the town


class Refusal(InvalidMove):
    CHOICE_MISSING = "an ambiguous decision has no choice"
    NOT_A_CANDIDATE = "a choice names a target the guards did not offer"
    TEXT_TAKEN = "a post in this run already says that"
    UNKNOWN_TOPIC = "the post's topic is not one of the scenario's"
    TOWNS = "a comparison's block carries both towns' choices, a single town's only its own"
    ONE_TOWN = "only a run comparing a rumour with its correction takes a post into Town B alone"
    STUDENT_SENTENCES = {
        TEXT_TAKEN: "A post in this run already says exactly that: put it your own way.",
        UNKNOWN_TOPIC: "Choose one of the town's topics for your post.",
        InvalidMove.TEXT_TOO_LONG: f"A post is at most {STUDENT_TEXT} characters.",
        ONE_TOWN: "Posting into Town B alone is for a run set up to compare a rumour with its correction.",
    }


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunConfig(_Doc):
    agents: int = Field(ge=0, le=MAX_AGENTS)  # generated agents, besides the listed ones
    max_rounds: int = Field(ge=1, le=500)
    checkpoint_frequency: int = Field(ge=1, le=50)
    reasoner_enabled: bool = True
    ranking: Ranking = DEFAULT_RANKING  # how the feeds are ordered (ranking.py)
    compare: twins.Compare | None = None  # a second town, differing in one setting (twins.py)

    @model_validator(mode="after")
    def _second_differs(self) -> RunConfig:
        if self.compare is not None:
            twins.check(self.compare, ranking=self.ranking, agents=self.agents)
        return self

    # A one-town run's configuration reads as it did before comparisons (its events and exports unchanged).
    @model_serializer(mode="wrap")
    def _without_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _dropped(handler(self), "compare")


def _dropped(data: dict[str, Any], key: str) -> dict[str, Any]:
    if data.get(key, 0) is None:
        del data[key]
    return data


class RoundSummary(_Doc):
    """One round, for the charts: the state distribution after it, engagement so far, the reasoner's calls."""

    round: int
    distribution: dict[str, int]
    likes: int
    replies: int
    reshares: int
    posts_created: int
    decisions: int
    reasoner_calls: int


class Town(_Doc):
    """The second town of a comparison: its simulation and its rounds, as the run's own (RunState) are kept."""

    sim: StoredSimulation
    history: list[RoundSummary] = Field(default_factory=list)


def _no_readers() -> list[dict[str, list[list[int]]]]:
    return [{}, {}]


class Comparison(_Doc):
    """A run's second town, and who read each of the person's posts in each town (by town, first then second: the
    post's id there -> [the reader's place, the number of the post it read: the original or a reshare of it])."""

    town: Town
    readers: list[dict[str, list[list[int]]]] = Field(default_factory=_no_readers, min_length=2, max_length=2)


class RunState(_Doc):
    schema_version: int = SCHEMA_VERSION
    seed: int
    status: Status = Status.RUNNING
    config: RunConfig
    started_at: str  # the first checkpoint's timestamp (an import starts from it)
    sim: StoredSimulation  # the simulation after the last committed round, compact (stored.py)
    history: list[RoundSummary] = Field(default_factory=list)
    event_seq: int = 0
    comparison: Comparison | None = None  # the second town, when the run compares two (twins.py)

    @model_serializer(mode="wrap")
    def _without_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _dropped(handler(self), "comparison")  # a one-town run is stored as before comparisons

    @property
    def round_number(self) -> int:
        return self.sim.round_number

    @property
    def simulation(self) -> dict[str, Any]:
        """The simulation as the seed's CheckpointData (every post and agent spelt out: built on each call)."""
        return stored.checkpoint(self.sim, seed=self.seed).model_dump(mode="json")

    def posts(self) -> list[dict[str, Any]]:
        """Every post as the seed's checkpoint writes it."""
        return stored.post_dicts(self.sim)

    def people(self) -> list[tuple[str, str]]:
        """Every agent's id and name, in the run's order (the listed ones first)."""
        listed = [(agent, name) for agent, name in self.sim.listed]
        return [*listed, *(generated_identity(i) for i in range(len(self.sim.agents) - len(listed)))]

    def names(self) -> dict[str, str]:
        """Every agent's name by id."""
        return dict(self.people())


class Choice(_Doc):
    round: int
    agent: str
    target: AgentState
    reason: str = Field(default="", max_length=600)


class PlayedTown(_Doc):
    """The second town's part of a block: its reasoner's choices and a real model's words, as for the first."""

    choices: list[Choice] = Field(default_factory=list)
    texts: dict[str, str] = Field(default_factory=dict)


class Played(_Doc):
    rounds: int = Field(ge=1)
    at: str = Field(
        max_length=40
    )  # when the block was played (the checkpoint's timestamp), set by the driver
    choices: list[Choice] = Field(default_factory=list)
    # Words a real model wrote for posts, replies and reshares, by "round:agent" (the offline writer's are not
    # carried: replaying the block writes them again, the same).
    texts: dict[str, str] = Field(default_factory=dict)
    second: PlayedTown | None = None  # the second town's, in a comparison (both towns play every block)


class Empty(_Doc):
    pass


class Written(_Doc):
    """A post the person writes: its words and its topic (one of the scenario's)."""

    text: str = Field(min_length=1, max_length=STUDENT_TEXT)
    topic: str = Field(min_length=1, max_length=64)
    # "B": into Town B alone (a correction, in a run comparing one); None: into every town of the run.
    into: Literal["B"] | None = None


PAYLOADS: dict[Event, type[_Doc]] = {
    Event.ROUNDS_PLAYED: Played,
    Event.RUN_PAUSED: Empty,
    Event.RUN_RESUMED: Empty,
    Event.POST_WRITTEN: Written,
}
WAITS: dict[Status, tuple[Event, ...]] = {
    Status.RUNNING: (Event.ROUNDS_PLAYED, Event.RUN_PAUSED, Event.POST_WRITTEN),
    Status.PAUSED: (Event.RUN_RESUMED, Event.POST_WRITTEN),
    Status.FINISHED: (),
}


@dataclass(frozen=True)
class Step:
    event: Event | None
    actor: str  # ai | human | done

    @property
    def done(self) -> bool:
        return self.event is None


def next_step(state: RunState) -> Step:
    if state.status is Status.RUNNING:
        return Step(Event.ROUNDS_PLAYED, "ai")
    if state.status is Status.PAUSED:
        return Step(Event.RUN_RESUMED, "human")
    return Step(None, "done")


@dataclass
class Outcome:
    seq: int
    event: Event
    source: str
    target: str
    payload: dict[str, Any]
    state: RunState
    decisions: list[dict[str, Any]] = field(default_factory=list)  # the decision log of the rounds played


def scenario_for(scenario: SocialFeedScenario, config: RunConfig) -> SocialFeedScenario:
    """The scenario as this run plays it (its own rounds, checkpoint frequency and reasoner switch)."""
    run = scenario.config.model_copy(update={
        "max_rounds": config.max_rounds, "checkpoint_frequency": config.checkpoint_frequency,
        "reasoner_enabled": config.reasoner_enabled, "ranking": config.ranking,
    })  # fmt: skip
    return scenario.model_copy(update={"config": run})


def start(scenario: SocialFeedScenario, *, seed: int, config: RunConfig, timestamp: str) -> Outcome:
    sim = rounds.start(scenario_for(scenario, config), seed=seed, agents=config.agents)
    snapshot = _stored(sim, config, timestamp)
    state = RunState(seed=seed, config=config, started_at=timestamp, sim=snapshot, event_seq=1)
    if config.compare is not None:  # the second town: the same seed and people, one setting apart
        other = rounds.start(scenario_for(second_town(scenario, config), second_config(config)), seed=seed,
                             agents=config.agents)  # fmt: skip
        state.comparison = Comparison(town=Town(sim=_stored(other, config, timestamp)))
    return Outcome(1, Event.RUN_STARTED, "", Status.RUNNING.value, config.model_dump(mode="json"), state)


def second_config(config: RunConfig) -> RunConfig:
    """The second town's configuration: the first's with its one setting changed (and nothing to compare)."""
    assert config.compare is not None
    ranking = twins.second_ranking(config.compare, config.ranking)
    return config.model_copy(update={"ranking": ranking, "compare": None})


def second_town(scenario: SocialFeedScenario, config: RunConfig) -> SocialFeedScenario:
    """The scenario as the second town is built from it (a population mix changes the generated agents)."""
    assert config.compare is not None
    return twins.second_scenario(scenario, config.compare, agents=config.agents)


def town_state(state: RunState) -> RunState:
    """The second town of a comparison as a run of its own: the first's seed, status and rounds, its own
    simulation, rounds' summaries and configuration."""
    assert state.comparison is not None
    town = state.comparison.town
    return RunState(seed=state.seed, status=state.status, config=second_config(state.config),
                    started_at=state.started_at, sim=town.sim, history=town.history, event_seq=state.event_seq)  # fmt: skip


def _stored(sim: rounds.Simulation, config: RunConfig, timestamp: str) -> StoredSimulation:
    return stored.save(sim, timestamp=timestamp, listed=len(sim.agents) - config.agents)


def block_size(state: RunState) -> int:
    """Rounds the next ROUNDS_PLAYED plays: up to the next checkpoint, never past the last round."""
    return min(state.config.checkpoint_frequency, state.config.max_rounds - state.round_number)


class ReplayReasoner:
    """The choices an event carries, checked against the guards' candidates as the rounds are replayed."""

    def __init__(self, choices: list[Choice], source: str) -> None:
        self.choices = {(c.round, c.agent): c for c in choices}
        self.source = source

    def decide(self, batch: Any) -> list[tuple[AgentState, str]]:
        out = []
        for item in batch:
            choice = self.choices.get((item.round_number, item.agent.id))
            if choice is None:
                raise Refusal(
                    self.source, Event.ROUNDS_PLAYED.value, f"{Refusal.CHOICE_MISSING}: {item.agent.id}"
                )
            if choice.target not in item.candidates:
                raise Refusal(self.source, Event.ROUNDS_PLAYED.value,
                              f"{Refusal.NOT_A_CANDIDATE}: {item.agent.id} {choice.target.value}")  # fmt: skip
            out.append((choice.target, choice.reason))
        return out


def play(
    scenario: SocialFeedScenario,
    state: RunState,
    count: int,
    reasoner: rounds.Reasoner | None,
    writer: rounds.Writer | None = None,
    on_round: Callable[[rounds.Simulation, RoundResult], None] | None = None,
) -> tuple[rounds.Simulation, list[RoundResult], list[dict[str, Any]]]:
    """`count` rounds from the stored simulation with `reasoner` (None: the run's reasoner is off) and `writer`
    (default: the offline writer); `on_round` sees the simulation after each."""
    playing = scenario_for(scenario, state.config)
    sim = stored.load(playing, state.sim, seed=state.seed)
    results: list[RoundResult] = []
    log: list[dict[str, Any]] = []
    writer = writer or _writer(playing, state.seed)
    for _ in range(count):
        results.append(rounds.run_round(sim, reasoner=reasoner, writer=writer, log=log.append))
        if on_round is not None:
            on_round(sim, results[-1])
    return sim, results, log


MAX_TEXT = 600


class ReplayWriter:
    """The words an event carries where a model wrote them; the offline writer's own elsewhere (and where a
    carried text would repeat a post already in the run, which the model's writer would not have sent)."""

    def __init__(self, texts: dict[str, str], offline: rounds.Writer) -> None:
        self.texts, self.offline = texts, offline

    def _text(self, agent: Any, n: int, fallback: Callable[[], str], taken: Callable[[str], bool]) -> str:
        text = self.texts.get(f"{n}:{agent.id}", "")[:MAX_TEXT]
        return text if text and not taken(text) else fallback()

    def compose(
        self, agent: Any, inspired_by: Any, round_number: int, taken: Callable[[str], bool]
    ) -> tuple[str, tuple[str, ...]]:
        text, topics = self.offline.compose(agent, inspired_by, round_number, taken)
        return self._text(agent, round_number, lambda: text, taken), topics

    def reply(self, agent: Any, post: Any, round_number: int, taken: Callable[[str], bool]) -> str:
        return self._text(
            agent, round_number, lambda: self.offline.reply(agent, post, round_number, taken), taken
        )

    def reshare(self, agent: Any, post: Any, round_number: int, taken: Callable[[str], bool]) -> str:
        return self._text(
            agent, round_number, lambda: self.offline.reshare(agent, post, round_number, taken), taken
        )


def offline_writer(scenario: SocialFeedScenario, state: RunState) -> rounds.Writer:
    return _writer(scenario_for(scenario, state.config), state.seed)


def _writer(scenario: SocialFeedScenario, seed: int) -> rounds.Writer:
    from .offline import OfflineWriter

    return OfflineWriter(scenario, seed)


def apply(
    scenario: SocialFeedScenario, state: RunState, event: Event | str, payload: dict[str, Any]
) -> Outcome:
    allowed = [e.value for e in WAITS[state.status]]
    try:
        ev = Event(event)
    except ValueError:
        raise IllegalEvent(state.status.value, str(event), allowed) from None
    if ev.value not in allowed:
        raise IllegalEvent(state.status.value, ev.value, allowed)
    try:
        parsed = PAYLOADS[ev].model_validate(payload or {})
    except ValidationError as exc:
        raise Refusal(
            state.status.value, ev.value, f"{Refusal.BAD_PAYLOAD}: {exc.errors()[0]['msg']}"
        ) from None
    new = state.model_copy(deep=True)
    payload_doc = parsed.model_dump(mode="json", exclude_none=True)  # a one-town block's reads as before
    out = Outcome(new.event_seq + 1, ev, state.status.value, "", payload_doc, new)
    if isinstance(parsed, Played):
        if parsed.rounds != block_size(state):
            raise Refusal(
                state.status.value,
                ev.value,
                f"{Refusal.BAD_PAYLOAD}: the block is {block_size(state)} rounds",
            )
        if (parsed.second is None) != (state.comparison is None):
            raise Refusal(state.status.value, ev.value, f"{Refusal.BAD_PAYLOAD}: {Refusal.TOWNS}")
        readers = new.comparison.readers if new.comparison is not None else [None, None]
        new.sim, new.history, out.decisions = _block(scenario, state, parsed, readers[0], at=parsed.at)
        if new.comparison is not None and parsed.second is not None:  # the second town plays the same block
            other = town_state(state)
            sim, history, _ = _block(second_town(scenario, state.config), other, parsed.second, readers[1],
                                     at=parsed.at)  # fmt: skip
            new.comparison.town = Town(sim=sim, history=history)
        if new.round_number >= new.config.max_rounds:
            new.status = Status.FINISHED
    elif isinstance(parsed, Written):
        new.sim = _written(scenario, state, parsed, ev, new.comparison)
    elif ev is Event.RUN_PAUSED:
        new.status = Status.PAUSED
    elif ev is Event.RUN_RESUMED:
        new.status = Status.RUNNING
    new.event_seq = out.seq
    out.target = new.status.value
    return out


def _block(
    scenario: SocialFeedScenario,
    state: RunState,
    played: Played | PlayedTown,
    readers: dict[str, list[list[int]]] | None,
    *,
    at: str,
) -> tuple[StoredSimulation, list[RoundSummary], list[dict[str, Any]]]:
    """One town's block (the next `block_size` rounds) replayed with the choices and words `played` carries: its
    simulation after it, its rounds' summaries and its compact decision log; `readers` (a comparison's) gains who
    read the person's posts."""
    reasoner = ReplayReasoner(played.choices, state.status.value) if state.config.reasoner_enabled else None
    writer = ReplayWriter(played.texts, _writer(scenario_for(scenario, state.config), state.seed))
    on_round = twins.reading(readers) if readers else None
    sim, results, _ = play(scenario, state, block_size(state), reasoner, writer, on_round=on_round)
    history = list(state.history)
    for r in results:  # cumulative engagement per round, counted from the round's own decisions
        history.append(_summary(r, history[-1] if history else None))
    return _stored(sim, state.config, at), history, stored.compact_log(results, sim.agents)


def _written(
    scenario: SocialFeedScenario, state: RunState, move: Written, ev: Event, comparison: Comparison | None
) -> StoredSimulation:
    """The stored simulation with the person's post added to the round about to be played (the agents see it from
    the next round's feeds on, as any other post); in a comparison, the same post joins the second town too."""
    text = move.text.strip()
    if move.topic not in {t.id for t in scenario.topics}:
        raise Refusal(state.status.value, ev.value, f"{Refusal.UNKNOWN_TOPIC}: {move.topic[:40]}")
    compare = state.config.compare
    if move.into == "B" and (compare is None or compare.setting != "correction"):
        raise Refusal(state.status.value, ev.value, Refusal.ONE_TOWN)
    sim = stored.load(scenario_for(scenario, state.config), state.sim, seed=state.seed)
    towns = [sim]
    if comparison is not None:
        other = town_state(state)
        playing = scenario_for(second_town(scenario, state.config), other.config)
        towns.append(stored.load(playing, other.sim, seed=state.seed))
    if not text or any(town.taken(text) for town in towns):
        raise Refusal(state.status.value, ev.value, Refusal.TEXT_TAKEN if text else Refusal.EMPTY_TEXT)
    into = [move.into != "B", True]  # Town A unless the post is for Town B alone; Town B (if any) always
    for n, town in enumerate(towns):
        if into[n]:
            post = rounds.new_post(town, STUDENT, text, (move.topic,))
            if comparison is not None:
                comparison.readers[n][post.id] = []
    if comparison is not None:
        comparison.town = comparison.town.model_copy(
            update={"sim": _stored(towns[1], state.config, state.sim.timestamp)}
        )
    return _stored(sim, state.config, state.sim.timestamp)


def _summary(r: RoundResult, before: RoundSummary | None) -> RoundSummary:
    counts = {"like": 0, "reply": 0, "reshare": 0, "compose": 0}
    for d in r.decisions:
        if d.action is not None and d.action.action_type in counts:
            counts[d.action.action_type] += 1
    b = before
    return RoundSummary(
        round=r.round_number + 1, distribution={s.value: c for s, c in r.state_distribution.items()},
        likes=(b.likes if b else 0) + counts["like"], replies=(b.replies if b else 0) + counts["reply"],
        reshares=(b.reshares if b else 0) + counts["reshare"],
        posts_created=(b.posts_created if b else 0) + counts["compose"] + counts["reply"] + counts["reshare"],
        decisions=len(r.decisions), reasoner_calls=r.reasoner_calls,
    )  # fmt: skip


def top_posts(state: RunState, n: int = TOP_POSTS) -> list[dict[str, Any]]:
    """The `n` most engaged posts (the earlier first among equals)."""
    rows = state.sim.posts  # [author, topics, content, round, reply_to, reshare_of, likes, reshares, replies]
    best = sorted(range(len(rows)), key=lambda i: (-(rows[i][6] + rows[i][7] + rows[i][8]), rows[i][3], i))[
        :n
    ]
    return [stored.post_from_row(i + 1, rows[i]).as_dict() for i in best]


def restore(snapshot: dict[str, Any]) -> RunState:
    """A stored run's state; one stored before the compact form (schema 1, the simulation as the seed's
    CheckpointData) is read into it."""
    version = snapshot.get("schema_version")
    if version not in (1, SCHEMA_VERSION):
        raise ResumeError(f"snapshot schema {version} is not {SCHEMA_VERSION}")
    try:
        if version == 1:
            snapshot = _from_schema_1(snapshot)
        return RunState.model_validate(snapshot)
    except (ValidationError, ValueError, KeyError, TypeError) as exc:
        raise ResumeError(f"snapshot is not a social-feed run: {exc}") from exc


def _from_schema_1(snapshot: dict[str, Any]) -> dict[str, Any]:
    old = dict(snapshot)
    simulation = old.pop("simulation")
    CheckpointData.model_validate(simulation)
    generated = RunConfig.model_validate(old["config"]).agents
    sim = stored.from_checkpoint(simulation, seed=int(old["seed"]), generated=generated)
    return old | {"schema_version": SCHEMA_VERSION, "sim": sim.model_dump(mode="json")}


def config_from_options(scenario: SocialFeedScenario, options: dict[str, Any]) -> RunConfig:
    """A run's configuration: the scenario's defaults, overridden by the set-up's options (ValueError: a sentence)."""
    if "config" in options:
        return RunConfig.model_validate(options["config"])
    generated = scenario.population.count if scenario.population else 0
    try:
        return RunConfig(
            agents=int(options.get("agents", generated)),
            max_rounds=int(options.get("max_rounds", scenario.config.max_rounds)),
            checkpoint_frequency=int(
                options.get("checkpoint_frequency", scenario.config.checkpoint_frequency)
            ),
            reasoner_enabled=bool(options.get("reasoner_enabled", scenario.config.reasoner_enabled)),
            ranking=options.get("ranking") or scenario.config.ranking,
            compare=options.get("compare") or None,
        )
    except ValidationError as exc:
        cause = exc.errors()[0].get("ctx", {}).get("error")
        if isinstance(cause, twins.NotDifferent):  # already a sentence for the person setting up
            raise twins.NotDifferent(str(cause)) from None
        raise ValueError(f"The set-up does not fit: {str(exc).splitlines()[-1]}") from None
    except Exception as exc:
        raise ValueError(f"The set-up does not fit: {str(exc).splitlines()[-1]}") from None
