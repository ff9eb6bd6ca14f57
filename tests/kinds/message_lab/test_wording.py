"""What a person reads of a Message Lab run (words.py, presenters.py, the templates and the Markdown report): the
machine's stages, statuses and events in words, never their ids or snake_case; a finished board that says it has
finished and sends the player to the report; the score chart with both axes titled and its key coloured by SVG
fills, never an inline style (the CSP blocks those)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from simulations.kinds.message_lab.games import state_of
from simulations.kinds.message_lab.machine import Event
from simulations.kinds.message_lab.state import ConceptStatus, RoundStage, SimulationStatus
from simulations.kinds.message_lab.words import PHASES, STATUS_WORDS, phase_label
from simulations.models import Game, ScenarioVersion
from simulations.services.play.drive import Outcome, drive_game
from tests.kinds.visible_text import names_in, visible

IDS = [*Event, *SimulationStatus, *RoundStage, *ConceptStatus]


def ids_in(text: str) -> list[str]:
    return names_in(text, IDS, snake=True)  # runner_up, output_ready, direct_response


def test_every_status_stage_and_phase_has_its_words() -> None:
    assert set(STATUS_WORDS) == set(ConceptStatus) and set(PHASES) == set(SimulationStatus)
    assert STATUS_WORDS[ConceptStatus.RUNNER_UP] == "runner-up"
    for phase in [*SimulationStatus, *RoundStage]:
        assert not ids_in(phase_label(phase)), phase


@pytest.fixture
def client(transactional_db: None) -> Client:
    c = Client()
    c.force_login(User.objects.create_user("copy-lead", password="a-long-test-passphrase-42"))
    return c


def test_a_finished_run_reads_in_words_and_sends_the_player_to_the_report(
    client: Client, lab_version: ScenarioVersion
) -> None:
    client.post(f"/message_lab/new/{lab_version.pk}/", {
        "brief": "darning-kit-launch", "rounds": 2, "gates": ["1"], "brief_text": "",
        "participants": ["direct_response", "storyteller", "skeptic"]})  # fmt: skip
    game = Game.objects.get()
    assert drive_game(game_id=game.pk, stream=False).outcome is Outcome.HUMAN
    game.refresh_from_db()
    gate = client.get(f"/games/{game.pk}/").content.decode()
    assert not ids_in(visible(gate)), ids_in(visible(gate))
    client.post(f"/games/{game.pk}/move/", {"version": game.version, "event": "GATE_DECIDED"})
    assert drive_game(game_id=game.pk, stream=False).outcome is Outcome.DONE
    game.refresh_from_db()
    st = state_of(game)
    assert st.status is SimulationStatus.OUTPUT_READY
    assert any(c.status is ConceptStatus.RUNNER_UP for c in st.concepts)  # the id the report once showed

    board = client.get(f"/games/{game.pk}/").content.decode()
    text = visible(board)
    assert not ids_in(text), ids_in(text)
    assert "The panel has finished" in text and "Read the final report next" in text
    assert "drafting" not in text and "is working" not in text and "Writing now" not in text
    assert 'data-action="done"' in board and 'data-status="OUTPUT_READY"' in board  # ids stay in attributes

    review = client.get(f"/games/{game.pk}/review/").content.decode()
    text = visible(review)
    assert not ids_in(text), ids_in(text)
    assert "Runner-up: " in text and "runner-up)" in text  # the section and the chart's key
    report = client.get(f"/games/{game.pk}/export.md").content.decode()
    assert not ids_in(report), ids_in(report)

    for html in (board, review):
        [chart] = re.findall(r'<svg class="score-chart".*?</svg>', html, re.S)
        titles = re.findall(r'class="axis-title [xy]-title"[^>]*>([^<]+)<', chart)
        assert titles == ["Round", "Score (1 to 10)"]
        [key] = re.findall(r'<ul class="legend">.*?</ul>', html, re.S)
        swatches = re.findall(r"<rect [^>]*>", key)
        assert len(swatches) == key.count("<li") >= 3
        assert all(re.search(r'fill="#[0-9a-f]{6}"', s) for s in swatches)
        assert "style=" not in chart + key
        assert not re.search(r"<[^>]+\sstyle=", html)  # nothing on the page the CSP's style-src would block
