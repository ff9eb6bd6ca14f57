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


def test_openings_that_call_for_a_binding_instrument_show_in_the_panel(scenario: Scenario) -> None:
    """Canada's "this instrument must be legally binding" (opening a) and the United States' "our central aim is a
    legally binding instrument" (opening c) are positions stated in public, as a speech's are: the panel shows
    both countries leaning to 1.1 from the first debate on, before anyone has spoken on the issue."""
    for seed in range(1, 60):
        game = new_pure_game(scenario, seed).play(Passive("USA", "USA-c"), until="ISSUE_DEBATE_ROUND_1")
        if game.state.round1.openings["CAN"] == "CAN-a":
            break
    else:
        raise AssertionError("no seed in 1-59 gives Canada its opening a")
    assert game.state.round1.openings["USA"] == "USA-c"
    panel = presenters._issue(scenario, game.state)
    assert panel is not None and panel["id"] == "1"
    leaning = {o["id"]: o["leaning"] for o in panel["options"]}
    assert {"Canada", "United States"} <= set(leaning["1.1"]), (leaning, panel["unstated"])
    assert "Canada" not in panel["unstated"] and "United States" not in panel["unstated"]
