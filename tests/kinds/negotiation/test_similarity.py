"""Reading by meaning (simulations/kinds/negotiation/similarity.py, hooked into reading.py): sentences the rules
know no word of are matched to the scenario's options and offers by a sentence-embedding model, and the rules
still say which way the speaker leans. These sentences were written for this test in words that are none of the
scenario's keywords, and its cues read nothing in them either (the last test); the judge's corpus
(test_judge_corpus.py) checks that nothing the rules read has changed.

Needs the model's files (`make install`, as CI does); without them the reader keeps to its rules, which the last
test checks on a scenario of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from simulations.ai import embeddings
from simulations.kinds.negotiation import judge, reading, similarity
from simulations.kinds.negotiation.scenario import Scenario, load_scenario_dir
from tests.conftest import SCENARIO_DIR
from tests.kinds.negotiation.test_judge_corpus import assert_plain

needs_model = pytest.mark.skipif(
    not all((embeddings.directory() / name).is_file() for name in embeddings.FILES),
    reason="the embedding model is not installed (make install)",
)

# (text, what the speaker says): support/oppose name an option, offers/asks an offer.
READ_BY_MEANING = [
    ("Governments must answer to a legal body when they break their word.", "support", "1.1"),
    ("We cannot accept that governments answer to a legal body when they break their word.", "oppose", "1.1"),
    ("Factories that burn coal must clean up the vapour they release.", "support", "2.1"),
    ("We back a rule that factories burning coal must clean up the vapour they release.", "support", "2.1"),
    ("We cannot accept that industrial exhaust be regulated worldwide.", "oppose", "2.1"),
    ("Airborne pollution should stay with domestic regulators.", "support", "2.2"),
    ("We are against airborne pollution staying with domestic regulators.", "oppose", "2.2"),
    ("We will allow a gentler timeline for late starters.", "offers", "transition_period"),
    ("We ask for a gentler timeline for late starters.", "asks", "transition_period"),
]
# The topic alone ("the liquid metal"), the talk, or nothing of the negotiation: no option, no offer.
NAMES_NOTHING = [
    "Mercury is a dangerous metal.",
    "The liquid metal is poisoning our rivers.",
    "Thank you, Chair, for your patience.",
    "What is the capital of Australia?",
    "We have listened carefully to every delegation today.",
]


def test_the_sentences_use_none_of_the_scenarios_words(scenario: Scenario) -> None:
    assert_plain(scenario, [text for text, _, _ in READ_BY_MEANING] + NAMES_NOTHING)


@needs_model
@pytest.mark.parametrize(("text", "kind", "target"), READ_BY_MEANING)
def test_a_sentence_in_other_words_is_read_by_meaning(
    scenario: Scenario, text: str, kind: str, target: str
) -> None:
    signals = judge.read_signals(scenario, text, speaker="CAN", meaning=True)
    if kind in ("offers", "asks"):
        assert getattr(signals, kind) == [target], signals
        return
    issue = target.split(".")[0]
    said = {k: getattr(signals, k) for k in ("support", "oppose", "conditional") if getattr(signals, k)}
    assert said == {kind: {issue: [target]}}, signals


@needs_model
@pytest.mark.parametrize("text", NAMES_NOTHING)
def test_the_topic_or_the_talk_alone_names_no_option(scenario: Scenario, text: str) -> None:
    assert similarity.match(scenario, text) is None
    assert judge.read_signals(scenario, text, speaker="CAN", meaning=True).empty


@needs_model
@pytest.mark.parametrize(("text", "kind", "target"), READ_BY_MEANING[:3])
def test_only_a_students_words_are_read_by_meaning(
    scenario: Scenario, text: str, kind: str, target: str
) -> None:
    """The AI delegations speak the scenario's words, which the rules read: their messages never call the model."""
    assert judge.read_signals(scenario, text, speaker="CAN").empty


@needs_model
def test_what_the_rules_read_is_never_read_again_by_meaning(scenario: Scenario) -> None:
    """A sentence with a keyword keeps the rules' reading, whatever its other clauses would match."""
    text = "We support emissions in scope, and experts should survey the goldfields before anyone acts."
    signals = judge.read_signals(scenario, text, speaker="CAN", meaning=True)
    assert signals.support == {"2": ["2.1"]}
    assert not signals.oppose and not signals.conditional


# Debate speeches (speaker, issue under debate, text, side, option) that say neither which option nor which side in
# the scenario's words: the issue narrows the options, and where no word takes a side, the roles' arguments for
# and against the option do (`similarity.side`).
DEBATE_BY_MEANING = [
    ("AMAP", "2", "Smoke from coal furnaces crosses every border and lands on Arctic ice, so capitals cannot "
     "handle it alone.", "support", "2.1"),
    ("USA", "3", "What goes on shop shelves is a matter for buyers and home regulators.", "support", "3.3"),
    ("EU", "1", "A scheme where every capital just does as it pleases has let the Arctic down for twenty years.",
     "oppose", "1.2"),
]  # fmt: skip


def test_the_debate_sentences_use_none_of_the_scenarios_words(scenario: Scenario) -> None:
    assert_plain(scenario, [text for _, _, text, _, _ in DEBATE_BY_MEANING])


@needs_model
@pytest.mark.parametrize(("speaker", "issue", "text", "side", "option"), DEBATE_BY_MEANING)
def test_a_debate_speech_is_read_within_its_issue(
    scenario: Scenario, speaker: str, issue: str, text: str, side: str, option: str
) -> None:
    signals = judge.read_signals(scenario, text, speaker=speaker, issue=issue, meaning=True)
    said = {k: getattr(signals, k) for k in ("support", "oppose", "conditional") if getattr(signals, k)}
    assert said == {side: {issue: [option]}}, signals


@needs_model
def test_the_issue_under_debate_leaves_only_its_options_to_confuse(scenario: Scenario) -> None:
    text = DEBATE_BY_MEANING[0][2]
    assert similarity.match(scenario, text) is None  # among every issue's options: unsure
    found = similarity.match(scenario, text, "2")
    assert found is not None and found.target.id == "2.1"


@needs_model
def test_the_side_comes_from_the_roles_arguments_only_when_clear(scenario: Scenario) -> None:
    assert similarity.side(scenario, "Coal smoke drifting into the Arctic is what this accord exists to stop.",
                           "2.1") == "support"  # fmt: skip
    assert similarity.side(scenario, "Each capital deciding for itself has failed the Arctic for years.",
                           "1.2") == "oppose"  # fmt: skip
    # Near both sides' arguments alike: no side.
    assert (
        similarity.side(scenario, "Each capital should decide for itself what suits its people.", "1.2")
        is None
    )


@needs_model
def test_a_position_in_plain_words_beside_an_ask_is_read_on_its_terms(scenario: Scenario) -> None:
    """The rules read the ask in the condition; the position after it is in words of the student's own."""
    text = "If the Union can send people to train our inspectors, we will back your push to control the smoke from coal plants."
    signals = judge.read_signals(scenario, text, speaker="TZA", meaning=True)
    assert signals.conditional == {"2": ["2.1"]} and signals.asks == ["capacity_building"], signals
    # Without a verb that takes a side, what an offer sentence describes is what the offer is for.
    offer = "We are willing to share that equipment so that poorer parties can clean their coal plants."
    signals = judge.read_signals(scenario, offer, speaker="USA", meaning=True)
    assert not (signals.support or signals.oppose or signals.conditional), signals


def test_a_seat_is_known_by_its_other_names(scenario: Scenario) -> None:
    """`also_called`: a delegation naming itself by its capital or a short form makes its own offer; the same
    words from another seat report that delegation's offer and offer nothing."""
    union = "The Union is prepared to set up a dedicated fund so that poorer parties can afford the work."
    assert judge.read_signals(scenario, union, speaker="EU").offers == ["financing"]
    ottawa = "Ottawa is prepared to set up a dedicated fund so that poorer parties can afford the work."
    assert judge.read_signals(scenario, ottawa, speaker="CAN").offers == ["financing"]
    assert not judge.read_signals(scenario, ottawa, speaker="EU").offers


def test_a_name_that_is_also_a_word_needs_its_article(scenario: Scenario) -> None:
    """The United States is also called "the US": "us" alone is the pronoun, so a student's "a treaty that binds
    us" names no other seat and is read by meaning like any other clause."""
    usa = reading.lexicon(scenario).names["USA"]
    assert usa.search("the us will pay") and usa.search("washington agrees")
    assert not usa.search("give us time") and not usa.search("a treaty that binds us")


@pytest.fixture
def no_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Scenario]:
    """A fresh scenario (its memo starts empty) read on a checkout without the model's files."""
    monkeypatch.setenv(embeddings.DIRECTORY_ENV, str(tmp_path))
    embeddings.reset()
    yield load_scenario_dir(SCENARIO_DIR)
    monkeypatch.undo()
    embeddings.reset()


def test_without_the_model_the_rules_read_alone(no_model: Scenario) -> None:
    for text, _, _ in READ_BY_MEANING:
        assert similarity.match(no_model, text) is None
        assert judge.read_signals(no_model, text, speaker="CAN", meaning=True).empty, text
    plain = judge.read_signals(
        no_model, "Canada wants a treaty with real teeth.", speaker="CAN", meaning=True
    )
    assert plain.support == {"1": ["1.1"]}  # the rules' cues still read


# Terms of a condition in words of the student's own, matched among the offers alone; a condition that asks for
# nothing (the option's own terms: dates, deadlines) asks for no offer.
CONDITION_TERMS = [
    (
        "If someone helps us buy the cleaner machinery we cannot make at home, we can accept rules on coal plant "
        "emissions.",
        ["technology_transfer"],
    ),
    (
        "We can accept rules on coal plant emissions only if someone helps us buy the cleaner machinery we cannot "
        "make at home.",
        ["technology_transfer"],
    ),
    (
        "We could support controls on coal plant emissions, provided the wealthy nations pay the extra bills they "
        "bring.",
        ["financing"],
    ),
    ("We could accept controls on coal plant emissions, as long as the dates are realistic.", []),
]


@needs_model
@pytest.mark.parametrize(("text", "asks"), CONDITION_TERMS)
def test_the_terms_of_a_condition_are_read_by_meaning(scenario: Scenario, text: str, asks: list[str]) -> None:
    signals = judge.read_signals(scenario, text, speaker="TZA", issue="2", meaning=True)
    assert signals.conditional == {"2": ["2.1"]} and signals.asks == asks, signals
    # An AI delegation's words are read by the rules alone: no ask is read into them.
    assert judge.read_signals(scenario, text, speaker="TZA", issue="2").asks == [], text


# Plain-word forms the rules read (no model needed): a comparison, a doubted judgement, a bare contraction,
# and one option backed per issue in a sentence that also describes the option it turns from.
RULES_READ = [
    ("We are not at all convinced that controls on coal plant emissions are wise.", "oppose", "2.1"),
    # a comparison: the judgement is the first option's, and the other way for the one after "than"
    (
        "Each country deciding for itself works far better than a treaty with a compliance committee.",
        "oppose",
        "1.1",
    ),
    (
        "We are not convinced that controls on coal plant emissions are the right answer at this point.",
        "oppose",
        "2.1",
    ),
    ("we dont think it makes sense to leave coal plants out of the treaty", "oppose", "2.2"),
    (
        "We prefer to keep working through the voluntary partnership, growing what exists rather than tying every "
        "country into new duties under international law.",
        "support",
        "1.2",
    ),
]


@pytest.mark.parametrize(("text", "side", "option"), RULES_READ)
def test_doubts_bare_contractions_and_one_option_per_issue(
    scenario: Scenario, text: str, side: str, option: str
) -> None:
    signals = judge.read_signals(scenario, text, speaker="CHN")
    issue = option.split(".")[0]
    said = {"support": signals.support, "oppose": signals.oppose}
    assert said[side] == {issue: [option]}, signals
    assert not said["oppose" if side == "support" else "support"] and not signals.conditional, signals


# Trades whose halves are in words of the student's own, to a seat named in the listener's place or by name.
TRADES_BY_MEANING = [
    (
        "Brazil, side with us on keeping the whole thing voluntary and we will back your list of products with dates.",
        ("1.2", "3.2"),
    ),
    (
        "If China comes round on leaving factory smoke to each country's own laws, we will go along with your annex of products.",
        ("2.2", "3.2"),
    ),
]


@needs_model
@pytest.mark.parametrize(("text", "trade"), TRADES_BY_MEANING)
def test_a_trade_in_plain_words_is_read(scenario: Scenario, text: str, trade: tuple[str, str]) -> None:
    signals = judge.read_signals(scenario, text, speaker="CAN", meaning=True)
    assert [(t.want, t.promise) for t in signals.trades] == [trade], signals
    assert not (signals.support or signals.conditional), signals  # a trade says nothing else
    # The rules alone read no trade in it: an AI delegation's words are never read so.
    assert not judge.read_signals(scenario, text, speaker="CAN").trades


# A promise in the speaker's own voice, its deed in words of the student's own, read among the offers alone from
# its first words (the tail says for whom and where).
PROMISES = [
    (
        "Our companies are happy to hand over the blueprints of their filters to plants in poorer countries.",
        ["technology_transfer"],
    ),
    (
        "Our scientists will gladly coach your field officers in the villages, the rivers and the clinics.",
        ["capacity_building"],
    ),
    ("We will not hand over the blueprints of our filters.", []),
]


@needs_model
@pytest.mark.parametrize(("text", "offers"), PROMISES)
def test_a_promise_in_plain_words_is_an_offer(scenario: Scenario, text: str, offers: list[str]) -> None:
    signals = judge.read_signals(scenario, text, speaker="USA", meaning=True)
    assert signals.offers == offers and not signals.asks, signals
    assert not judge.read_signals(scenario, text, speaker="USA").offers  # the rules alone read none


@needs_model
def test_a_clause_that_says_in_or_out_names_the_option_that_goes_that_way(scenario: Scenario) -> None:
    """The model hears the subject (smoke from chimneys) more than the direction: "inside the treaty" named the
    option that keeps emissions out. Within an issue whose options' labels say "in scope" and "out of scope",
    the clause's own way decides between the two it cannot tell apart."""
    inside = similarity.match(scenario, "soot from chimneys belongs inside the treaty", "2")
    outside = similarity.match(scenario, "air pollution from smelters should be kept out of the deal", "2")
    assert inside is not None and inside.target.id == "2.1"
    assert outside is not None and outside.target.id == "2.2"
    # Issue 1's labels go neither way: its options are matched as before.
    assert similarity.match(scenario, "governments must answer to a legal body", "1").target.id == "1.1"  # type: ignore[union-attr]


@needs_model
def test_the_position_after_so_is_read_and_its_reason_weighs_no_side(scenario: Scenario) -> None:
    text = (
        "Children in the mining camps are being poisoned, so countries with small gold diggings should draw up "
        "plans to stop it."
    )
    signals = judge.read_signals(scenario, text, speaker="MFF", issue="4", meaning=True)
    assert signals.support == {"4": ["4.1"]} and not signals.oppose, signals


# Questions, with or without their mark, direct or indirect: who would give decides offer or ask.
QUESTIONS = [
    ("can we get some extra years before the deadlines bite", [], ["transition_period"]),
    ("Can we offer you extra years?", ["transition_period"], []),
    (
        "Could the rich countries tell us whether they will share their cleaner machines with us?",
        [],
        ["technology_transfer"],
    ),
]


@needs_model
@pytest.mark.parametrize(("text", "offers", "asks"), QUESTIONS)
def test_a_question_asks_or_offers_by_who_would_give(
    scenario: Scenario, text: str, offers: list[str], asks: list[str]
) -> None:
    signals = judge.read_signals(scenario, text, speaker="BRA", meaning=True)
    assert (signals.offers, signals.asks) == (offers, asks), signals


@needs_model
def test_plain_promises_questions_and_trades_a_student_writes(scenario: Scenario) -> None:
    """Forms found in the held-out batches, each in new words: an indirect question asks; agreeing that others
    get something gives it; "checks if" is no condition; a trade's partner may be "willing to" back its half."""

    def read(text: str) -> judge.Signals:
        return judge.read_signals(scenario, text, speaker="CAN", meaning=True)

    asked = read("We would like to know whether developing countries will get extra years.")
    assert (asked.offers, asked.asks) == ([], ["transition_period"]), asked
    granted = read("Canada will agree that poorer countries get more years to comply.")
    assert (granted.offers, granted.asks) == (["transition_period"], []), granted
    checks = read(
        "We want a convention that binds its parties, with a committee that checks if everyone keeps their word."
    )
    assert checks.support == {"1": ["1.1"]} and not checks.conditional, checks
    trade = read(
        "If China is willing to back an annex of products, we will go along with waiting for the gold mining study."
    )
    assert [(t.want, t.promise) for t in trade.trades] == [("3.2", "4.2")], trade
