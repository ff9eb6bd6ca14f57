"""What a person reads of a deliberation (presenters.py and the templates): the machine's states, events, stances,
verdicts and roles in words, never their ids; and a vote badge that agrees with the words beside it. A vote below
its seat's confidence threshold counts as an abstention: its badge says both ("Abstains (objects with low
confidence)"), as the detail line does. The Markdown report keeps seed 004's format (tests/kinds/deliberation/
test_report.py) and is not checked here."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from simulations.kinds.deliberation import presenters
from simulations.kinds.deliberation.games import state_of
from simulations.kinds.deliberation.machine import Actor, Event
from simulations.kinds.deliberation.scenario import PersonaRole
from simulations.kinds.deliberation.state import Ballot, ConclusionCause, Stance, State, Verdict
from simulations.models import Game, ScenarioVersion
from simulations.services.content.scenarios import load_scenarios
from simulations.services.play.drive import Outcome, drive_game
from tests.kinds.visible_text import names_in
from tests.kinds.visible_text import visible as visible_text

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[3]
IDS = [*State, *Stance, *Verdict, *ConclusionCause, *Event, *PersonaRole, *Actor]


def visible(html: str) -> str:
    # the code under review (`pre`, `textarea`, and its lines quoted as `code`) is the user's own text, which may
    # name anything
    return visible_text(html, also_hidden=("pre", "textarea", "code"))


def ids_in(text: str) -> list[str]:
    return names_in(text, [i for i in IDS if "_" in i or i.isupper()], snake=True)  # business_driver


@pytest.fixture(autouse=True)
def _fresh_rate_counters() -> None:
    cache.clear()


@pytest.fixture
def version() -> ScenarioVersion:
    ((stored, _),) = load_scenarios(path=ROOT / "scenarios" / "deliberation")
    return stored


@pytest.fixture
def client() -> Client:
    c = Client()
    c.force_login(User.objects.create_user("reviewer", password="a-long-test-passphrase-42"))
    return c


def drive(game: Game) -> Game:
    assert drive_game(game_id=game.pk, stream=False).outcome in (Outcome.DONE, Outcome.HUMAN)
    return Game.objects.get(pk=game.pk)


@pytest.mark.parametrize(
    ("declared", "counted", "badge"),
    [
        (Stance.OBJECT, Stance.ABSTAIN, "Abstains (objects with low confidence)"),
        (Stance.SYNTHESIS, Stance.ABSTAIN, "Abstains (agrees with low confidence)"),
        (Stance.OBJECT, Stance.OBJECT, "Objects"),
    ],
)
def test_a_badge_names_the_counted_vote_and_what_was_said(
    declared: Stance, counted: Stance, badge: str
) -> None:
    ballot = Ballot(
        seat="maintainer",
        text="x",
        declared=declared,
        stance=counted,
        confidence=0.2 if declared != counted else 0.9,
    )
    assert presenters.vote_words(ballot) == badge
    detail = presenters.ballot_words(ballot, 0.55)
    said = presenters.DECLARED_WORDS[declared]
    assert (said in detail and "counted as an abstention" in detail) == (declared != counted)


def test_every_id_a_page_names_has_its_words() -> None:
    assert set(presenters.PHASES) == set(State) and set(presenters.STANCE_WORDS) == set(Stance)
    assert set(presenters.VERDICT_WORDS) == set(Verdict) and set(presenters.ROLE_NAMES) == set(PersonaRole)
    words = [*presenters.PHASES.values(), *presenters.STANCE_WORDS.values(), *presenters.VERDICT_WORDS.values(),
             *presenters.ROLE_NAMES.values(), *presenters.STATE_WORDS.values()]  # fmt: skip
    assert not ids_in(" ".join(words))


@pytest.mark.parametrize(
    ("fields", "human"),
    [
        # the person in the maintainer's seat objects below the seat's threshold: counted as an abstention
        ({"source": "paste", "code": "import os\n", "seat": "maintainer"},
         {"stance": "OBJECT", "confidence": "0.2", "text": "I object to this, though I am not sure."}),
        ({"source": "sample", "sample": "secret", "seat": ""}, None),  # watched: a veto, an amendment, a verdict
    ],
)  # fmt: skip
def test_a_played_deliberation_reads_in_words_and_its_badges_agree(
    client: Client, version: ScenarioVersion, fields: dict[str, Any], human: dict[str, str] | None
) -> None:
    response = client.post(f"/deliberation/new/{version.pk}/", fields)
    game = drive(Game.objects.get(pk=int(response["Location"].strip("/").split("/")[-1])))
    pages = [client.get(f"/games/{game.pk}/").content.decode()]
    if human:
        client.post(f"/games/{game.pk}/move/", {"event": "OPINION_GIVEN", "version": game.version,
                                                "idem": "k1", **human})  # fmt: skip
        game = drive(game)
    for _ in range(20):
        if state_of(game).verdict:
            break
        pages.append(client.get(f"/games/{game.pk}/").content.decode())
        game = drive(game)
    state = state_of(game)
    assert state.verdict is not None
    page = client.get(f"/games/{game.pk}/").content.decode()
    review = client.get(f"/games/{game.pk}/review/").content.decode()
    for html in [*pages, page, review]:
        text = visible(html)
        assert not ids_in(text), ids_in(text)
    text = visible(review)
    assert (
        presenters.VERDICT_WORDS[state.verdict.value] in text and f'data-verdict="{state.verdict}"' in review
    )
    ballots = [b for r in state.rounds for b in r.ballots.values()]
    for b in ballots:  # every badge is the vote as counted and, when it differs, what the member said
        assert presenters.vote_words(b) in visible(page)
    if human:
        mine = state.rounds[0].ballots["maintainer"]
        assert (mine.declared, mine.stance) == (Stance.OBJECT, Stance.ABSTAIN)
        assert re.search(r'<span class="flag vote" data-vote="ABSTAIN">Abstains \(objects with low confidence\)'
                         r"</span>", page)  # fmt: skip
        assert "Abstains (objects with low confidence)" in text  # the review's vote table says the same


def test_an_offline_abstention_is_badged_as_it_is_worded(client: Client, version: ScenarioVersion) -> None:
    """An offline member outside its field says it abstains and declares the abstention: its badge says
    "Abstains", never "objects" beside words that abstain; and it says what it would need to vote."""
    response = client.post(
        f"/deliberation/new/{version.pk}/", {"source": "sample", "sample": "boundary", "seat": ""}
    )
    game = drive(Game.objects.get(pk=int(response["Location"].strip("/").split("/")[-1])))
    state = state_of(game)
    page = client.get(f"/games/{game.pk}/").content.decode()
    abstained = [b for b in state.rounds[0].ballots.values() if b.stance == Stance.ABSTAIN]
    assert abstained
    for b in abstained:
        assert b.declared == Stance.ABSTAIN and presenters.vote_words(b) == "Abstains"
        assert "abstain" in b.text and "would need" in b.text
    assert "low confidence" not in visible(page)


def test_quoted_lines_show_as_code_and_stay_text(client: Client, version: ScenarioVersion) -> None:
    response = client.post(
        f"/deliberation/new/{version.pk}/", {"source": "sample", "sample": "boundary", "seat": ""}
    )
    game = drive(Game.objects.get(pk=int(response["Location"].strip("/").split("/")[-1])))
    page = client.get(f"/games/{game.pk}/").content.decode()
    assert "<code>return age &gt; 18</code>" in page  # in the findings table and in the members' words
    assert re.search(r'<p class="text">[^<]*<code>return sum\(values\) / \(len\(values\) - 1\)</code>', page)
    assert presenters.text_parts("a `<b>x</b>` b") == [("text", "a "), ("code", "<b>x</b>"), ("text", " b")]
    assert "<b>x</b>" not in page
