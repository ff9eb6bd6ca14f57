"""A stored negotiation game read back as the machine's objects (its scenario, state and next step)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, cast

from simulations.services.content.scenarios import parsed_scenario
from simulations.services.ledger.rows import EncodesItself

from . import machine
from .machine import Step
from .scenario import Scenario
from .state import GameState

if TYPE_CHECKING:
    from simulations.models import Game, ScenarioVersion


def scenario_of_version(version: ScenarioVersion) -> Scenario:
    """A stored negotiation scenario as the engine's Scenario (parsed once per version, cached)."""
    return cast(Scenario, parsed_scenario(version))


def scenario_of(game: Game) -> Scenario:
    return scenario_of_version(game.scenario)


def state_of(game: Game) -> GameState:
    """The game's state as the engine's object, read once per loaded game and state: a turn reads it four or
    five times (its next step, its prompt, the page's render, the commit's `advance`), and parsing is not free. The game
    then holds its stored state as a `CommittedState` carrying that object, so whatever is handed `game.state`
    (the kind contract's `advance`) takes the object instead of reading the dict again. Read-only: the machine
    applies events to a copy (`machine.apply`), and so must anything else that changes it."""
    stored = game.state
    if type(stored) is CommittedState:
        return stored.parsed
    state = GameState.model_validate(stored)
    kept = CommittedState(stored)
    kept.parsed = state
    game.state = kept
    return state


class CommittedState(dict[str, Any], EncodesItself):
    """A committed state as stored (a dict, which is what the game row holds) that keeps its parsed object: the
    game a commit leaves holds this very dict, so its next step, prompt and commit (which would parse it again)
    take the object instead; a game read from the database gets one at its first `state_of`. The object lives
    exactly as long as the dict (a memo of recent states kept them alive longer, and the garbage collector's
    full passes went from one to four a game). Like `state_of`'s objects, read-only; a copy of the dict is a
    plain dict and is parsed."""

    __slots__ = ("parsed", "text")
    parsed: GameState
    text: str

    def json_text(self) -> str:
        """The stored text, written by pydantic from the object (a third of `json.dumps`'s time for this dict),
        once: the commit's write and services/ledger/stored_states.py both ask for it."""
        try:
            return self.text
        except AttributeError:
            self.text = self.parsed.model_dump_json()
            return self.text


def committed_state(state: GameState) -> dict[str, Any]:
    """`state` as stored, keeping `state` for `state_of`."""
    stored = CommittedState(state.model_dump(mode="json"))
    stored.parsed = state
    return stored


def step_of(game: Game) -> Step:
    return machine.next_step(scenario_of(game), state_of(game))


def seated(game: Game) -> Game:
    """`game` as its `viewer_seat` sees it (a class group's student other than the owner: services.ledger.seats),
    for the pages, which render the student's view from `human_role`: a copy in which that seat is the student's
    and the others' are co-players. The game itself as it is for its owner and for readers without a seat."""
    seat = game.viewer_seat or game.human_role
    if not seat:
        return game
    state = state_of(game)
    # The owner sees the game as it is, but in Round 2's lanes, where another student may have chosen them too.
    if seat not in state.humans or (seat == game.human_role and not state.round2.lanes):
        return game
    seen = copy.copy(game)
    seen.human_role = seat
    seen.state = committed_state(seen_from(state, seat))
    return seen


def seen_from(state: GameState, seat: str) -> GameState:
    """The state with `seat` as the student and the other students as co-players (in Round 2's lanes, focused on
    `seat`'s); a talk another student chose with `seat` is turned round, so that `seat` is on its student's side
    as in a talk of its own. For pages only: the machine never plays this state."""
    current = state.round2_student
    view = state.model_copy(deep=True)
    view.human_role, view.human_variant = seat, state.round1.openings.get(seat)
    view.co_players = [h for h in state.humans if h != seat]
    if view.round2.lanes:
        view.round2.focus = seat  # the page is about this seat's lane
    elif current is not None:
        view.round2.student = view.humans.index(current)
    for convo in view.round2.conversations:
        talker = state.talker_of(convo)
        convo.talker = talker
        if convo.partner == seat and talker is not None:
            convo.talker, convo.partner = seat, talker
            convo.human_turns, convo.partner_turns = convo.partner_turns, convo.human_turns
            convo.human_final, convo.partner_final = convo.partner_final, convo.human_final
            convo.starter = "partner" if convo.starter == "human" else "human"
            convo.next_speaker = "partner" if convo.next_speaker == "human" else "human"
    return view
