"""The rule judge reads the second scenario's stance lines with that scenario's lexicon: its own labelled corpus
(tests/kinds/negotiation/plastics_judge_corpus.yaml) reads right at a high rate, and covers every argument line."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from simulations.kinds.negotiation import judge, judge_score
from simulations.kinds.negotiation.scenario import Scenario, load_scenario_dir
from tests.kinds.negotiation.plastics import PLASTICS_DIR
from tests.kinds.negotiation.test_judge_corpus import assert_plain

CORPUS = Path(__file__).resolve().parent / "plastics_judge_corpus.yaml"
OVERALL = 0.95


@pytest.fixture(scope="module")
def plastics() -> Scenario:
    return load_scenario_dir(PLASTICS_DIR)


@pytest.fixture(scope="module")
def corpus() -> list[judge_score.Item]:
    return judge_score.load_corpus(CORPUS)


def test_the_rule_judge_reads_the_plastics_corpus(
    plastics: Scenario, corpus: list[judge_score.Item], capsys: pytest.CaptureFixture[str]
) -> None:
    def read(item: judge_score.Item) -> judge.Signals | None:
        return judge.read_signals(plastics, item.text, speaker=item.speaker, issue=item.issue)

    result = judge_score.score(corpus, read)
    with capsys.disabled():
        print(
            "\n"
            + judge_score.report(result, title="rule judge on the plastics corpus", misses=len(result.misses))
        )
    assert result.overall >= OVERALL, (
        f"{result.overall:.1%} of the plastics corpus read right, below {OVERALL:.0%}"
    )
    for kind in ("support", "oppose", "conditional", "offers", "asks"):
        assert result.kind_accuracy(kind) >= 0.9, (kind, result.kind_accuracy(kind))
    right, seen = result.families["plain"]
    assert right / seen >= 0.95, f"plain-word sentences: {right}/{seen}"


def test_plain_sentences_use_none_of_the_scenarios_keywords(
    plastics: Scenario, corpus: list[judge_score.Item]
) -> None:
    plain = [item for item in corpus if item.family == "plain"]
    assert len(plain) >= 24
    assert_plain(plastics, [item.text for item in plain])


def test_the_corpus_is_large_and_covers_every_argument_line(
    plastics: Scenario, corpus: list[judge_score.Item]
) -> None:
    assert len(corpus) >= 60
    families = Counter(item.family for item in corpus)
    for family in ("argument", "paraphrase", "negation", "offer", "ask", "conditional", "trade", "report"):
        assert families[family] >= 1, family
    labelled = {(i.speaker, i.issue, i.text) for i in corpus if i.family == "argument"}
    lines = {
        (role.id, issue_id, text)
        for role in plastics.roles
        for issue_id, args in role.arguments.items()
        for per in (args.support, args.oppose)
        for texts in per.values()
        for text in texts
    }
    assert lines == labelled, f"argument lines without a reading: {sorted(lines - labelled)[:3]}"
