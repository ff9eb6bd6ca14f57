"""The chair follows the room (tabling.py): what it tables moves with what was said in public, and only that."""

from __future__ import annotations

import pytest

from simulations.kinds.negotiation import judge, rules, tabling
from simulations.kinds.negotiation.bots import Passive, Script, Scripted
from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import GameState
from tests.kinds.negotiation.driver import PureGame, new_pure_game

REFUSE_41 = "Tanzania cannot accept in scope with national action plans (4.1). We support out of scope pending assessment (4.2)."


def _at_proposal(game: PureGame, issue_id: str, policy: object) -> PureGame:
    """Play until the chair is about to table a proposal on `issue_id`."""
    for _ in range(5000):
        st = game.state
        if (
            st.status == "ISSUE_PROPOSAL_SELECTION"
            and st.active_issue
            and st.active_issue.issue_id == issue_id
        ):
            return game
        game.step(policy)  # type: ignore[arg-type]
    raise AssertionError("never reached the proposal")


def _public_refusers(scenario: Scenario, game: PureGame, option: str) -> set[str]:
    """An oracle from the transcript: voting countries whose last public word on `option` (openings, debate) was
    a refusal, read by the judge sentence by message."""
    last: dict[str, str] = {}
    issue_id = option.split(".")[0]
    for e in game.entries:
        if e.kind not in ("opening", "speech") or e.speaker not in scenario.voters:
            continue
        s = judge.read_signals(scenario, e.text, speaker=e.speaker, issue=e.issue)
        if option in s.support.get(issue_id, []):
            last[e.speaker] = "yes"
        elif option in s.oppose.get(issue_id, []):
            last[e.speaker] = "no"
    return {r for r, said in last.items() if said == "no"}


def _fresh_state(scenario: Scenario, seed: int = 3) -> GameState:
    game = _at_proposal(new_pure_game(scenario, seed), "1", Passive("AMAP"))
    state = game.state.model_copy(deep=True)
    state.public = type(state.public)()  # nothing heard: each test says what the room said
    return state


def _said(**kw: object) -> judge.Signals:
    return judge.Signals.model_validate(kw)


# --- whole games --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_student_who_refuses_the_leading_option_in_public_moves_the_chair(
    scenario: Scenario, seed: int
) -> None:
    script = Script(
        role="TZA", variant="TZA-c", issues={"4": {"placement": "first", "speeches": [REFUSE_41, None]}}
    )
    policy = Scripted("TZA", script)
    game = _at_proposal(new_pure_game(scenario, seed), "4", policy)
    leading, _ = rules.select_proposal(scenario, game.state, "4")
    refused_42 = _public_refusers(scenario, game, "4.2")
    game.apply("PROPOSAL_MADE")
    proposal = game.state.active_issue.proposal  # type: ignore[union-attr]
    said = " ".join(e.text for e in game.outcomes[-1].entries)
    tabled = game.state.active_issue
    assert tabled is not None and tabled.set_aside == (leading if proposal != leading else None)
    assert ("together with that offer" in said) == bool(tabled.package), said  # what talk_quality counts
    if leading == "4.1" and not refused_42:
        assert proposal == "4.2", said
        assert "Tanzania has said in public that it cannot accept it" in said
        assert "4.1" in said and "the Chair tables option 4.2" in said
    elif leading == "4.1":
        assert proposal == "4.1", said  # 4.2 was refused too: nothing better to table
        assert "Tanzania has said it cannot accept option 4.1" in said and "the vote will show" in said
    else:
        assert proposal == leading


def test_the_chair_moves_in_some_game_and_never_on_words_said_in_private(scenario: Scenario) -> None:
    moved = []
    for seed in (1, 2, 3, 4):
        public = Script(
            role="TZA", variant="TZA-c", issues={"4": {"placement": "first", "speeches": [REFUSE_41]}}
        )
        private = Script(
            role="TZA", variant="TZA-c", talks=[{"partner": "CHN", "messages": [REFUSE_41]}],
            issues={"4": {"placement": "skip"}},
        )  # fmt: skip
        for name, script in (("public", public), ("private", private)):
            game = _at_proposal(new_pure_game(scenario, seed), "4", Scripted("TZA", script))
            leading, _ = rules.select_proposal(scenario, game.state, "4")
            game.apply("PROPOSAL_MADE")
            if game.state.active_issue.proposal != leading:  # type: ignore[union-attr]
                moved.append((seed, name))
    assert moved and all(name == "public" for _, name in moved), moved


def test_same_words_same_proposal(scenario: Scenario) -> None:
    script = Script(
        role="TZA", variant="TZA-c", issues={"4": {"placement": "first", "speeches": [REFUSE_41]}}
    )
    runs = [new_pure_game(scenario, 2).play(Scripted("TZA", script)) for _ in range(2)]
    assert [e.text for e in runs[0].entries] == [e.text for e in runs[1].entries]


# --- the rule on what was heard -----------------------------------------------------------------------------


def test_a_known_blocker_and_an_option_nobody_refused(scenario: Scenario) -> None:
    state = _fresh_state(scenario)
    leading, _ = rules.select_proposal(scenario, state, "1")
    other = "1.2" if leading == "1.1" else "1.1"
    assert tabling.table(scenario, state, "1").option == leading  # nothing heard: the count decides
    tabling.hear(scenario, state, "CHN", _said(oppose={"1": [leading]}, support={"1": [other]}))
    tabled = tabling.table(scenario, state, "1")
    assert (tabled.option, tabled.blockers, tabled.backers) == (other, ["CHN"], ["CHN"])
    assert "China has said in public that it cannot accept it" in (tabling.explain(scenario, tabled) or "")
    # Another voting country refuses the alternative: the chair tables the leading option and says why.
    tabling.hear(scenario, state, "USA", _said(oppose={"1": [other]}))
    tabled = tabling.table(scenario, state, "1")
    assert (tabled.option, tabled.blockers) == (leading, ["CHN"])
    assert "the vote will show" in (tabling.explain(scenario, tabled) or "")
    # The blocker comes round in public: no blocker, nothing to explain.
    tabling.hear(scenario, state, "CHN", _said(support={"1": [leading]}))
    tabled = tabling.table(scenario, state, "1")
    assert (tabled.option, tabled.blockers, tabling.explain(scenario, tabled)) == (leading, [], None)


def test_a_blocker_must_have_said_it_accepts_the_alternative(scenario: Scenario) -> None:
    state = _fresh_state(scenario)
    leading, _ = rules.select_proposal(scenario, state, "1")
    tabling.hear(scenario, state, "CHN", _said(oppose={"1": [leading]}))
    assert tabling.table(scenario, state, "1").option == leading


def test_a_private_stance_is_not_what_the_chair_hears(scenario: Scenario) -> None:
    state = _fresh_state(scenario)
    leading, _ = rules.select_proposal(scenario, state, "1")
    other = "1.2" if leading == "1.1" else "1.1"
    tabling.hear(scenario, state, "CHN", _said(oppose={"1": [leading]}, support={"1": [other]}))
    stance = state.stances["CHN"]["1"]
    stance.acceptable = sorted({*stance.acceptable, leading})  # privately persuaded: the chair cannot know
    assert tabling.table(scenario, state, "1").option == other


def test_a_stated_need_met_in_public_makes_a_package(scenario: Scenario) -> None:
    state = _fresh_state(scenario)
    leading, _ = rules.select_proposal(scenario, state, "1")
    other = "1.2" if leading == "1.1" else "1.1"
    tabling.hear(
        scenario, state, "CHN",
        _said(oppose={"1": [leading]}, conditional={"1": [leading]}, asks=["financing"], support={"1": [other]}),
    )  # fmt: skip
    assert tabling.table(scenario, state, "1").option == other
    payer = next(r for r in scenario.role_ids if "financing" in scenario.role(r).can_offer)
    cannot = next(r for r in scenario.role_ids if "financing" not in scenario.role(r).can_offer)
    tabling.hear(scenario, state, cannot, _said(offers=["financing"]))  # an offer it cannot make is no offer
    assert tabling.table(scenario, state, "1").option == other
    tabling.hear(scenario, state, payer, _said(offers=["financing"]))
    tabled = tabling.table(scenario, state, "1")
    assert (tabled.option, tabled.blockers) == (leading, [])
    assert tabled.package == [("CHN", "financing", [payer])]
    why = tabling.explain(scenario, tabled) or ""
    assert scenario.display_name(payer) in why and "together with that offer" in why
