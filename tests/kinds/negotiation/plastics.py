"""The second negotiation scenario (`scenarios/plastics`) for tests: its folder, its stored version, a played game."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth.models import User

from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.headless import play_game
from simulations.models import Game, ScenarioVersion
from simulations.services.content.scenarios import load_scenario
from simulations.services.ledger.turns import create_game

PLASTICS_DIR = Path(__file__).resolve().parents[3] / "scenarios" / "plastics"
PLASTICS_ROLES = ["FJI", "IND", "NOR", "SAU", "GPIC", "WPWA"]  # countries, then NGOs, each by id


def plastics_version() -> ScenarioVersion:
    version, _ = load_scenario(folder=PLASTICS_DIR)
    return version


def played_plastics(role: str, human: str = "passive", seed: int = 2, owner: User | None = None) -> Game:
    game = create_game(scenario_version=plastics_version(), seed=seed, owner=owner)
    return play_game(game_id=game.pk, policy=make_policy(human, role))
