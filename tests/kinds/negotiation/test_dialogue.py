"""Students are understood: whole games on the pure engine with scripted students, checking that the offline
delegations answer what was actually said (questions, greetings, insults, off-topic remarks, offers in other
words), say when they did not understand, cool after an insult, and keep what they conceded.

Replies are checked by what the judge reads in them (positions, trades, questions) or by what they must not
contain, not against the writer's own templates.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from simulations.kinds.negotiation import dialogue, judge, reading
from simulations.kinds.negotiation.bots import Advocate, Passive, Script, Scripted
from simulations.kinds.negotiation.machine import Entry
from simulations.kinds.negotiation.scenario import Scenario
from tests.kinds.negotiation.driver import PureGame, new_pure_game
from tests.kinds.negotiation.test_similarity import needs_model

STUDENT = "USA"
SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _play(
    scenario: Scenario, talks: list[dict[str, Any]], issues: dict[str, Any] | None = None, seed: int = 4
):
    script = Script.model_validate({"talks": talks, "issues": issues or {}})
    return new_pure_game(scenario, seed).play(Scripted(STUDENT, script))


def _talk(game: PureGame, partner: str) -> list[Entry]:
    return [e for e in game.entries if e.kind == "message" and set(e.audience) == {STUDENT, partner}]


def _pairs(game: PureGame, partner: str) -> list[tuple[Entry, Entry]]:
    """(student message, the partner's answer to it) in one talk."""
    talk = _talk(game, partner)
    return [
        (said, talk[n + 1])
        for n, said in enumerate(talk[:-1])
        if said.speaker == STUDENT and talk[n + 1].speaker == partner
    ]


def _changes_caused_by(game: PureGame, seqs: set[int]) -> list[judge.StanceChange]:
    return [c for o in game.outcomes for c in o.stance_changes if c.cause_seq in seqs]


def _read(scenario: Scenario, entry: Entry) -> judge.Signals:
    return judge.read_signals(scenario, entry.text, speaker=entry.speaker)


# --- dialogue acts, read on their own -------------------------------------------------------------------------


def test_dialogue_acts_are_read_from_the_words(scenario: Scenario) -> None:
    acts = dialogue.read_acts(scenario, "Hello! What is the capital of Australia?")
    assert (
        acts.greeting
        and acts.off_topic_questions == ["What is the capital of Australia?"]
        and not acts.on_topic
    )
    assert dialogue.read_acts(scenario, "The delegates of China are liars and fools.").hostile == [
        "liars",
        "fools",
    ]
    on = dialogue.read_acts(scenario, "What is your view on artisanal gold mining?")
    assert on.on_topic and not on.off_topic_questions and on.issues_named == ["4"]
    assert dialogue.offers_alluded(scenario, "We can share our know-how and technology.") == [
        "technology_transfer"
    ]
    # Disagreement with a proposal is not hostility toward people.
    assert not dialogue.is_hostile("Voluntary measures would be a grave mistake and we reject them firmly.")


# --- off-topic and unreadable messages -------------------------------------------------------------------------

OFF_TOPIC = [
    "What is the capital of Australia?",
    "The weather in this city has been lovely all week.",
    "Did you watch the football match last night?",
    "I had a very good breakfast at the hotel.",
    "Which restaurant would you recommend around here?",
    "Our flight home leaves on Friday evening.",
]


@pytest.fixture(scope="module")
def off_topic_game(scenario: Scenario) -> PureGame:
    return _play(scenario, [{"partner": "CHN", "starter": "human", "messages": OFF_TOPIC}])


def test_an_off_topic_student_moves_nothing_and_is_told_so(
    scenario: Scenario, off_topic_game: PureGame
) -> None:
    talk = _talk(off_topic_game, "CHN")
    student = {e.seq for e in talk if e.speaker == STUDENT}
    assert len(student) == len(OFF_TOPIC)
    assert _changes_caused_by(off_topic_game, student) == []
    assert not [c for c in off_topic_game.state.commitments if c.by == STUDENT]
    for said, answer in _pairs(off_topic_game, "CHN"):
        first = SENTENCE.split(answer.text)[0]
        # The first thing China says is about the student's message, not a stock position statement ...
        assert not _read(scenario, replace(answer, text=first)).support, (said.text, answer.text)
        # ... and it does not pretend the message was an answer or a question about the issues.
        assert not re.search(r"answer to your question|answer is|thank you for", first, re.I), first
        # It says the remark is not what the talks are about.
        assert re.search(r"outside|not (something|a question)|to do with", first, re.I), (said.text, first)


def test_an_unreadable_message_on_an_issue_gets_asked_what_it_means(scenario: Scenario) -> None:
    game = _play(
        scenario,
        [
            {
                "partner": "CHN",
                "starter": "human",
                "messages": [
                    "Let us talk about mercury-added products and processes.",
                    "We are ready to share our know-how and technology with you.",
                ],
            }
        ],
    )
    pairs = _pairs(game, "CHN")
    products, tech = pairs[0][1].text, pairs[1][1].text
    # A named issue with no position read on it (nor ever stated by the student): China asks which way the
    # student leans on it.
    assert "3" not in products_stated(game)
    assert any(s.endswith("?") and "products" in s.lower() for s in SENTENCE.split(products)), products
    # An offer in other words: China takes it as an offer if the judge read one, else asks whether it is one;
    # either way it does not repeat its demand for it.
    offered = "technology_transfer" in _read(scenario, pairs[1][0]).offers
    questions = [s for s in SENTENCE.split(tech) if s.endswith("?")]
    assert offered or any("technology" in q for q in questions), tech
    assert "technology_transfer" not in _read(scenario, pairs[1][1]).asks, tech


def products_stated(game: PureGame) -> dict[str, str]:
    return game.state.stated.get(STUDENT, {})


# --- questions -------------------------------------------------------------------------------------------------


def test_questions_get_answers(scenario: Scenario) -> None:
    game = _play(
        scenario,
        [
            {
                "partner": "EU",
                "starter": "human",
                "messages": [
                    "What is your view on artisanal and small-scale gold mining?",
                    "Will you support emissions in scope (2.1)?",
                    "What is the capital of Australia?",
                ],
            }
        ],
    )
    pairs = _pairs(game, "EU")
    mining, emissions, capital = (a for _, a in pairs[:3])
    assert _read(scenario, mining).support.get("4"), mining.text  # a position on the issue it was asked about
    said = _read(scenario, emissions)
    assert "2.1" in said.support.get("2", []) + said.oppose.get("2", []) + said.conditional.get("2", [])
    first = SENTENCE.split(capital.text)[0]
    assert "?" not in first and not _read(scenario, replace(capital, text=first)).support, first


def test_a_courtesy_that_proposes_nothing_is_not_asked_what_it_means(scenario: Scenario) -> None:
    closing = "We hear you. Let us keep this channel open as the debate unfolds in plenary."
    game = _play(scenario, [{"partner": "EU", "starter": "human", "messages": [closing]}])
    (_, answer), *_ = _pairs(game, "EU")
    assert not re.search(r"not sure what you|could not find a position", answer.text, re.I), answer.text
    assert dialogue.read_acts(scenario, closing).acknowledges
    assert not dialogue.read_acts(scenario, "We support 2.1 and ask for financing.").acknowledges


def test_a_position_said_once_in_a_talk_is_not_restated_in_every_reply(scenario: Scenario) -> None:
    """A partner who is asked nothing new moves on to its other issues and reasons instead of repeating itself."""
    listening = ["Good morning.", "Tell us more about your thinking.", "We are listening.", "Go on, please."]
    game = _play(scenario, [{"partner": "EU", "starter": "human", "messages": listening}])
    replies = [a for _, a in _pairs(game, "EU")][
        : len(listening)
    ]  # the student's own lines, not the bot's after
    assert len(replies) == len(listening)
    backed = Counter(o for r in replies for opts in _read(scenario, r).support.values() for o in opts)
    assert backed and max(backed.values()) == 1, backed
    assert len(backed) >= 3, backed  # it went on to its other issues


def test_backing_on_terms_in_plain_words_is_taken_note_of_and_never_asked_for_again(
    scenario: Scenario,
) -> None:
    terms = (
        "If the Union can send people to train our inspectors, we will back your push to control the smoke "
        "from coal plants."
    )
    game = _play(
        scenario, [{"partner": "EU", "starter": "human", "messages": [terms, "We are listening.", "Go on."]}]
    )
    replies = [a for _, a in _pairs(game, "EU")]
    assert "2.1" in replies[0].text, replies[0].text  # taken note of, by the option read by meaning
    asked = [q for r in replies for q in SENTENCE.split(r.text) if q.endswith("?") and "2.1" in q]
    assert not asked, asked


def test_asked_what_it_wants_in_return_a_partner_names_its_price(scenario: Scenario) -> None:
    game = _play(
        scenario,
        [{"partner": "EU", "starter": "human", "messages": ["What would the Union want from us in return?"]}],
    )
    (_, answer), *_ = _pairs(game, "EU")
    price = next(s for s in SENTENCE.split(answer.text) if re.search(r"in return", s, re.I))
    wanted = re.findall(r"\((\d\.\d)\)", price)
    preferred = {i: s.preferred for i, s in game.state.stances["EU"].items()}
    assert wanted and wanted[0] in preferred.values(), answer.text
    assert dialogue.asks_price("What would it take for China to move?")
    assert not dialogue.asks_price("What is your view on artisanal gold mining?")


def test_asked_what_matters_most_a_partner_names_the_issue_it_holds_firmest(scenario: Scenario) -> None:
    game = _play(
        scenario,
        [
            {
                "partner": "CHN",
                "starter": "human",
                "messages": ["What is your main concern in this negotiation?"],
            }
        ],
    )
    (_, answer), *_ = _pairs(game, "CHN")
    first = next(s for s in SENTENCE.split(answer.text) if re.search(r"matters most|cares about", s, re.I))
    stances = scenario.role("CHN").stances
    firmest = max(sorted(stances), key=lambda i: stances[i].firmness)
    assert scenario.issue(firmest).title.lower() in first.lower(), answer.text
    assert f"({game.state.stances['CHN'][firmest].preferred})" in first, answer.text
    assert "In answer to your question" not in answer.text
    assert dialogue.asks_priority("What matters most to the Union?")
    assert not dialogue.asks_priority("What would it take for China to move?")  # that asks the price


def test_an_offer_read_by_meaning_is_answered_as_an_offer(scenario: Scenario) -> None:
    """The partner reads the student's message as the engine did: an offer in words no cue lists is answered."""
    offer = "We'll make our cleaner industrial processes available to your engineers royalty-free."
    assert judge.read_signals(scenario, offer, speaker=STUDENT, meaning=True).offers == [
        "technology_transfer"
    ]
    game = _play(scenario, [{"partner": "CHN", "starter": "human", "messages": [offer]}])
    (_, answer), *_ = _pairs(game, "CHN")
    assert re.search(r"\boffer\b", SENTENCE.split(answer.text)[0], re.I), answer.text
    assert not re.search(r"are you offering|do we understand", answer.text, re.I), answer.text
    # "industrial processes" says what the offer is: no question about the products-and-processes issue.
    assert not re.search(r"where does your delegation stand|which way does", answer.text, re.I), answer.text


# --- hostility -------------------------------------------------------------------------------------------------

TRADE = "If you support emissions out of scope (2.2), we will support all products and processes (3.1)."
INSULT = "Frankly, the delegates of the European Union are liars and fools."


def _trade_game(scenario: Scenario, first: str) -> PureGame:
    return _play(
        scenario,
        [{"partner": "EU", "starter": "human", "messages": [first, TRADE]}],
        issues={"1": {"placement": "first", "speeches": [INSULT if "liars" in first else None]}},
    )


PLAIN_TRADE = (
    "If you stand with us on leaving factory smoke to each country's own laws, we will back phasing out every "
    "single mercury product and process."
)


@needs_model
def test_a_trade_in_plain_words_binds_like_one_in_the_scenarios_words(scenario: Scenario) -> None:
    """The same bargain as TRADE, in words no cue lists: the game records the student's promise, as it does for
    the scenario's words, and the partner does not ask what the student means."""
    game = _play(scenario, [{"partner": "EU", "starter": "human", "messages": [PLAIN_TRADE]}])
    assert [c for c in game.state.commitments if c.by == STUDENT and c.to == "EU" and c.in_return == "2.2"]
    (_, answer), *_ = _pairs(game, "EU")
    assert not re.search(r"are you offering|do we understand|what do you mean", answer.text, re.I), (
        answer.text
    )


def test_an_insulted_partner_refuses_the_trade_a_polite_student_gets(scenario: Scenario) -> None:
    polite = _trade_game(scenario, "Good morning. We hope to find common ground with the European Union.")
    rude = _trade_game(scenario, INSULT)
    took = [c for c in polite.state.commitments if c.by == STUDENT and c.to == "EU" and c.in_return == "2.2"]
    assert took, "the polite student's trade should stand"
    assert not [c for c in rude.state.commitments if c.by == STUDENT and c.to == "EU"]
    insulted, traded = (a for _, a in _pairs(rude, "EU")[:2])
    # The partner names the insult in its first words, and then refuses the bargain.
    assert re.search(r"insult|language|words like these", SENTENCE.split(insulted.text)[0], re.I), (
        insulted.text
    )
    assert not _read(scenario, traded).trades and "2.2" not in _read(scenario, traded).support.get("2", [])
    # Nothing warm about trust after an insult, to the end of the talk.
    for answer in [a for _, a in _pairs(rude, "EU")]:
        assert not re.search(r"\btrust\b|values this conversation|you are welcome", answer.text, re.I), (
            answer.text
        )


def test_the_chair_calls_an_insulting_speaker_to_order_and_nobody_agrees_with_it(scenario: Scenario) -> None:
    game = _trade_game(scenario, INSULT)
    speech = next(e for e in game.entries if e.kind == "speech" and e.speaker == STUDENT)
    after = [e for e in game.entries if e.seq > speech.seq]
    order = after[0]
    assert order.kind == "chair" and order.visibility == "public" and "United States" in order.text, order
    assert order.speaker == scenario.chair.id
    # No delegation endorses or praises the insulting speech (by name) in the rest of the debate on the issue.
    rest = [e for e in after if e.kind == "speech" and e.issue == speech.issue]
    assert rest
    for entry in rest:
        for sentence in SENTENCE.split(entry.text):
            if "United States" in sentence:
                assert not re.search(r"agree|shares? the view|strong case|welcome", sentence, re.I), sentence
    # A civil speech is not called to order.
    polite = _trade_game(scenario, "Good morning. We hope to find common ground with the European Union.")
    assert not any(
        e.kind == "chair" and re.search(r"\bto order\b|order, please", e.text, re.I) for e in polite.entries
    )


def test_harsh_words_about_a_proposal_are_disagreement_not_an_insult(scenario: Scenario) -> None:
    names = dialogue.names_pattern(scenario)
    for said in ("This proposal is pathetic.", "What a stupid idea.", "Canada's offer is frankly idiotic."):
        assert not dialogue.is_hostile(said, names), said
    for said in ("You are pathetic.", "China is stupid.", "What a pathetic little delegation.", "Pathetic!"):
        assert dialogue.is_hostile(said, names), said
    harsh = "Frankly, voluntary measures are a pathetic idea that would change nothing."
    game = _play(
        scenario,
        [{"partner": "EU", "starter": "human", "messages": [harsh, TRADE]}],
        issues={"1": {"placement": "first", "speeches": [harsh]}},
    )
    # The talk does not cool: the trade a polite student gets stands, and nobody is called to order.
    assert [c for c in game.state.commitments if c.by == STUDENT and c.to == "EU" and c.in_return == "2.2"]
    assert not any(
        e.kind == "chair" and re.search(r"\bto order\b|order, please", e.text, re.I) for e in game.entries
    )


# --- memory ----------------------------------------------------------------------------------------------------


def test_a_concession_made_in_a_talk_stands_to_the_end_of_the_game(scenario: Scenario) -> None:
    """China's condition on 1.1 is met by a financing offer; a trade and a question on 1.1 follow. China never
    opposes 1.1 again (in the talk or in debate) without saying why."""
    game = _play(
        scenario,
        [
            {
                "partner": "CHN",
                "starter": "human",
                "messages": [
                    "We are ready to offer a dedicated financial mechanism.",
                    "If you support a legally binding instrument (1.1), we will support an agreed list (3.2).",
                    "Can you accept a legally binding instrument (1.1)?",
                    "If you support a legally binding instrument (1.1), we will support emissions out of scope (2.2).",
                ],
            }
        ],
        issues={"1": {"placement": "first", "speeches": ["We support a legally binding instrument (1.1)."]}},
    )
    china = [e for e in game.entries if e.speaker == "CHN" and e.kind in ("message", "speech")]
    conceded = next(n for n, e in enumerate(china) if "1.1" in _read(scenario, e).support.get("1", []))
    for entry in china[conceded + 1 :]:
        said = _read(scenario, entry)
        assert "1.1" not in said.oppose.get("1", []), entry.text
        # Nor does it offer to trade for what it already accepts.
        assert not any(t.promise == "1.1" or t.want == "1.1" for t in said.trades), entry.text


def _asked_support(scenario: Scenario, entry: Entry) -> set[str]:
    """The options a message asks its listener to support (questions naming one option)."""
    out: set[str] = set()
    for sentence in SENTENCE.split(entry.text):
        if sentence.endswith("?") and re.search(r"\bsupport\b", sentence):
            out |= set(reading.named(scenario, sentence)[0])
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_nobody_asks_twice_for_what_was_granted_or_refused(scenario: Scenario, seed: int) -> None:
    for policy in (Passive(STUDENT), Advocate(STUDENT)):
        game = new_pure_game(scenario, seed).play(policy)
        for convo in game.state.round2.conversations:
            partner = convo.partner
            asked: set[str] = set()
            answered: dict[str, str] = {}  # issue -> what the student backed in this talk
            for entry in _talk(game, partner):
                if entry.speaker == STUDENT:
                    for issue, options in _read(scenario, entry).support.items():
                        answered[issue] = options[0]
                    continue
                for option in _asked_support(scenario, entry):
                    issue = option.split(".")[0]
                    assert option not in asked, f"{partner} asks twice for {option}: {entry.text}"
                    assert answered.get(issue) != option, f"{partner} asks for {option}, already granted"
                    asked.add(option)


# --- content, not connectives ----------------------------------------------------------------------------------


def _template(scenario: Scenario, sentence: str) -> str:
    """A sentence with delegation names, option and offer labels and option ids taken out: what is left is the
    form it shares with other sentences of the game."""
    for name in sorted((scenario.display_name(r) for r in scenario.role_ids), key=len, reverse=True):
        sentence = sentence.replace(name, "X")
    labels = {o.label for i in scenario.issues for o in i.options} | {o.label for o in scenario.offers}
    for label in sorted(labels, key=len, reverse=True):
        sentence = re.sub(re.escape(label), "O", sentence, flags=re.I)
    return re.sub(r"\(\d\.\d\)", "", sentence)


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_debate_speeches_are_content_not_stock_connectives(scenario: Scenario, seed: int) -> None:
    for policy in (Passive(STUDENT), Advocate(STUDENT)):
        game = new_pure_game(scenario, seed).play(policy)
        speeches = [e for e in game.entries if e.kind == "speech" and e.speaker != STUDENT]
        said = [s for e in speeches for s in SENTENCE.split(e.text) if s]
        forms: dict[str, int] = {}
        for sentence in said:
            forms[_template(scenario, sentence)] = forms.get(_template(scenario, sentence), 0) + 1
        stock = [s for s in said if forms[_template(scenario, s)] >= 3]
        assert len(stock) * 12 <= len(said), (policy.name, sorted({_template(scenario, s) for s in stock}))
        # Every concession in debate carries its reason in the same sentence.
        for entry in speeches:
            for sentence in SENTENCE.split(entry.text):
                said_here = judge.read_signals(scenario, sentence, speaker=entry.speaker, issue=entry.issue)
                backs = said_here.support.get(entry.issue or "", [])
                preferred = game.state.stances[entry.speaker][entry.issue or ""].preferred
                if re.search(r"can accept|could live with", sentence) and backs and backs[0] != preferred:
                    assert re.search(r"\b(since|because)\b|: ", sentence, re.I), sentence
