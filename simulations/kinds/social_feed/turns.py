"""A social-feed run's AI step: the next block of rounds (up to the next checkpoint), played from the stored
simulation outside any transaction, committed as one ROUNDS_PLAYED event carrying the reasoner's choices, which
the machine replays and checks.

The reasoner: with the built-in offline model, the seeded offline reasoner called in-process (tens of thousands of
decisions a run; the litellm round trip would cost more than the run). With a real model, each round's ambiguous
decisions go out as one batch, at most `PARALLEL` calls at once; each answer is JSON `{"choice", "reason"}`
checked against the candidates, asked again once, and otherwise settled by the offline reasoner with the reason
saying so (the run goes on; the calls are on record).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from django.utils import timezone

from simulations import faults
from simulations.ai import gateway
from simulations.ai.model_spec import ModelSpec
from simulations.ai.offline import call_latency
from simulations.engine.model_replies import ReplyError, json_object
from simulations.kinds import ChunkSink, Restart
from simulations.models import Game
from simulations.services.content.model_choice import game_specs
from simulations.services.ledger.turns import ModelCallRecord, commit_event
from simulations.services.play.budget import check_budget
from simulations.services.play.model_step import CallFailed, ModelRequest, ask, ask_and_read, failed

from . import machine, rounds
from .config import SocialFeedScenario
from .entities import AgentState, Ambiguity, Post, SocialAgent
from .games import scenario_of, state_of
from .machine import Choice, Event
from .offline import VERB, OfflineReasoner, topic_names

PARALLEL = 4
PROMPT_VERSION = "social-feed-1"


class Recording:
    """A reasoner that remembers each choice it made (what the event carries)."""

    def __init__(self, inner: object) -> None:
        self.inner, self.choices = inner, []  # type: ignore[var-annotated]

    def decide(self, batch: Sequence[Ambiguity]) -> list[tuple[AgentState, str]]:
        answers = self.inner.decide(batch)  # type: ignore[attr-defined]
        for item, (target, reason) in zip(batch, answers, strict=True):
            self.choices.append(
                Choice(round=item.round_number, agent=item.agent.id, target=target, reason=reason[:600])
            )
        return answers  # type: ignore[no-any-return]


class ModelReasoner:
    """A real model decides each ambiguous case of a round; calls run concurrently, bounded."""

    def __init__(
        self, spec: ModelSpec, seed: int, records: list[ModelCallRecord], topics: dict[str, str] | None = None
    ) -> None:
        self.spec, self.fallback, self.records = spec, OfflineReasoner(seed, topics=topics), records

    def decide(self, batch: Sequence[Ambiguity]) -> list[tuple[AgentState, str]]:
        with ThreadPoolExecutor(max_workers=PARALLEL, thread_name_prefix="social-feed") as pool:
            return list(pool.map(self._one, batch))

    def _one(self, item: Ambiguity) -> tuple[AgentState, str]:
        options = ", ".join(f'"{c.value}" ({VERB[c]})' for c in item.candidates)
        messages = [
            {"role": "system", "content": (
                f"You decide what one member of a town's social feed does next. {item.agent.name} follows "
                f"{', '.join(item.agent.interests)}. Answer with one JSON object: "
                '{"choice": "<one of the options>", "reason": "<one sentence>"}.')},
            {"role": "user", "content": f"The post by @{item.post.author} (topics {', '.join(item.post.topics)}; "
                                        f"in the feed because: {item.why or 'it was there'}): {item.post.content}"
                                        f"\n\nOptions: {options}"},
        ]  # fmt: skip
        request = ModelRequest(
            messages=messages,
            role=item.agent.id[:16],
            purpose="reasoner",
            context=[],
            prompt_version=PROMPT_VERSION,
        )

        def choice(reply: str) -> tuple[AgentState, str]:
            data = json_object(reply)
            try:
                target = AgentState(str(data.get("choice", "")).strip().upper())
            except ValueError:
                raise ReplyError(f"{data.get('choice')!r} is not one of the options") from None
            if target not in item.candidates:
                raise ReplyError(f"{target.value} is not one of the options")
            return target, str(data.get("reason") or "")[:600]

        try:
            (target, reason), asked = ask_and_read(request, self.spec, choice, attempts=2)
        except CallFailed as exc:
            self.records.append(exc.record)
            target, reason = self.fallback.decide([item])[0]
            return target, f"{reason} (the model's answer could not be used: {exc.failure.reason[:200]})"
        self.records.append(asked.record)
        return target, reason


class ModelWriter:
    """A real model writes the posts, replies and reshares (one call each, in the round's agent order); the words
    are recorded for the event. A failed call leaves the offline writer's words, so the run goes on."""

    def __init__(self, spec: ModelSpec, offline: rounds.Writer, records: list[ModelCallRecord]) -> None:
        self.spec, self.offline, self.records = spec, offline, records
        self.texts: dict[str, str] = {}

    def _ask(
        self, agent: SocialAgent, n: int, task: str, fallback: Callable[[], str], taken: Callable[[str], bool]
    ) -> str:
        who = f"{agent.name}, who follows {', '.join(agent.interests)}"
        messages = [{"role": "system", "content": f"You write one social-media post as {who}. Plain text, at most "
                                                  "two sentences, no hashtags beyond one."},
                    {"role": "user", "content": task}]  # fmt: skip
        request = ModelRequest(
            messages=messages, role=agent.id[:16], purpose="writer", context=[], prompt_version=PROMPT_VERSION
        )
        try:
            asked = ask(request, self.spec)
        except gateway.ModelFailure as exc:
            self.records.append(failed(request, self.spec, exc))
            return fallback()
        self.records.append(asked.record)
        result = asked.reply
        text = result.text.strip()[: machine.MAX_TEXT]
        if not text or taken(text):  # nothing, or a post the run already has: the offline writer's words
            return fallback()
        self.texts[f"{n}:{agent.id}"] = text
        return text

    def compose(
        self, agent: SocialAgent, inspired_by: Post | None, round_number: int, taken: Callable[[str], bool]
    ) -> tuple[str, tuple[str, ...]]:
        text, topics = self.offline.compose(agent, inspired_by, round_number, taken)
        task = f"Write a post about {', '.join(topics)}."
        return self._ask(agent, round_number, task, lambda: text, taken), topics

    def reply(self, agent: SocialAgent, post: Post, round_number: int, taken: Callable[[str], bool]) -> str:
        return self._ask(agent, round_number, f"Reply to this post by @{post.author}: {post.content}",
                         lambda: self.offline.reply(agent, post, round_number, taken), taken)  # fmt: skip

    def reshare(self, agent: SocialAgent, post: Post, round_number: int, taken: Callable[[str], bool]) -> str:
        return self._ask(agent, round_number, f"Say in a line why you pass this on: {post.content}",
                         lambda: self.offline.reshare(agent, post, round_number, taken), taken)  # fmt: skip


def play_ai_step(
    game: Game, step: machine.Step, *, on_chunk: ChunkSink | None = None, on_restart: Restart | None = None
) -> Game:
    """Precondition: the run is RUNNING. Plays and commits the next block of rounds (nothing streams)."""
    scenario, state = scenario_of(game), state_of(game)
    check_budget(game)
    playing, _ = game_specs(game)
    records: list[ModelCallRecord] = []
    names = topic_names(scenario)
    inner = (
        OfflineReasoner(state.seed, topics=names)
        if playing.offline
        else ModelReasoner(playing, state.seed, records, names)
    )
    count = machine.block_size(state)
    faults.point("before_model_call")
    recording, writer = _play_town(scenario, state, inner, playing, records, count)
    second: dict[str, object] = {}
    if state.comparison is not None:  # the second town plays the same block, with a reasoner of its own
        other, town = machine.town_state(state), machine.second_town(scenario, state.config)
        again = (
            OfflineReasoner(state.seed, topics=names)
            if playing.offline
            else ModelReasoner(playing, state.seed, records, names)
        )
        rec, words = _play_town(town, other, again, playing, records, count)
        second = {"second": {"choices": [c.model_dump(mode="json") for c in rec.choices],
                             "texts": words.texts if words else {}}}  # fmt: skip
    if (
        playing.offline and recording.choices
    ):  # a slow model simulated (MERCURY_OFFLINE_CALL_LATENCY): a round's
        time.sleep(
            call_latency() * count
        )  # batch of calls costs about one call's latency, as with a real one
    payload = {"rounds": count, "at": timezone.now().isoformat(timespec="seconds"),
               "choices": [c.model_dump(mode="json") for c in recording.choices],
               "texts": writer.texts if writer else {}} | second  # fmt: skip
    game = commit_event(game_id=game.pk, expected_version=game.version, event=Event.ROUNDS_PLAYED.value,
                        payload=payload, model_calls=tuple(records))  # fmt: skip
    _write_files(game, scenario.config)
    return game


def _play_town(
    scenario: SocialFeedScenario,
    state: machine.RunState,
    inner: object,
    playing: ModelSpec,
    records: list[ModelCallRecord],
    count: int,
) -> tuple[Recording, ModelWriter | None]:
    """One town's next block played (not stored): the reasoner's choices recorded, and a real model's words."""
    recording = Recording(inner)
    writer = (
        None if playing.offline else ModelWriter(playing, machine.offline_writer(scenario, state), records)
    )
    machine.play(scenario, state, count, recording if state.config.reasoner_enabled else None, writer)
    return recording, writer


def _write_files(game: Game, config: object) -> None:
    """The seed's files, when the scenario names them: this checkpoint, and the block's decisions."""
    from .config import SimulationConfig
    from .files import append_decisions, write_checkpoint

    assert isinstance(config, SimulationConfig)
    state = state_of(game)
    if config.checkpoint_dir:
        write_checkpoint(
            config.checkpoint_dir, f"run-{game.pk}-round-{state.round_number:05d}", state.simulation
        )
    if config.log_decisions and config.log_file:
        from .export import logged

        last = game.events.filter(name=Event.ROUNDS_PLAYED.value).order_by("-seq")
        block = logged(state, last.values_list("stance_changes", "payload")[:1])
        append_decisions(config.log_file, [{"run": game.pk, **d} for d in block])
