"""A student who writes in plain words moves the delegations as one who uses the scenario's key phrases.

Two scripted students play the European Union in the same seeded game: one writes with the scenario's keywords
("a dedicated financial mechanism", "emissions in scope (2.1)"), the other says the same things in words of its
own, none of them a keyword, label or id of the scenario (checked below). The rule judge reads the second by the
options' and offers' cues; both games must then end with the same stances, the same ballots and the same
outcomes, and those must differ from a game where the student says nothing (so the messages did move someone).
"""

from __future__ import annotations

from typing import Any

import pytest

from simulations.kinds.negotiation import judge
from simulations.kinds.negotiation.bots import Passive, Script, Scripted
from simulations.kinds.negotiation.scenario import Scenario
from tests.kinds.negotiation.driver import PureGame, new_pure_game, outcomes_of
from tests.kinds.negotiation.test_judge_corpus import assert_plain

SEED = 7
ROLE = "EU"

# (keyword version, plain version), message by message.
TALK_CHINA = [
    (
        "We support emissions in scope (2.1).",
        "We want the treaty to regulate power stations and smelters.",
    ),
    (
        "We are ready to offer a dedicated financial mechanism and transfer of technology.",
        "We are prepared to put new money on the table, and we will hand over the designs for our scrubbers at cost.",
    ),
    (
        "We also offer a longer transition period for developing countries.",
        "We can also give developing countries a few extra years before the deadlines bite.",
    ),
]
TALK_TANZANIA = [
    (
        "We support national action plans for artisanal gold mining (4.1).",
        "We back a plan in each country for its gold miners, starting now.",
    ),
    (
        "The European Union will provide a dedicated financial mechanism for this.",
        "The European Union will bring the cash for it, new money reserved for the miners.",
    ),
]
SPEECHES = {
    "1": (
        "We support a legally binding instrument.",
        "We want a treaty with real teeth.",
    ),
    "2": (
        "We support emissions in scope, and we offer a dedicated financial mechanism.",
        "Power plants have to be in, and we will put new money on the table.",
    ),
    "3": (
        "We support all products and processes; we will offer exemptions for essential health uses.",
        "Ban every single thing with mercury in it; we will carve out an exception for vaccines.",
    ),
    "4": (
        "We support national action plans.",
        "Every country with gold miners should write its own plan to cut their mercury.",
    ),
}


def _script(plain: bool) -> Script:
    pick = 1 if plain else 0
    return Script.model_validate(
        {
            "role": ROLE,
            "talks": [
                {"partner": "CHN", "messages": [pair[pick] for pair in TALK_CHINA]},
                {"partner": "TZA", "messages": [pair[pick] for pair in TALK_TANZANIA]},
            ],
            "issues": {
                issue: {"placement": "skip", "speeches": [pair[pick]], "vote": "yes"}
                for issue, pair in SPEECHES.items()
            },
        }
    )


def _texts(plain: bool) -> list[str]:
    pick = 1 if plain else 0
    return [pair[pick] for pair in [*TALK_CHINA, *TALK_TANZANIA, *SPEECHES.values()]]


def _played(scenario: Scenario, policy: Passive) -> PureGame:
    return new_pure_game(scenario, SEED).play(policy)


def _moves(game: PureGame) -> dict[str, Any]:
    """What the student's words can change: every AI seat's stances, every ballot and every outcome."""
    st = game.state
    return {
        "stances": {
            role: {i: (s.preferred, sorted(s.acceptable)) for i, s in sorted(by_issue.items())}
            for role, by_issue in sorted(st.stances.items())
            if role != ROLE
        },
        "ballots": {i.issue_id: dict(sorted(i.ballots.items())) for i in st.round3.issues},
        "outcomes": outcomes_of(game),
    }


@pytest.fixture(scope="module")
def games(scenario: Scenario) -> dict[str, PureGame]:
    return {
        "keywords": _played(scenario, Scripted(ROLE, _script(plain=False))),
        "plain": _played(scenario, Scripted(ROLE, _script(plain=True))),
        "silent": _played(scenario, Passive(ROLE)),
    }


def test_the_plain_script_uses_none_of_the_scenarios_keywords(scenario: Scenario) -> None:
    assert_plain(scenario, _texts(plain=True))


def test_each_plain_message_reads_as_its_keyword_twin(scenario: Scenario) -> None:
    """Message by message, the rule judge reads the same positions, offers and asks in both versions."""
    for issue_of, pairs in ((None, TALK_CHINA + TALK_TANZANIA), *((i, [p]) for i, p in SPEECHES.items())):
        for keywords, plain in pairs:
            a = judge.read_signals(scenario, keywords, speaker=ROLE, issue=issue_of)
            b = judge.read_signals(scenario, plain, speaker=ROLE, issue=issue_of)
            assert a == b, (keywords, plain, a, b)


def test_plain_words_move_the_same_delegations_as_key_phrases(games: dict[str, PureGame]) -> None:
    keywords, plain, silent = (_moves(games[k]) for k in ("keywords", "plain", "silent"))
    moved = {role for role, by_issue in keywords["stances"].items() if by_issue != silent["stances"][role]}
    # China takes the money and the designs (its conditions on issues 1-3); who else moves is the engine's business.
    assert "CHN" in moved, "the scripted messages did not move the delegation they address"
    assert plain == keywords
