"""Message Lab's outputs: the final report, the state in the seed's JSON shape, the export and its import."""

from __future__ import annotations

import json

from simulations.kinds import kind_of
from simulations.kinds.message_lab.games import state_of
from simulations.kinds.message_lab.headless import play_headless
from simulations.models import ScenarioVersion
from simulations.services.files.export import export_game
from simulations.services.files.import_game import import_game

from .conftest import new_lab_game


def test_the_report_names_the_winner_its_evolution_and_the_moderators_reasoning(
    lab_version: ScenarioVersion,
) -> None:
    game = play_headless(new_lab_game(lab_version, seed=12, rounds=3, gates=[2]))
    st = state_of(game)
    assert st.verdict is not None
    body, content_type, filename = kind_of(game).exports.download(game, "md")  # type: ignore[misc]
    assert content_type.startswith("text/markdown") and filename.endswith("report.md")
    winner = st.concept(st.verdict.winner)
    assert body.index("## Winner") < body.index(winner.name) < body.index("### Why it won")
    for version in winner.versions:  # every version, with what changed and why
        assert f"**v{version.version} (round {version.round})" in body
    assert st.verdict.reasoning.split()[0] in body
    assert all(f"### Round {n}" in body for n in (1, 2, 3))
    assert "Your quality gate:" in body and "The moderator's direction:" in body
    for runner in st.verdict.runners_up:
        assert st.concept(runner).name in body.split("## Runners-up")[1]


def test_the_state_exports_in_the_seeds_shape_and_imports_to_the_same_run(
    lab_version: ScenarioVersion,
) -> None:
    game = play_headless(new_lab_game(lab_version, seed=13, rounds=2, gates=[1]))
    body, content_type, _ = kind_of(game).exports.download(game, "state.json")  # type: ignore[misc]
    sim = json.loads(body)["simulation"]
    assert (
        content_type == "application/json"
        and sim["type"] == "message_lab"
        and sim["status"] == "output_ready"
    )
    assert sim["config"]["participants"] == state_of(game).config.participants
    assert [r["number"] for r in sim["rounds"]] == [1, 2]
    assert all(s["status"] == "complete" for r in sim["rounds"] for s in r["stages"].values())
    assert sim["rounds"][0]["concepts_created"] == 5 and sim["rounds"][0]["concepts_eliminated"] >= 1
    assert sim["quality_gates"] == [
        {"after_round": 1, "status": "decided", "decision": {"eliminate": [], "rescue": [], "direction": ""}}
    ]
    assert {c["status"] for c in sim["concepts"]["active"]} >= {"winner"}
    winner = next(c for c in sim["concepts"]["active"] if c["status"] == "winner")
    assert winner["evolution_history"][0]["version"] == "v1" and "changes" in winner["evolution_history"][-1]
    assert all(e["timestamp"].endswith("Z") for e in sim["transcript"]["entries"])

    exported = export_game(game=game)
    copy = import_game(data=json.loads(json.dumps(exported)))
    assert copy.pk != game.pk and copy.state == game.state
