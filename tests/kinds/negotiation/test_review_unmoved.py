"""The review lists the student's messages that moved nothing, and why — from what the game recorded (the readings
the engine applied, the stance changes it logged), never from a second reading."""

from __future__ import annotations

import html

import pytest
from django.contrib.auth.models import User
from django.test import Client

from simulations.kinds.negotiation.bots import Script, Scripted
from simulations.kinds.negotiation.headless import play_game
from simulations.kinds.negotiation.review_page import moved_nothing
from simulations.models import Game
from simulations.services.files.export import reader_export
from simulations.services.ledger.turns import create_game
from tests.helpers import mercury_version, played

pytestmark = pytest.mark.django_db

NONSENSE = "Blue skies and long rivers remind us of home."
FALSE_OFFER = "We are ready to offer a dedicated financial mechanism."  # Tanzania can offer nothing
SCRIPT = Script(
    role="TZA",
    talks=[
        {
            "partner": "BRA",
            "messages": [NONSENSE, FALSE_OFFER, "We support out of scope pending assessment (4.2)."],
        }
    ],
    issues={
        "1": {"placement": "first", "speeches": ["We support a legally binding instrument (1.1).", None]}
    },
)


def _review(game: Game) -> str:
    owner, _ = User.objects.get_or_create(username="reviewer")
    Game.objects.filter(pk=game.pk).update(owner=owner)
    client = Client()
    client.force_login(owner)
    response = client.get(f"/games/{game.pk}/review/")
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def _scripted_game() -> Game:
    game = create_game(scenario_version=mercury_version(), seed=4)
    return play_game(game_id=game.pk, policy=Scripted("TZA", SCRIPT))


def _check_against_records(game: Game) -> dict[str, object]:
    """The list agrees with the export: a message is listed exactly when no stance change names it as its cause
    and it struck no trade; "not credible" exactly when its recorded reading holds an offer marked not credible;
    "not read" exactly when its recorded reading is empty."""
    data = reader_export(game=game)
    found = moved_nothing(game, data)
    human = game.state["human_role"]
    own = [e for e in data["transcript"] if e["speaker"] == human and e["kind"] in ("message", "speech")]
    causes = {c["cause_seq"] for c in data["negotiation"]["stance_changes"] if c["field"] != "withdrawn"}
    traded = {c["made_seq"] for c in data["negotiation"]["commitments"] if c["by"] == human}
    readings = {r["seq"]: r["items"] for r in data["judge_readings"]}
    listed = {u.seq: u for u in found["unmoved"]}
    assert set(listed) == {e["seq"] for e in own if e["seq"] not in causes | traded}
    for seq, item in listed.items():
        items = readings[seq]
        assert (item.why == "not_read") == (items == [])
        false_offer = any(i["kind"] == "offer" and not i["credible"] for i in items)
        assert (item.why == "not_credible") == false_offer
    assert found["student_lines"] == len(own)
    return found


def test_each_unmoved_message_is_listed_with_the_reason_the_records_give() -> None:
    game = _scripted_game()
    found = _check_against_records(game)
    by_text = {u.quote: u for u in found["unmoved"]}  # type: ignore[attr-defined]
    assert by_text[NONSENSE].why == "not_read"
    assert by_text[FALSE_OFFER].why == "not_credible"
    assert "Tanzania cannot provide" in by_text[FALSE_OFFER].reason
    page = _review(game)
    section = page.split('class="card unmoved-card"', 1)[1].split("</section>", 1)[0]
    assert "What moved nothing, and why" in section
    assert f"“{NONSENSE}”" in section and f"“{FALSE_OFFER}”" in section
    assert section.count("<li data-why=") == len(found["unmoved"])  # type: ignore[arg-type]


@pytest.mark.parametrize(("role", "human", "seed"), [("CAN", "advocate", 7), ("USA", "advocate", 3)])
def test_whole_bot_games_agree_with_their_records(role: str, human: str, seed: int) -> None:
    found = _check_against_records(played(role, human=human, seed=seed))
    for item in found["unmoved"]:  # type: ignore[attr-defined]
        assert item.reason and item.where and item.quote
