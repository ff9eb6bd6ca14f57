"""'Where the countries lean' shows what countries said in public, never an AI seat's private preference."""

from __future__ import annotations

from simulations.kinds.negotiation import presenters
from simulations.kinds.negotiation.bots import Passive
from simulations.kinds.negotiation.scenario import Scenario
from tests.kinds.negotiation.driver import new_pure_game


def test_the_lean_panel_shows_public_statements_only(scenario: Scenario) -> None:
    game = new_pure_game(scenario, 2).play(Passive("USA"), until="ISSUE_DEBATE_ROUND_1")
    state = game.state.model_copy(deep=True)
    # China's private preference on issue 1 moves; what it said in public does not.
    state.stated["CHN"] = {"1": "1.2"}
    state.stances["CHN"]["1"].preferred = "1.1"
    state.stances["CHN"]["1"].acceptable = ["1.1", "1.2"]
    state.stated.pop("BRA", None)
    panel = presenters._issue(scenario, state)
    assert panel is not None
    leaning = {o["id"]: o["leaning"] for o in panel["options"]}
    assert "China" in leaning["1.2"] and "China" not in leaning["1.1"]
    assert "Brazil" in panel["unstated"] and all("Brazil" not in names for names in leaning.values())
    shown = sum(len(names) for names in leaning.values()) + len(panel["unstated"])
    assert shown == len(scenario.countries)
