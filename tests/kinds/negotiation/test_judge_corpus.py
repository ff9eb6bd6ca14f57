"""The rule judge on its labelled corpus: at least 97 % of sentences read right, and no reading kind below its floor.

The report prints in a normal run (`pytest tests/kinds/negotiation/test_judge_corpus.py`), so a change to the judge shows what
it gained or lost per kind and per sentence family.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
import yaml

from simulations.kinds.negotiation import judge, judge_score, reading
from simulations.kinds.negotiation.scenario import Scenario
from tests.conftest import SCENARIO_DIR

OVERALL = 0.97
# Plain-word sentences (family `plain`: no keyword of the scenario, the student's own words) are held to the same
# standard as the whole corpus.
FAMILY_FLOORS = {"plain": 0.97}
# Each kind a little under what the rules reach today (support 95.5, oppose 97.1, conditional 96.3, offers 96.4,
# asks and trades 100; the same with the reading by meaning, similarity.py, and without it): a judge change that
# costs one of them several sentences fails here even if the total holds.
FLOORS = {"support": 0.93, "oppose": 0.95, "conditional": 0.93, "offers": 0.96, "asks": 0.96, "trades": 0.99}


@pytest.fixture(scope="module")
def corpus() -> list[judge_score.Item]:
    return judge_score.load_corpus()


def _rules(scenario: Scenario) -> judge_score.Callable[[judge_score.Item], judge.Signals | None]:
    def read(item: judge_score.Item) -> judge.Signals | None:
        # Read as a student's words: the rules, then (where they know no word of a sentence) by meaning.
        return judge.read_signals(scenario, item.text, speaker=item.speaker, issue=item.issue, meaning=True)

    return read


def test_the_rule_judge_reads_the_corpus(
    scenario: Scenario, corpus: list[judge_score.Item], capsys: pytest.CaptureFixture[str]
) -> None:
    result = judge_score.score(corpus, _rules(scenario))
    plain = judge_score.score([item for item in corpus if item.family == "plain"], _rules(scenario))
    with capsys.disabled():
        print("\n" + judge_score.report(result, title="rule judge on the corpus", misses=len(result.misses)))
        print(judge_score.report(plain, title="rule judge on the plain-word family alone"))
    assert result.overall >= OVERALL, f"{result.overall:.1%} of the corpus read right, below {OVERALL:.0%}"
    low = {
        k: round(result.kind_accuracy(k), 3) for k, floor in FLOORS.items() if result.kind_accuracy(k) < floor
    }
    assert not low, f"reading kinds below their floor: {low}"
    families = {f: right / seen for f, (right, seen) in result.families.items()}
    low_families = {f: round(families[f], 3) for f, floor in FAMILY_FLOORS.items() if families[f] < floor}
    assert not low_families, f"sentence families below their floor: {low_families}"


def test_the_corpus_is_large_and_covers_every_family(corpus: list[judge_score.Item]) -> None:
    families = Counter(item.family for item in corpus)
    assert len(corpus) >= 400
    for family in ("argument", "talk", "writer", "paraphrase", "negation", "heard", "conditional", "trade",
                   "offer", "ask", "concession", "mixed", "other_issue", "report", "question"):  # fmt: skip
        assert families[family] >= 4, family
    assert families["plain"] >= 120
    contexts = {(item.text, item.speaker, item.issue) for item in corpus}
    assert len(contexts) == len(corpus), "a sentence appears twice in the same context"


def test_every_argument_line_of_the_scenario_is_in_the_corpus(corpus: list[judge_score.Item]) -> None:
    """So a line added to a role's arguments is labelled before the judge is trusted with it."""
    labelled = {(item.speaker, item.issue, item.text) for item in corpus if item.family == "argument"}
    lines = set()
    for path in sorted((SCENARIO_DIR / "roles").glob("*.yaml")):
        role = yaml.safe_load(path.read_text(encoding="utf-8"))
        for issue, sides in role["arguments"].items():
            for by_option in sides.values():
                lines |= {(role["id"], str(issue), line) for texts in by_option.values() for line in texts}
    assert lines - labelled == set()


def test_plain_sentences_use_none_of_the_scenarios_keywords(
    scenario: Scenario, corpus: list[judge_score.Item]
) -> None:
    """A `plain` sentence must be read by the options' and offers' cues, not by their keywords, labels or ids."""
    assert_plain(scenario, [item.text for item in corpus if item.family == "plain"])


def assert_plain(scenario: Scenario, texts: list[str]) -> None:
    names = [(o.id, [o.label, *o.keywords]) for i in scenario.issues for o in i.options]
    names += [(o.id, [o.label, *o.keywords]) for o in scenario.offers]
    patterns = [(oid, word, reading.phrase_pattern(word)) for oid, words in names for word in words]
    used = []
    for text in texts:
        lowered = text.lower()
        used += [(text, word) for _, word, pattern in patterns if pattern.search(lowered)]
        used += [(text, oid) for oid, _ in names if re.search(rf"(?<![\d.]){re.escape(oid)}(?!\d)", lowered)]
    assert not used, used


def test_every_option_and_offer_is_read_in_plain_words(
    scenario: Scenario, corpus: list[judge_score.Item]
) -> None:
    """The `plain` family names every option (backed or opposed) and every offer (offered and asked for)."""
    plain = [item for item in corpus if item.family == "plain"]
    options = {
        o.split(":")[1]
        for item in plain
        for k in ("support", "oppose", "conditional")
        for o in item.expect[k]
    }
    assert options == {o.id for i in scenario.issues for o in i.options}
    for kind in ("offers", "asks"):
        assert {o for item in plain for o in item.expect[kind]} == {o.id for o in scenario.offers}, kind
    assert any(item.expect["trades"] for item in plain)


def test_no_sentence_is_read_the_wrong_way_round(scenario: Scenario, corpus: list[judge_score.Item]) -> None:
    """The misreading the corpus was built against (35 % of the scenario's "oppose" lines used to read as support):
    an option the speaker argues against read as backed, or the reverse. Four argument lines still are (evaluations
    the lexicon weighs wrongly, e.g. "the least we owe the miners ... being poisoned"); never more."""
    inverted = []
    for item in corpus:
        got = judge_score.as_read(item, _rules(scenario)(item))
        backed = got["support"] | got["conditional"]
        if (
            item.expect["oppose"] & backed
            or (item.expect["support"] | item.expect["conditional"]) & got["oppose"]
        ):
            inverted.append(item.text)
    assert len(inverted) <= 4, inverted


@pytest.mark.parametrize(
    ("text", "speaker", "issue", "support", "oppose"),
    [
        ("We support 4.2 and oppose 4.1.", "USA", "4", ["4.2"], ["4.1"]),
        ("We have heard Canada on emissions in scope.", "CHN", "2", [], []),
        ("Canada supports 2.1.", "USA", "2", [], []),
        ("Canada supports 2.1.", "CAN", "2", ["2.1"], []),
        ("We support a legally binding instrument and emissions in scope.", "USA", "2", ["2.1"], []),
    ],
)
def test_what_the_issue_named_as_misread_now_reads(
    scenario: Scenario, text: str, speaker: str, issue: str, support: list[str], oppose: list[str]
) -> None:
    signals = judge.read_signals(scenario, text, speaker=speaker, issue=issue)
    assert signals.support.get(issue, []) == support
    assert signals.oppose.get(issue, []) == oppose
    assert set(signals.support) <= {issue} and set(signals.oppose) <= {issue}


def test_read_signals_still_takes_only_scenario_and_text(scenario: Scenario) -> None:
    """Callers that know neither speaker nor issue keep working: every issue is read, a named subject counts."""
    signals = judge.read_signals(scenario, "We support 1.1. On products, Brazil supports 3.2.")
    assert signals.support == {"1": ["1.1"], "3": ["3.2"]}
