"""What orients a student in a game (#11): the progress line, the transcript's dividers, every issue's outcome, the
last vote's result before the next issue covers it, where drafts are kept; and refusals in the student's words."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from simulations.engine.errors import IllegalEvent, InvalidMove
from simulations.kinds.negotiation import presenters
from simulations.kinds.negotiation.bots import Passive
from simulations.kinds.negotiation.machine import Status
from simulations.kinds.negotiation.scenario import Scenario
from simulations.models import Game, TranscriptEntry
from simulations.services.ledger.turns import StaleTurn
from simulations.services.policy import student_errors
from tests.helpers import played
from tests.kinds.negotiation.driver import new_pure_game

# What whole games say and show, the same on any database: the embedded leg only (tests/conftest.py).
pytestmark = [pytest.mark.django_db, pytest.mark.content]


def test_the_progress_line_follows_a_whole_game(scenario: Scenario) -> None:
    game = new_pure_game(scenario, 3).play(Passive("USA"))
    lines: dict[str, set[str]] = {}
    for state in game.states:
        lines.setdefault(state.status, set()).add(presenters.orientation(scenario, state))
    assert all(
        line.startswith("Round 1 of 3 · Opening statement ")
        for line in lines[Status.ROUND_1_OPENING_STATEMENTS]
    )
    talks = len(game.state.round2.conversations)
    assert talks >= 1
    assert lines[Status.ROUND_2_CONVERSATION_ACTIVE] == {f"Round 2 of 3 · Private talk {n} of 2" for n in range(1, talks + 1)}  # fmt: skip
    issues = len(scenario.issues)
    assert lines[Status.ISSUE_DEBATE_ROUND_1] == {f"Round 3 of 3 · Issue {n} of {issues} · Debate round 1 of 2" for n in range(1, issues + 1)}  # fmt: skip
    assert lines[Status.ISSUE_VOTE] == {
        f"Round 3 of 3 · Issue {n} of {issues} · Vote" for n in range(1, issues + 1)
    }
    assert lines[Status.REVIEW] == {""}


def test_outcomes_and_the_result_shown_before_the_next_issue(scenario: Scenario) -> None:
    game = new_pure_game(scenario, 3).play(Passive("USA"))
    seen_results: list[tuple[int, str]] = []
    for state in game.states:
        rows = presenters.outcomes(scenario, state)
        if state.status.startswith(("ROUND_1", "ROUND_2")) or not state.round3.issues:
            assert rows == []
            continue
        assert [r["number"] for r in rows] == list(range(1, len(scenario.issues) + 1))
        assert sum(r["result"] == "open" for r in rows) <= 1
        decided = presenters.just_decided(rows, state)
        if state.status == Status.ISSUE_INTRO and state.round3.active_issue_index > 0:
            # The vote just closed is shown while the next issue is introduced: the previous one, with its count.
            assert decided is not None and decided["number"] == state.round3.active_issue_index
            seen_results.append((decided["number"], decided["result"]))
        if state.status.startswith("ISSUE_DEBATE"):
            assert decided is None  # once the debate runs, the result has had its moment
    final = presenters.outcomes(scenario, game.state)
    assert all(r["result"] in ("adopted", "rejected") for r in final)
    for row, issue_state in zip(final, game.state.round3.issues, strict=True):
        assert (row["result"] == "adopted") is issue_state.adopted
        assert row["yes"] == sum(b == "yes" for b in issue_state.ballots.values())
        assert len(row["against"]) == row["voters"] - row["yes"]
    assert [n for n, _ in seen_results] == list(range(1, len(scenario.issues)))


def test_dividers_open_each_round_and_issue_once_also_in_partial_updates() -> None:
    game = played("USA", seed=4)
    entries = presenters.transcript(game)
    dividers = [e.divider for e in entries if e.divider]
    scenario = presenters.scenario_of_version(game.scenario)
    issues = len(scenario.issues)
    assert dividers == [
        presenters.ROUND_TITLES[1],
        presenters.ROUND_TITLES[2],
        *[f"Issue {n} of {issues} · {scenario.issues[n - 1].title}" for n in range(1, issues + 1)],
    ]
    # A websocket update carries the entries after the last one the page has: the same dividers, never repeated.
    # Also read as another seat, which does not see the USA's private talks: after one of those, the last entry
    # that seat saw can lie further back than the few entries read with the new ones.
    every = list(TranscriptEntry.objects.filter(game=game).order_by("seq").values_list("seq", flat=True))
    for seat in ("USA", "BRA"):
        game.human_role = seat
        by_seq = {e.seq: e.divider for e in presenters.transcript(game)}
        assert seat == "USA" or len(by_seq) < len(every)
        for since in every[::3]:
            assert {e.seq: e.divider for e in presenters.transcript(game, since_seq=since)} == {
                seq: divider for seq, divider in by_seq.items() if seq > since
            }


def test_drafts_are_kept_per_talk_and_per_debate_turn(scenario: Scenario) -> None:
    game = new_pure_game(scenario, 3).play(Passive("USA"))
    keys = {presenters.draft_key(s) for s in game.states}
    assert {f"talk-{n}" for n in range(1, len(game.state.round2.conversations) + 1)} <= keys
    assert {f"speech-{i.id}-{r}" for i in scenario.issues for r in (1, 2)} <= keys


def test_refusals_are_written_for_students() -> None:
    assert student_errors.for_student(StaleTurn()) == student_errors.ALREADY_PLAYED
    illegal = IllegalEvent("ISSUE_VOTE", "HUMAN_MESSAGE_SUBMITTED", [])
    assert student_errors.for_student(illegal) == student_errors.NOT_OPEN_NOW
    empty = InvalidMove("ROUND_2_CONVERSATION_ACTIVE", "HUMAN_MESSAGE_SUBMITTED", InvalidMove.EMPTY_TEXT)
    assert student_errors.for_student(empty) == "Your message is empty: write something, then send it."
    for reason in (InvalidMove.BAD_STATUS, InvalidMove.INCONSISTENT, "a reason nobody listed"):
        sentence = student_errors.for_student(InvalidMove("ISSUE_VOTE", "HUMAN_VOTE_CAST", reason))
        assert sentence == student_errors.GENERAL and "ISSUE_VOTE" not in sentence
    assert student_errors.failure_title("refused_connection") == "The model server could not be reached"
    assert student_errors.failure_title("something new") == "This turn could not be played"


def test_an_empty_message_is_refused_in_words_and_nothing_moves() -> None:
    from tests.helpers import game_in_private_talk

    owner = User.objects.create_user("talker", password="pw-123456789")
    client = Client()
    client.force_login(owner)
    game = game_in_private_talk(client, owner)
    response = client.post(
        f"/games/{game.pk}/move/",
        {"event": "HUMAN_MESSAGE_SUBMITTED", "text": "   ", "version": game.version},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 400  # a field to correct
    notice = response.content.decode().split('id="notice"', 1)[1]
    assert "Your message is empty" in notice and "HUMAN_MESSAGE_SUBMITTED" not in notice
    assert Game.objects.get(pk=game.pk).version == game.version


def test_the_lobby_names_the_seat() -> None:
    owner = User.objects.create_user("seated", password="pw-123456789")
    game = played("CAN", seed=2)
    Game.objects.filter(pk=game.pk).update(owner=owner)
    client = Client()
    client.force_login(owner)
    page = client.get("/").content.decode()
    assert '<td role="cell">Canada</td>' in page and ">CAN</td>" not in page


def test_without_javascript_a_refusal_reaches_the_game_page() -> None:
    from tests.helpers import game_in_private_talk

    owner = User.objects.create_user("plain", password="pw-123456789")
    client = Client()
    client.force_login(owner)
    game = game_in_private_talk(client, owner)
    form = {"event": "HUMAN_MESSAGE_SUBMITTED", "text": "We back 2.1.", "version": game.version - 1}
    page = client.post(f"/games/{game.pk}/move/", form, follow=True).content.decode()
    assert student_errors.ALREADY_PLAYED.split(" —")[0] in page
    assert Game.objects.get(pk=game.pk).version == game.version
