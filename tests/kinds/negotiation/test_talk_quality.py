"""The talk-quality detectors on small hand-made transcripts (each must fire where it should and only there), and
the `talk_quality` command on one whole offline game."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command

from simulations.kinds.negotiation import talk_quality as tq
from simulations.kinds.negotiation.scenario import Scenario
from simulations.models import Game
from tests.helpers import mercury_version

Line = tq.Line


def said(*texts: tuple[str, str], kind: str = "message") -> list[Line]:
    """Lines in transcript order: (speaker, text) pairs."""
    return [Line(n, speaker, kind, text) for n, (speaker, text) in enumerate(texts, start=1)]


def figures(scenario: Scenario, lines: list[Line], **kw: Any) -> tq.GameFigures:
    return tq.measure(scenario, lines, label="hand-made", **kw)


# --- template sentences and repeats -------------------------------------------------------------------------


def test_a_shape_shared_by_three_sentences_is_a_template(scenario: Scenario) -> None:
    lines = said(
        ("CAN", "Canada supports a legally binding instrument (1.1)."),
        ("CHN", "China supports voluntary measures (1.2)."),
        ("BRA", "Brazil supports emissions in scope (2.1)."),
        ("EU", "The European Union sees real merit in a binding treaty."),
    )
    found = figures(scenario, lines)
    assert (found.sentences, found.template) == (4, 3)
    assert found.template_examples == ["3x <name> supports <option> (<id>)."]


def test_two_sentences_of_one_shape_are_not_a_template(scenario: Scenario) -> None:
    lines = said(
        ("CAN", "Canada supports a legally binding instrument (1.1)."),
        ("CHN", "China supports voluntary measures (1.2)."),
        ("BRA", "Brazil has heard every delegation with care."),
    )
    assert figures(scenario, lines).template == 0


def test_a_student_is_not_measured(scenario: Scenario) -> None:
    lines = said(
        ("CAN", "Canada supports a legally binding instrument (1.1)."),
        ("CHN", "China supports voluntary measures (1.2)."),
        ("USA", "United States supports emissions in scope (2.1)."),
        ("USA", "United States supports emissions in scope (2.1)."),
    )
    found = figures(scenario, lines, students=["USA"])
    assert (found.sentences, found.template, found.repeats) == (2, 0, 0)
    measured = figures(scenario, lines)
    assert (measured.sentences, measured.template, measured.repeats) == (4, 4, 1)


def test_exact_repeats_count_each_repetition(scenario: Scenario) -> None:
    lines = said(
        ("CAN", "We thank the chair. Canada stands ready to work with everyone."),
        ("CHN", "We thank the chair."),
        ("CAN", "We thank the chair. Mercury knows no borders."),
    )
    found = figures(scenario, lines)
    assert found.repeats == 2 and found.repeated == ["We thank the chair.", "We thank the chair."]
    assert figures(scenario, said(("CAN", "We thank the chair."), ("CHN", "We thank you."))).repeats == 0


# --- self-contradictions and withdrawn concessions ---------------------------------------------------------


def test_backing_then_refusing_without_a_reason_is_a_contradiction(scenario: Scenario) -> None:
    lines = said(
        ("CAN", "Canada supports voluntary measures (1.2)."),
        ("CHN", "China wants a strong treaty."),
        ("CAN", "Canada cannot accept voluntary measures (1.2)."),
    )
    found = figures(scenario, lines)
    assert [(f.speaker, f.option, f.first_seq, f.then_seq) for f in found.contradictions] == [
        ("CAN", "1.2", 1, 3)
    ]
    assert found.withdrawals == []


def test_a_reversal_with_its_reason_is_no_contradiction(scenario: Scenario) -> None:
    in_the_sentence = said(
        ("CAN", "Canada supports voluntary measures (1.2)."),
        ("CAN", "Since no fund was offered, Canada cannot accept voluntary measures (1.2)."),
    )
    assert figures(scenario, in_the_sentence).contradictions == []
    in_between = said(
        ("CAN", "Canada supports voluntary measures (1.2)."),
        ("CAN", "Canada could accept voluntary measures (1.2) only if a dedicated fund were offered."),
        ("CAN", "Canada cannot accept voluntary measures (1.2)."),
    )
    assert figures(scenario, in_between).contradictions == []


def test_no_contradiction_across_seats_nor_from_refusal_to_backing(scenario: Scenario) -> None:
    other_seat = said(
        ("CAN", "Canada supports voluntary measures (1.2)."),
        ("CHN", "China cannot accept voluntary measures (1.2)."),
    )
    assert figures(scenario, other_seat).contradictions == []
    persuaded = said(
        ("CAN", "Canada cannot accept voluntary measures (1.2)."),
        ("CAN", "Canada supports voluntary measures (1.2)."),
    )
    assert figures(scenario, persuaded).contradictions == []


def test_an_evaluation_is_no_word_of_acceptance(scenario: Scenario) -> None:
    """The judge reads "useful work" of voluntary partnership as leaning to 1.2, but nobody said they accept it."""
    lines = said(
        (
            "CAN",
            "A decade of voluntary partnership has produced useful work, but it has not reduced the mercury.",
        ),
        ("CAN", "Canada cannot accept voluntary measures (1.2)."),
    )
    assert figures(scenario, lines).contradictions == []


def test_a_concession_then_a_no_vote_is_withdrawn(scenario: Scenario) -> None:
    lines = [
        Line(
            1,
            "CHN",
            "message",
            "For the sake of agreement, China can accept a legally binding instrument (1.1).",
        ),
        Line(2, "CHN", "vote", "China: NO.", "1", ballot="no", proposal="1.1"),
    ]
    found = figures(scenario, lines)
    assert [(f.speaker, f.option, f.then) for f in found.withdrawals] == [("CHN", "1.1", "votes NO")]
    assert found.contradictions == []
    kept = [lines[0], Line(2, "CHN", "vote", "China: YES.", "1", ballot="yes", proposal="1.1")]
    assert figures(scenario, kept).withdrawals == []


def test_a_concession_taken_back_in_words_is_withdrawn_not_contradicted(scenario: Scenario) -> None:
    lines = said(
        ("CHN", "China could live with a legally binding instrument (1.1)."),
        ("CHN", "China cannot accept a legally binding instrument (1.1)."),
    )
    found = figures(scenario, lines)
    assert [(f.option, f.first_seq, f.then_seq) for f in found.withdrawals] == [("1.1", 1, 2)]
    assert found.contradictions == []


def test_a_no_vote_after_plain_backing_or_a_stated_reason_is_no_withdrawal(scenario: Scenario) -> None:
    plain = [
        Line(1, "CHN", "message", "China supports a legally binding instrument (1.1)."),
        Line(2, "CHN", "vote", "China: NO.", "1", ballot="no", proposal="1.1"),
    ]
    assert figures(scenario, plain).withdrawals == []
    reasoned = [
        Line(1, "CHN", "message", "China can accept a legally binding instrument (1.1)."),
        Line(
            2,
            "CHN",
            "speech",
            "China can back a legally binding instrument (1.1) only if financing is offered.",
            "1",
        ),
        Line(3, "CHN", "vote", "China: NO.", "1", ballot="no", proposal="1.1"),
    ]
    assert figures(scenario, reasoned).withdrawals == []


# --- game facts ---------------------------------------------------------------------------------------------


def test_a_concession_without_a_reason_in_its_message_is_counted(scenario: Scenario) -> None:
    lines = said(
        ("CHN", "China can accept an agreed list (3.2)."),
        ("BRA", "Brazil can accept an agreed list (3.2), since the annex can grow as alternatives appear."),
        ("USA", "The offers on the table meet our condition. The United States can accept 4.2."),
        ("EU", "The European Union will not stand in the way of 4.2: a decision needs every country."),
        ("CAN", "Canada supports 1.1."),  # backing, not a concession
        ("TZA", "Tanzania can accept 2.1."),  # a student: not measured
    )
    found = figures(scenario, lines, students=["TZA"])
    assert (found.concessions, found.unreasoned) == (4, ["China can accept an agreed list (3.2)."])
    assert tq.totals([found, found]).unreasoned == 2


def test_lines_of_puts_each_ballot_at_its_vote_entry() -> None:
    state = {
        "round3": {"issues": [{"issue_id": "1", "proposal": "1.1", "ballots": {"CHN": "no", "BRA": "yes"}}]}
    }
    entries = [
        {"seq": 4, "speaker": "CHN", "kind": "speech", "text": "We support 1.2.", "issue": "1"},
        {"seq": 9, "speaker": "CHN", "kind": "vote", "text": "China: NO.", "issue": "1"},
    ]
    lines = tq.lines_of(entries, state)
    assert lines[1] == Line(9, "CHN", "vote", "China: NO.", "1", ballot="no", proposal="1.1")
    assert tq.proposals_of(state) == (("1", "1.1"),)


def test_totals_count_distinct_proposal_sets() -> None:
    games = [
        tq.GameFigures("a", sentences=10, template=5, proposals=(("1", "1.1"), ("2", "2.1"))),
        tq.GameFigures("b", sentences=10, template=1, proposals=(("1", "1.1"), ("2", "2.1"))),
        tq.GameFigures("c", sentences=20, template=0, proposals=(("1", "1.2"), ("2", "2.1"))),
    ]
    t = tq.totals(games)
    assert (t.games, t.sentences, t.template, t.proposal_sets) == (3, 40, 6, 2)
    assert t.template_share == pytest.approx(0.15)
    assert "distinct proposal sets: 2 of 3 games" in tq.report(games)


def test_proposals_resting_on_public_words_are_counted_and_marked() -> None:
    """An option set aside for another, a package, a blocker named: each issue counts once, by what the chair did
    that the count alone would not have done."""
    state = {
        "round3": {
            "issues": [
                {"issue_id": "1", "proposal": "1.1", "blockers": ["CHN"], "package": ["financing"]},
                {"issue_id": "2", "proposal": "2.1", "blockers": ["CHN"]},
                {"issue_id": "3", "proposal": "3.2"},
                {"issue_id": "4", "proposal": "4.2", "set_aside": "4.1", "blockers": ["TZA"]},
            ]
        }
    }
    followed = tq.followed_of(state)
    assert followed == (("1", "package"), ("2", "blocker"), ("4", "set aside"))
    games = [
        tq.GameFigures("a", proposals=tq.proposals_of(state), adopted=("4",), followed=followed),
        tq.GameFigures("b", proposals=(("1", "1.1"),)),
    ]
    t = tq.totals(games)
    assert (t.followed, t.followed_games) == (3, 1)
    report = tq.report(games)
    assert "1.1+ 2.1! 3.2 4.2*^" in report
    assert "proposals resting on what was said in public: 3 in 1 games" in report


# --- the command on a whole game ----------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_command_plays_offline_games_and_measures_them_again_the_same() -> None:
    mercury_version()
    out = io.StringIO()
    call_command(
        "talk_quality",
        "--roles",
        "MFF",
        "--bots",
        "advocate",
        "--seed",
        "3",
        stdout=out,
        stderr=io.StringIO(),
    )
    report = out.getvalue()
    game = Game.objects.get()
    assert game.phase == "REVIEW" and game.state["human_role"] == "MFF"
    assert "games: 1;" in report and "distinct proposal sets: 1 of 1 games" in report
    again = io.StringIO()
    call_command("talk_quality", "--games", str(game.pk), "--json", stdout=again)

    measured = json.loads(again.getvalue())
    assert measured["totals"]["games"] == 1 and measured["totals"]["sentences"] > 100
    assert f"AI sentences: {measured['totals']['sentences']}" in report
    assert measured["games"][0]["proposals"] == {
        i["issue_id"]: i["proposal"] for i in game.state["round3"]["issues"]
    }
    assert measured["games"][0]["followed"] == dict(tq.followed_of(game.state))
    assert measured["totals"]["followed"] == len(tq.followed_of(game.state))


def test_a_sentence_read_alone_does_not_overrule_its_message(scenario: Scenario) -> None:
    """Read alone, "agrees with Brazil that keeping emissions out of scope ..." leans to 2.1; the message as the game
    read it opposes 2.1. What the message says decides, so this is no contradiction."""
    text = (
        "China agrees with Brazil that keeping emissions out of scope avoids asking developing economies to "
        "retrofit industries they have only just built. We cannot accept emissions in scope (2.1), and China will "
        "not pretend otherwise."
    )
    lines = [Line(1, "CHN", "speech", text, "2")]
    assert figures(scenario, lines).contradictions == []
    later = [
        Line(1, "CHN", "speech", "China supports emissions in scope (2.1).", "2"),
        Line(2, "CHN", "speech", text, "2"),
    ]
    assert [f.option for f in figures(scenario, later).contradictions] == ["2.1"]
