"""What a student reads instead of ids and markup (wording.py, and where the pages and the Markdown use it): states
and branches by their words, a judge's explanation without ids or AND/OR, the end screen's sentence, a character's
`*stage directions*` as emphasis (escaped first) in HTML, plain while streaming, Markdown-safe in the export."""

from __future__ import annotations

import re

import pytest

from simulations.kinds.roleplay import machine, offline
from simulations.kinds.roleplay.document import MAX_EXCHANGES, RoleplayState
from simulations.kinds.roleplay.platform import KIND
from simulations.kinds.roleplay.presenters import Node, context, picture
from simulations.kinds.roleplay.report import judgment_line, quoted_staged, render_markdown
from simulations.kinds.roleplay.scenario import SCENARIO_ROOT, RoleplayScenario, load_file, validate_scenario
from simulations.kinds.roleplay.wording import (
    debrief,
    labels,
    outcome_sentence,
    plain,
    stage_html,
    words_of,
)

from .tiny import tiny

Move = tuple[str, dict[str, object]]
REPLY: Move = ("CHARACTER_REPLIED", {"text": "Hm."})


@pytest.fixture
def s() -> RoleplayScenario:
    return validate_scenario(tiny())


def cafe() -> RoleplayScenario:
    return load_file(SCENARIO_ROOT / "cafe-barista.json")[0]


def said(text: str) -> Move:
    return ("STUDENT_SPOKE", {"text": text})


def judged(target: str = "", explanation: str = "test") -> Move:
    return (
        "TRANSITION_JUDGED",
        {"is_transition": bool(target), "to_state": target, "explanation": explanation},
    )


def play(s: RoleplayScenario, *moves: Move) -> RoleplayState:
    state = machine.start(s, seed=3, username="Sam").state
    for event, payload in moves:
        state = machine.apply(s, state, event, payload).state
    return state


def each_turn(*targets: str) -> list[Move]:
    return [move for target in targets for move in (said("x"), judged(target), REPLY)]


def all_ids(s: RoleplayScenario) -> list[str]:
    return ["START", "SUCCESS", "FAIL", *s.states, *s.state_names()]


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("AcknowledgeFeelings", "Acknowledge feelings"),
        ("SendToBackOfQueue", "Send to back of queue"),
        ("AskAboutEUTariffs", "Ask about EU tariffs"),
        ("ask_about_band", "Ask about band"),
        ("Round2Offer", "Round 2 offer"),
        ("Apology", "Apology"),
    ],
)
def test_a_state_id_reads_as_words(name: str, words: str) -> None:
    assert words_of(name) == words


def test_every_id_a_student_can_meet_has_words_and_none_is_its_id() -> None:
    words = labels(cafe())
    assert words["EmpathyBranch"] == "Empathy" and words["AcknowledgeFeelings"] == "Acknowledge feelings"
    assert (words["START"], words["SUCCESS"], words["FAIL"]) == ("Start", "Goal reached", "Goal not reached")
    for file in SCENARIO_ROOT.glob("*.json"):
        scenario = load_file(file)[0]
        shown = labels(scenario)
        assert set(shown) == set(all_ids(scenario))
        assert not [w for w in shown.values() if re.search(r"[a-z][A-Z]|[A-Z]{3}", w)], file


def test_the_graph_draws_words_and_keeps_ids_only_for_scripts() -> None:
    scenario = cafe()
    p = picture(scenario, RoleplayState(seed=0, username="Sam"))
    by_name = {n.name: n for n in p["nodes"]}
    assert [w for _, w in by_name["AcknowledgeFeelings"].rows] == ["Acknowledge feelings"]
    assert [label for _, label in p["branches"]] == ["Empathy", "Remake", "Safety"]
    assert "Acknowledge feelings" in p["described"]["open now"]
    # A label too long for its box is set on two lines, split at the space nearest its middle.
    long = Node("DataDrivenConclusionForTheBoard", 0, 100, "ahead", "Data driven conclusion for the board")
    assert long.rows == [(116, "Data driven conclusion"), (129, "for the board")]


def test_a_judges_explanation_loses_its_ids_and_its_and_or(s: RoleplayScenario) -> None:
    state = play(s, *each_turn("Apology", "Remake", "Question"), said("Have a good trip!"))
    verdict = offline.judge(s, state)
    raw = str(verdict["explanation"])
    assert raw == "You said “good … trip”."  # the student's words, never the rule
    assert plain(raw, s) == raw
    model_said = "The student reached TakeOwnership AND PrioritizeOrder, so FAIL OR SendToBackOfQueue is out."
    assert plain(model_said, cafe()) == (
        "The student reached “Take ownership” and “Prioritize order”, so “Goal not reached” or "
        "“Send to back of queue” is out."
    )


def test_each_judgment_line_names_steps_by_their_words(s: RoleplayScenario) -> None:
    state = play(s, *each_turn("Apology", "Remake", "", "SUCCESS"))
    assert [judgment_line(s, j) for j in state.judgments] == [
        "Message 1: reached “Apology”",
        "Message 2: chose “Remake” (which closed “Excuse” for good)",
        "Message 3: no step reached",
        "Message 4: the goal was reached",
    ]


def test_the_end_says_how_it_ended_what_went_well_and_what_was_missing_never_the_condition(
    s: RoleplayScenario,
) -> None:
    success = debrief(s, play(s, *each_turn("Apology", "Remake", "Question", "SUCCESS")))
    assert success.why == "You reached the goal in 4 messages."
    assert (success.went_well, success.missing, success.set_back) == (
        ["Apology", "Remake", "Question"],
        [],
        [],
    )
    c = cafe()
    cafe_steps = ("AcknowledgeFeelings", "TakeOwnership", "OfferRemake", "PrioritizeOrder", "CheckDairy",
                  "UseCleanJug", "OfferGoodwill", "SUCCESS")  # fmt: skip
    told = debrief(c, play(c, *each_turn(*cafe_steps)))
    assert told.world == "Dana leaves happy"
    assert told.went_well[:2] == [c.spec("AcknowledgeFeelings").plain, c.spec("TakeOwnership").plain]
    half = debrief(c, play(c, *each_turn("OfferRemake", "SendToBackOfQueue", "FAIL")))
    assert half.world == "Dana walks out without her coffee"
    assert half.went_well == [c.spec("OfferRemake").plain]
    assert half.set_back == [c.spec("SendToBackOfQueue").plain]
    assert half.missing == [c.spec(n).plain for n in ("TakeOwnership", "PrioritizeOrder", "UseCleanJug",
                                                        "OfferGoodwill")]  # fmt: skip
    judged_fail = play(s, *each_turn("Apology", "Excuse", "FAIL"))
    assert outcome_sentence(s, judged_fail) == "Ada ended the conversation before the goal was reached."
    left = play(s, ("STUDENT_LEFT", {}), REPLY)
    assert outcome_sentence(s, left) == "You ended the conversation before reaching the goal."
    ran_out = play(s, *each_turn(*[""] * MAX_EXCHANGES))
    assert (
        outcome_sentence(s, ran_out)
        == f"The conversation ran to {MAX_EXCHANGES} messages without reaching the goal."
    )
    assert outcome_sentence(s, play(s, *each_turn("Apology"))) == ""  # still going


def test_what_the_pages_show_names_no_id(s: RoleplayScenario) -> None:
    state = play(s, *each_turn("Apology", "Remake", "Question"), said("Have a good trip!"))
    state = machine.apply(s, state, "TRANSITION_JUDGED", offline.judge(s, state)).state
    state = machine.apply(s, state, *REPLY).state
    shown = context(s, state)
    texts = [
        shown["goal"], shown["debrief"].why, *shown["debrief"].went_well, shown["outcome_words"],
        *(b.branch for b in shown["branches"]), *(st for b in shown["branches"] for st in b.states),
        *(j["line"] + " " + j["why"] for j in shown["judgments"]),
    ]  # fmt: skip
    assert shown["outcome_words"] == "Goal reached"
    assert [(b.branch, b.states) for b in shown["branches"]] == [
        ("Calm", ["Apology", "Remake"]),
        ("Info", ["Question"]),
    ]
    for text in texts:
        for name in ("SUCCESS", "FAIL", "START", "CalmBranch", "InfoBranch", " AND ", " OR "):
            assert name not in text, (name, text)
    markdown = render_markdown(s, state)
    for name in ("SUCCESS", "FAIL", "CalmBranch", "InfoBranch", " AND "):
        assert name not in markdown, name
    assert (
        "**Outcome:** Goal reached" in markdown and "## What went well\n\n- Apology\n- Remake\n" in markdown
    )


@pytest.mark.parametrize(
    ("text", "html"),
    [
        ("*sets the cup down* Hello.", "<em>sets the cup down</em> Hello."),
        ("That is **not** fine.", "That is <em>not</em> fine."),
        ("*<script>alert(1)</script>* & more", "<em>&lt;script&gt;alert(1)&lt;/script&gt;</em> &amp; more"),
        ('*says "no"*', "<em>says &quot;no&quot;</em>"),
        ("5 * 3 = 15", "5 * 3 = 15"),  # a lone asterisk is no direction
        ("* not * one", "* not * one"),  # nor one with space inside its marks
        ("*across\nlines*", "*across\nlines*"),
    ],
)
def test_stage_directions_become_emphasis_after_escaping(text: str, html: str) -> None:
    assert stage_html(text) == html


def test_the_conversation_and_the_end_brief_are_drawn_with_emphasis(s: RoleplayScenario) -> None:
    state = play(s, said("*bows* <b>hello</b>"))
    lines = context(s, state)["lines"]
    assert lines[0]["html"] == "<em>at the counter</em> This is not the tea I ordered."
    assert lines[1]["html"] == "<em>bows</em> &lt;b&gt;hello&lt;/b&gt;"


def test_a_streaming_reply_shows_no_asterisks() -> None:
    assert KIND.stream_view("*sets the cup do") == "sets the cup do"


def test_the_markdown_keeps_emphasis_and_escapes_everything_else() -> None:
    assert quoted_staged("*at the counter* This is not_the tea.") == [
        "> *at the counter* This is not\\_the tea."
    ]
    assert quoted_staged("*<img src=x>* 5 * 3") == ["> *&lt;img src=x&gt;* 5 \\* 3"]
    assert quoted_staged("\ue000smuggled\ue000 # not a heading") == ["> smuggled # not a heading"]
    assert quoted_staged("*line one\n- line two*") == ["> \\*line one", "> \\- line two\\*"]
