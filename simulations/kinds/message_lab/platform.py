"""Message Lab as the platform sees it: the machine's outcomes in the ledger's terms, the driver's AI steps (a
parallel stage's calls side by side, each streaming into its own box), the offline personas, the pages
(pages.py, presenters.py, templates/message_lab/), the export and the report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from simulations.kinds import Advance, Kind, LedgerEntry, LedgerEvent, NextStep, Outcomes
from simulations.kinds.base import KindBase, ScenarioFiles, check_parts, platform_step

from . import machine, prompts
from .document import Config, LabState
from .machine import Outcome
from .run_config import config_from_options
from .scenario import MessageLabScenario, load_scenario
from .state import SimulationStatus

if TYPE_CHECKING:
    from simulations.models import Game
    from simulations.services.play.work_budget import WorkEstimate

    from . import authoring, export, headless, pages

    check_parts(authoring, pages, export, headless)  # mypy checks each part against its contract


def _ledger(outcomes: Sequence[Outcome], first_seq: int) -> tuple[LedgerEvent, ...]:
    events, seq = [], first_seq
    for o in outcomes:
        entries = []
        for line in o.lines:
            seq += 1
            entries.append(
                LedgerEntry(
                    seq=seq,
                    round=line.round,
                    phase=o.source,
                    speaker=line.persona,
                    kind=line.type,
                    text=line.content,
                )  # fmt: skip
            )
        events.append(
            LedgerEvent(
                seq=o.seq,
                name=o.event.value,
                source=o.source,
                target=o.target,
                actor=o.actor,
                payload=o.payload,
                entries=tuple(entries),
                changes=tuple(o.changes),
            )  # fmt: skip
        )
    return tuple(events)


def _advance(outcomes: list[Outcome], before: LabState | None) -> Advance:
    final = outcomes[-1].state
    return Advance(
        events=_ledger(outcomes, len(before.transcript) if before else 0), state=final.model_dump(mode="json"),
        phase=machine.where(final), human_role="", finished=final.status is SimulationStatus.OUTPUT_READY,
        schema_version=final.schema_version, transcript_seq=len(final.transcript),
    )  # fmt: skip


class MessageLab(KindBase):
    name = "message_lab"
    title = "Message Lab"
    scenarios = ScenarioFiles("message_lab", MessageLabScenario, load_scenario, blurb_field="summary")

    def start(self, scenario: MessageLabScenario, *, seed: int, options: dict[str, Any]) -> Advance:
        return _advance(machine.start(config_from_options(scenario, options), seed=seed), None)

    def advance(
        self, scenario: MessageLabScenario, state: dict[str, Any], event: str, payload: dict[str, Any]
    ) -> Advance:
        current = machine.restore(state)
        return _advance(machine.apply(current, event, payload), current)

    def restore(self, scenario: MessageLabScenario, state: dict[str, Any]) -> LabState:
        return machine.restore(state)

    def next_step(self, game: Game) -> NextStep:
        from .games import scenario_of, state_of

        step = machine.next_step(state_of(game))
        return platform_step(
            step, lambda: ", ".join(scenario_of(game).persona(u.persona).name for u in step.units)
        )

    def stream_view(self, text: str) -> str:
        return prompts.streamed_text(text)

    def offline_reply(self, messages: Sequence[dict[str, Any]]) -> str | None:
        return prompts.offline_answer(list(messages))

    def work_estimate(self, game: Game, config: dict[str, Any]) -> WorkEstimate:
        from simulations.services.content.model_choice import game_specs

        from .estimate import run_estimate

        return run_estimate(Config.model_validate(config), offline=game_specs(game)[0].offline)

    def outcomes(self, game: Game) -> Outcomes:
        """The winning concept, as the report's first heading names it; the player has no aim to be met."""
        from .games import state_of

        state = state_of(game)
        if state.status is not SimulationStatus.OUTPUT_READY or state.verdict is None:
            return Outcomes()
        return Outcomes(verdict=f"Winner: {' '.join(state.concept(state.verdict.winner).name.split())}")


KIND: Kind = MessageLab()  # mypy checks the class against the contract
