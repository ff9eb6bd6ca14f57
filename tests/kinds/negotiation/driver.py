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
        state = machine.focused(self.state, step.lane)
        prompt = prompts.build_prompt(self.scenario, state, step, seen, [])
        return offline_writer.write(prompt.facts)

    def step(self, policy: Policy, step: machine.Step | None = None) -> Outcome:
        """The game's next step (or `step`, one of Round 2's lanes' steps), played."""
        step = step or machine.next_step(self.scenario, self.state)
        lane = {"seat": step.lane, "seen": self.state.event_seq} if step.lane else {}
        if step.kind == "system":
            return self.apply(step.events[0], machine.step_payload(step))
        if step.kind == "ai":
            if step.purpose == "vote":
                return self.apply(step.events[0])
            if step.purpose == "summary":
                return self.apply(step.events[0], {"text": "Debrief."})
            text = self.ai_text(step)
            if step.purpose == "speech" and text == prompts.PASS:
                return self.apply("AI_TURN_SKIPPED")
            return self.apply(step.events[0], {"text": text, **lane})
        event, payload = policy.decide(self.scenario, machine.focused(self.state, step.lane), step)
        if step.lane:  # the move of the seat that acts, in its lane
            payload = {**payload, "seat": step.role, "seen": self.state.event_seq}
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


def one_student_at_a_time(scenario: Scenario, seed: int) -> PureGame:
    """A class group's game (Brazil and Tanzania) as stored before Round 2's lanes, resting where its first
    student chooses a talk, played to the end: its students take their talks in turn."""
    from simulations.kinds.negotiation.bots import BySeat, Passive

    policy = BySeat([Passive("BRA"), Passive("TZA")])
    game = new_pure_game(scenario, seed).play(Passive("BRA"), until="ROUND_2_SELECT_CONVO_1")
    game.state = game.state.model_copy(update={"co_players": ["TZA"]})
    return game.play(policy)
