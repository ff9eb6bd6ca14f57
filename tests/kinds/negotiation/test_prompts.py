"""Offline delegations negotiate: whole games played by the bots, every AI message read back by the judge.

Measured per game: exact-repeat AI sentences (at most 5 %), self-contradictions (an AI message backing two options
of one issue, or backing an option its seat does not accept at that moment), misattributions (a sentence naming
another delegation that claims something that delegation did not back in its own words) and off-issue debate
speeches. Over nine passive games: at least three distinct outcome patterns. And one scripted game in which the
student trades, offers, concedes and asks, with assertions on each answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from simulations.kinds.negotiation import judge
from simulations.kinds.negotiation.bots import Script, Scripted
from simulations.kinds.negotiation.games import scenario_of_version
from simulations.kinds.negotiation.headless import play_game
from simulations.kinds.negotiation.scenario import Scenario
from simulations.models import Checkpoint, Game, TranscriptEntry, Vote
from simulations.services.ledger.checkpoints import state_at
from simulations.services.ledger.turns import create_game
from tests.helpers import mercury_version, played

pytestmark = [pytest.mark.django_db, pytest.mark.content]  # what games say: the embedded leg only
REPEAT_LIMIT = 0.05
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_OPTION_ID = re.compile(r"(?<![\d.])(\d)\.(\d)(?![\d])")
# How a sentence naming another delegation may refer to it, by what it claims.
AGREEMENT = re.compile(r"\bagree|shares? the view|strong case")
DISAGREEMENT = re.compile(r"differently|not share|not persuaded|different view")
OFFER_CLAIM = re.compile(r"\boffer\b")
NEEDS_CLAIM = re.compile(r"\bneeds\b|bring it on board")
QUESTION_CLAIM = re.compile(r"\bquestion\b")
HELP_CLAIM = re.compile(r"better placed")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


@dataclass
class Audit:
    sentences: int = 0
    repeats: int = 0
    repeated: list[str] = field(default_factory=list)
    contradictions: list[str] = field(default_factory=list)
    misattributions: list[str] = field(default_factory=list)
    off_issue: list[str] = field(default_factory=list)

    @property
    def repeat_share(self) -> float:
        return self.repeats / max(1, self.sentences)


def _state_before(game: Game, seq: int) -> dict[str, Any]:
    checkpoint = Checkpoint.objects.filter(game=game, transcript_seq__lt=seq).order_by("-seq").first()
    assert checkpoint is not None
    return state_at(checkpoint)


def _stated(scenario: Scenario, said: list[TranscriptEntry], speaker: str, issue: str) -> str | None:
    """What `speaker` last backed on `issue` in its own words (one option), as the judge reads them."""
    found = None
    for entry in said:
        if entry.speaker == speaker:
            options = judge.read_signals(scenario, entry.text).support.get(issue, [])
            if len(options) == 1:
                found = options[0]
    return found


def audit(game: Game) -> Audit:
    scenario = scenario_of_version(game.scenario)
    human = game.state["human_role"]
    entries = list(TranscriptEntry.objects.filter(game=game).order_by("seq"))
    names = {scenario.display_name(r): r for r in scenario.role_ids}
    result, seen_sentences = Audit(), set()
    for n, entry in enumerate(entries):
        if entry.kind not in ("message", "speech") or entry.speaker in (human, scenario.chair.id):
            continue
        for sentence in sentences(entry.text):
            result.sentences += 1
            if sentence in seen_sentences:
                result.repeats += 1
                result.repeated.append(f"{entry.speaker}: {sentence}")
            seen_sentences.add(sentence)
        signals = judge.read_signals(scenario, entry.text)
        stance = _state_before(game, entry.seq)["stances"][entry.speaker]
        for issue, options in signals.support.items():
            if len(options) > 1 or any(o not in stance[issue]["acceptable"] for o in options):
                result.contradictions.append(f"{entry.seq} {entry.speaker} backs {options}: {entry.text}")
        for issue, options in signals.oppose.items():
            if stance[issue]["preferred"] in options:
                result.contradictions.append(f"{entry.seq} {entry.speaker} opposes its own {options}")
        for trade in signals.trades:
            promise_issue = trade.promise.split(".")[0]
            if trade.promise not in stance[promise_issue]["acceptable"]:
                result.contradictions.append(f"{entry.seq} {entry.speaker} promises {trade.promise}")
        visible = [e for e in entries[:n] if e.visibility == "public" or entry.speaker in e.audience]
        if entry.kind == "speech":
            issue = entry.issue
            others = {f"{a}.{b}" for a, b in _OPTION_ID.findall(entry.text)} - {
                o.id for o in scenario.issue(issue).options
            }
            named = {*signals.support, *signals.oppose, *signals.conditional} - {issue}
            if others or named:
                result.off_issue.append(f"{entry.seq} {entry.speaker} on {issue}: {sorted(others | named)}")
        own = signals.support.get(entry.issue, []) if entry.issue else []
        result.misattributions += _claims(scenario, visible, entry, names, own)
    return result


def _claims(
    scenario: Scenario,
    visible: list[TranscriptEntry],
    entry: TranscriptEntry,
    names: dict[str, str],
    own: list[str],
) -> list[str]:
    """Every sentence of an AI message naming another delegation, checked against that delegation's words (or,
    for who could give an offer, against the scenario's list of who can)."""
    wrong = []
    issue = entry.issue
    spoken = [e for e in visible if e.kind in ("opening", "message", "speech")]
    for sentence in sentences(entry.text):
        for name, role in names.items():
            if role == entry.speaker or name not in sentence:
                continue
            lowered = sentence.lower()
            theirs = _stated(scenario, spoken, role, issue)
            own_words = [judge.read_signals(scenario, e.text) for e in spoken if e.speaker == role]
            if DISAGREEMENT.search(lowered):
                ok = theirs is not None and own != [theirs]
            elif AGREEMENT.search(lowered):
                ok = theirs is not None and own == [theirs]
            elif OFFER_CLAIM.search(lowered):
                ok = any(judge.credible_offers(scenario, role, s) for s in own_words)
            elif NEEDS_CLAIM.search(lowered):
                ok = any(s.asks for s in own_words)
            elif HELP_CLAIM.search(lowered):  # "X may be better placed" to give what was asked for
                ok = any(
                    any(k.lower() in lowered for k in scenario.offer(o).keywords)
                    for o in scenario.role(role).can_offer
                )
            elif QUESTION_CLAIM.search(lowered):
                ok = any("?" in e.text for e in spoken if e.speaker == role and e.kind == "speech")
            else:
                ok = False  # a claim in a form this audit cannot check is a claim too many
            if not ok:
                wrong.append(
                    f"{entry.seq} {entry.speaker}: {sentence!r} ({role} stated {theirs}; own {own}) in {entry.text}"
                )
    return wrong


def _outcome(game: Game) -> tuple[tuple[str, bool], ...]:
    return tuple((v.proposal, v.adopted) for v in Vote.objects.filter(game=game).order_by("issue"))


def _assert_sound(game: Game) -> Audit:
    found = audit(game)
    assert found.sentences > 100
    assert found.repeat_share <= REPEAT_LIMIT, (found.repeats, found.sentences, found.repeated)
    assert found.contradictions == []
    assert found.misattributions == [], "\n".join(found.misattributions)
    assert found.off_issue == []
    return found


def test_passive_games_are_sound_and_differ_by_seed() -> None:
    """Nine games without an active student: AI seats pursue their own goals, so outcomes differ by seed."""
    patterns = set()
    shares = []
    for seed in range(1, 10):
        game = played("MFF", "passive", seed=seed)
        shares.append(_assert_sound(game).repeat_share)
        patterns.add(_outcome(game))
    print(
        f"repeat shares {[round(s, 3) for s in shares]}; {len(patterns)} outcome patterns: {sorted(patterns)}"
    )
    assert len(patterns) >= 3, patterns


def test_advocate_games_are_sound() -> None:
    for role, seed in (("USA", 4), ("CHN", 2), ("TZA", 9)):
        _assert_sound(played(role, "advocate", seed=seed))


SCRIPT = {
    "role": "USA",
    "talks": [
        {
            "partner": "CHN",
            "starter": "human",
            "messages": [
                "If you support emissions in scope (2.1), we will support an agreed list (3.2).",
                "We are ready to offer a dedicated financial mechanism.",
                "Will you support an agreed list (3.2)?",
                "We can accept out of scope pending assessment (4.2).",
                "We support a legally binding instrument (1.1).",
                "Thank you. We will keep our word in the plenary.",
            ],
        },
        {
            "partner": "EU",
            "starter": "human",
            "messages": [
                "If you support emissions out of scope (2.2), we will support all products and processes (3.1).",
                "If you support a legally binding instrument (1.1), we will support out of scope pending assessment (4.2).",
                "Can you offer capacity building and technical assistance?",
                "What is your view on the small-scale miners?",
                "We support all products and processes (3.1).",
                "Thank you. Let us meet again before the vote.",
            ],
        },
    ],
    "issues": {
        "1": {"placement": "first", "speeches": ["We support a legally binding instrument (1.1).", None]},
        "2": {"placement": "first", "speeches": ["Will China support emissions in scope (2.1)?"]},
        "3": {"placement": "first", "speeches": ["We support all products and processes (3.1)."]},
    },
}


def _replies(game: Game, partner: str) -> list[tuple[str, str]]:
    """(student message, the partner's next message) pairs of one private talk."""
    rows = list(TranscriptEntry.objects.filter(game=game, kind="message").order_by("seq"))
    pairs = []
    for n, row in enumerate(rows):
        if row.speaker == "USA" and partner in row.audience:
            answer = next((r for r in rows[n + 1 :] if r.speaker == partner), None)
            if answer is not None:
                pairs.append((row.text, answer.text))
    return pairs


def test_a_scripted_student_gets_an_answer_to_every_move() -> None:
    game = create_game(scenario_version=mercury_version(), seed=6)
    game = play_game(game_id=game.pk, policy=Scripted("USA", Script.model_validate(SCRIPT)))
    scenario = scenario_of_version(game.scenario)

    def read(text: str, speaker: str) -> judge.Signals:
        return judge.read_signals(
            scenario, text, speaker=speaker
        )  # as the engine reads the speaker's message

    china = _replies(game, "CHN")
    assert len(china) == 6
    # A trade asking for one of China's red lines: declined, naming it, with what would move China instead (the
    # reply may go on to China's own ask on another issue, so its asks hold at least these two).
    declined = read(china[0][1], "CHN")
    assert "2.1" in declined.oppose.get("2", []) and "2.1" not in declined.support.get("2", [])
    assert "2.1" in declined.conditional.get("2", []) and {"financing", "technology_transfer"} <= set(
        declined.asks
    )
    # An offer that meets China's condition on 1.1: acknowledged with the option it unlocks ...
    assert read(china[1][1], "CHN").support.get("1") == ["1.1"]
    # ... and the demand is never made again.
    later = [
        r.text
        for r in TranscriptEntry.objects.filter(game=game, speaker="CHN", kind__in=["message", "speech"])
    ]
    after_offer = later[later.index(china[1][1]) + 1 :]
    assert after_offer and not any("financing" in read(t, "CHN").asks for t in after_offer)
    # A question gets a yes for what China prefers.
    assert read(china[2][1], "CHN").support.get("3") == ["3.2"] and china[2][1].startswith(
        ("Yes", "The answer is yes")
    )
    # A concession on China's preferred option is acknowledged in the first sentence, naming it (thanking the
    # student for it is not China's own backing, so the judge reads no stance there), and never opposed.
    first = sentences(china[3][1])[0]
    assert "(4.2)" in first and re.match(r"(Thank you|We appreciate)", first), first
    assert "4.2" not in read(china[3][1], "CHN").oppose.get("4", [])
    # Support for an option China now accepts (since the offer) is met with acceptance, not a refusal.
    assert "1.1" not in read(china[4][1], "CHN").oppose.get("1", [])

    eu = _replies(game, "EU")
    assert len(eu) == 6
    # A trade the engine took: the EU says so and names what it will now support.
    assert any(
        c["by"] == "USA" and c["to"] == "EU" and c["in_return"] == "2.2" for c in game.state["commitments"]
    )
    accepted = read(eu[0][1], "EU")
    assert accepted.support.get("2") == ["2.2"] and "3.1" in eu[0][1]
    # A trade whose promise the EU does not need: declined, with a counter-proposal for what it wants.
    countered = read(eu[1][1], "EU")
    assert not countered.support.get("4") or countered.support["4"] == ["4.1"]
    assert judge.Trade(want="4.1", promise="1.1") in countered.trades
    # A question asking for an offer the EU can make: the offer is made.
    assert judge.credible_offers(scenario, "EU", read(eu[2][1], "EU")) == ["capacity_building"], eu[2]
    # A question without an option still gets a position.
    assert read(eu[3][1], "EU").support
    # In debate, China answers the student's question on 2.1: yes, or what it would take.
    speeches = list(TranscriptEntry.objects.filter(game=game, kind="speech", issue="2").order_by("seq"))
    asked = next(n for n, e in enumerate(speeches) if e.speaker == "USA")
    answer = next(e for e in speeches[asked:] if e.speaker == "CHN")
    said = read(answer.text, "CHN")
    assert "2.1" in said.support.get("2", []) + said.conditional.get("2", []), answer.text
    _assert_sound(game)
