"""Social-feed runs as the platform sees them: scenarios from YAML files declaring `kind: social_feed`, the
machine's outcomes in the ledger's terms (a block of rounds per committed step, its decisions as the event's
changes), the driver's AI step (turns.py), the pages (pages.py, presenters.py, templates/social_feed/), the export
and downloads (export.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from simulations.kinds import Actor, Advance, Kind, LedgerEvent, NextStep, Outcomes
from simulations.kinds.base import KindBase, ScenarioFiles, check_parts

from . import machine
from .config import SocialFeedScenario, load_scenario
from .machine import Outcome, RunConfig, RunState, Status

if TYPE_CHECKING:
    from simulations.models import Game
    from simulations.services.play.work_budget import WorkEstimate

    from . import authoring, export, headless, pages

    check_parts(authoring, pages, export, headless)  # mypy checks each part against its contract


def _advance(out: Outcome) -> Advance:
    state = out.state
    event = LedgerEvent(seq=out.seq, name=out.event.value, source=out.source, target=out.target, actor="system",
                        payload=out.payload, changes=tuple(out.decisions))  # fmt: skip
    return Advance(
        events=(event,), state=state.model_dump(mode="json"), phase=state.status.value, human_role="",
        finished=state.status is Status.FINISHED, schema_version=state.schema_version, transcript_seq=0,
    )  # fmt: skip


class SocialFeed(KindBase):
    name = "social_feed"
    title = "Social feed"
    scenarios = ScenarioFiles("social_feed", SocialFeedScenario, load_scenario, blurb_field="summary")

    def start(self, scenario: SocialFeedScenario, *, seed: int, options: dict[str, Any]) -> Advance:
        at = str(options.get("started_at") or datetime.now(UTC).isoformat(timespec="seconds"))
        return _advance(
            machine.start(
                scenario, seed=seed, config=machine.config_from_options(scenario, options), timestamp=at
            )
        )

    def advance(
        self, scenario: SocialFeedScenario, state: dict[str, Any], event: str, payload: dict[str, Any]
    ) -> Advance:
        return _advance(machine.apply(scenario, machine.restore(state), event, payload))

    def restore(self, scenario: SocialFeedScenario, state: dict[str, Any]) -> RunState:
        return machine.restore(state)

    def next_step(self, game: Game) -> NextStep:
        from .games import state_of

        step = machine.next_step(state_of(game))
        actor = {"ai": Actor.AI, "human": Actor.HUMAN, "done": Actor.DONE}[step.actor]
        return NextStep(actor=actor, speaker="The feed" if actor is Actor.AI else "", detail=step)

    def stream_view(self, text: str) -> str:
        return ""  # nothing streams: a block of rounds commits whole

    def offline_reply(self, messages: Sequence[dict[str, Any]]) -> str | None:
        return None  # the offline reasoner runs in-process (turns.py)

    def work_estimate(self, game: Game, config: dict[str, Any]) -> WorkEstimate:
        from simulations.services.content.model_choice import game_specs

        from .estimate import run_estimate
        from .games import scenario_of

        return run_estimate(
            scenario_of(game), RunConfig.model_validate(config), offline=game_specs(game)[0].offline
        )

    def outcomes(self, game: Game) -> Outcomes:
        """The run's totals after its last round, as its Markdown's first lines give them."""
        from .games import state_of
        from .reading import count

        state = state_of(game)
        if state.status is not Status.FINISHED:
            return Outcomes()
        line = f"{count(state.round_number, 'round')} played"
        if state.history:
            last = state.history[-1]
            totals = (("likes", "like"), ("replies", "reply"), ("reshares", "reshare"))
            line += "; " + ", ".join(count(getattr(last, name), noun) for name, noun in totals)
        return Outcomes(verdict=line)


KIND: Kind = SocialFeed()  # mypy checks the class against the contract
