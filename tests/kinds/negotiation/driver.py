"""Play whole games on the pure engine (no database, no litellm): the offline writer supplies AI text."""

from __future__ import annotations

from dataclasses import dataclass, field

from simulations.kinds.negotiation import machine, offline_writer, prompts
from simulations.kinds.negotiation.bots import Policy
from simulations.kinds.negotiation.machine import Entry, Outcome
from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import GameState


@dataclass
class PureGame:
    scenario: Scenario
    state: GameState
    entries: list[Entry] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    states: list[GameState] = field(default_factory=list)  # the state after every outcome

    def apply(self, event: str, payload: dict[str, object] | None = None) -> Outcome:
        outcome = machine.apply(self.scenario, self.state, event, payload)
        self.state = outcome.state
        self.entries += outcome.entries
        self.outcomes.append(outcome)
        self.states.append(outcome.state)
        return outcome

    def ai_text(self, step: machine.Step) -> str:
        seen = [
            prompts.SeenEntry(e.seq, e.speaker, e.kind, e.visibility, e.audience, e.text)
            for e in self.entries
        ]
        prompt = prompts.build_prompt(self.scenario, self.state, step, seen, [])
        return offline_writer.write(prompt.facts)

    def step(self, policy: Policy) -> Outcome:
        step = machine.next_step(self.scenario, self.state)
        if step.kind == "system":
            return self.apply(step.events[0])
        if step.kind == "ai":
            if step.purpose == "vote":
                return self.apply(step.events[0])
            if step.purpose == "summary":
                return self.apply(step.events[0], {"text": "Debrief."})
            text = self.ai_text(step)
            if step.purpose == "speech" and text == prompts.PASS:
                return self.apply("AI_TURN_SKIPPED")
            return self.apply(step.events[0], {"text": text})
        event, payload = policy.decide(self.scenario, self.state, step)
        return self.apply(event, payload)

    def play(self, policy: Policy, until: str | None = None, max_steps: int = 5000) -> PureGame:
        for _ in range(max_steps):
            if machine.next_step(self.scenario, self.state).kind == "done" or self.state.status == until:
                return self
            self.step(policy)
        raise AssertionError("game did not finish")


def new_pure_game(scenario: Scenario, seed: int) -> PureGame:
    game = PureGame(scenario, machine.new_game(seed))
    game.apply("NEW_GAME_CREATED")
    return game


def outcomes_of(game: PureGame) -> dict[str, bool]:
    return {i.issue_id: bool(i.adopted) for i in game.state.round3.issues}
