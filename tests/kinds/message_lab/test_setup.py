"""Message Lab's set-up (issue #69): the gates follow the rounds chosen, and the page seats the moderator and the
evaluator and sets how many model calls run at once; each reaches the run (its state's config) and the played run
honours it. Refusals are sentences beside their field; nothing is started."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape

from simulations.kinds import get_kind
from simulations.kinds.message_lab import prompts, turns
from simulations.kinds.message_lab.document import Config
from simulations.kinds.message_lab.games import state_of
from simulations.kinds.message_lab.headless import play_headless
from simulations.kinds.message_lab.run_config import config_from_options
from simulations.kinds.message_lab.scenario import MessageLabScenario
from simulations.kinds.message_lab.state import SimulationStatus
from simulations.models import Game, ModelCall, ScenarioVersion

from .conftest import new_lab_game
from .lab_loop import config, play

PASSWORD = "a-long-test-passphrase-42"
PANEL = ["direct_response", "storyteller", "skeptic"]


@pytest.fixture
def client(transactional_db: None) -> Client:
    c = Client()
    c.force_login(User.objects.create_user("teacher", password=PASSWORD))
    return c


def post(client: Client, version: ScenarioVersion, **fields: Any) -> Any:
    """The set-up form as the page sends it, its defaults where `fields` says nothing."""
    data = {"brief": "darning-kit-launch", "rounds": 6, "gates": ["3", "6"], "brief_text": "",
            "participants": PANEL, "moderator": "moderator", "evaluator": "evaluator", "parallel": 4} | fields  # fmt: skip
    return client.post(f"/message_lab/new/{version.pk}/", data)


# --- the gates follow the rounds ---------------------------------------------------------------------------------


def test_a_four_round_run_with_the_default_gates_starts_with_the_gates_it_reaches(
    client: Client, lab_version: ScenarioVersion
) -> None:
    """The page ticks the defaults (after rounds 3 and 6); choosing 4 rounds without unticking 6 used to be
    refused ('no gate after round 6'), and the same run set up in code failed with a clipped pydantic error."""
    form = client.get(f"/message_lab/new/{lab_version.pk}/").content.decode()
    for n in ("3", "6"):
        assert (
            f'name="gates" value="{n}"' in form and f'value="{n}" id="id_gates_{int(n) - 1}" checked' in form
        )
    assert "A gate after a round the run does not reach is left out." in form
    assert "message-lab-setup.js" in form and "data-gates-follow-rounds" in form

    started = post(client, lab_version, rounds=4)
    assert started.status_code == 302
    st = state_of(Game.objects.get())
    assert (st.config.rounds, st.config.gates, [g.after_round for g in st.gates]) == (4, [3], [3])

    in_code = state_of(new_lab_game(lab_version, rounds=4))  # no gates given: the defaults it reaches
    assert in_code.config.gates == [3] and [g.after_round for g in in_code.gates] == [3]
    assert state_of(new_lab_game(lab_version, rounds=2)).config.gates == []


def test_gates_named_beyond_the_last_round_are_refused_in_code_with_a_sentence(
    lab_scenario: MessageLabScenario,
) -> None:
    """Options given in code or on the command line are what someone asked for: refused, not trimmed."""
    with pytest.raises(ValueError) as late:
        config_from_options(lab_scenario, {"rounds": 4, "gates": [3, 6, 9]})
    assert str(late.value) == "The run has 4 rounds: there is no gate after round 6, 9."
    with pytest.raises(ValueError) as one:
        config_from_options(lab_scenario, {"rounds": 1, "gates": [2]})
    assert str(one.value) == "The run has 1 round: there is no gate after round 2."
    with pytest.raises(ValueError) as rounds:
        config_from_options(lab_scenario, {"rounds": 13})
    assert str(rounds.value) == "A run has 1 to 12 rounds, not 13."


def test_the_default_options_make_the_same_run_as_before(lab_scenario: MessageLabScenario) -> None:
    """Same seed, same game: the defaults give the configuration the shipped scenario always gave."""
    assert config_from_options(lab_scenario, {}) == config(lab_scenario)
    assert config(lab_scenario).gates == [3, 6]


# --- the moderator and the evaluator -----------------------------------------------------------------------------


def test_another_moderator_and_evaluator_judge_the_played_run(
    client: Client, lab_version: ScenarioVersion
) -> None:
    """Two participants left off the panel take the seats; the run played headless to the end is judged by them
    (every evaluation, synthesis and verdict line, and the calls made for them) and by nobody else."""
    started = post(client, lab_version, rounds=2, gates=["1"], moderator="humorist", evaluator="organiser")
    assert started.status_code == 302
    game = Game.objects.get()
    assert (state_of(game).config.moderator, state_of(game).config.evaluator) == ("humorist", "organiser")
    board = client.get(f"/games/{game.pk}/").content.decode()
    assert "Moderator: Fergus Tolley-Ashe · evaluator: Kofi Hallworth" in board

    game = play_headless(game)
    st = state_of(game)
    assert st.status is SimulationStatus.OUTPUT_READY and st.verdict
    spoke = {(x.type, x.persona) for x in st.transcript if x.type in ("evaluation", "synthesis", "verdict")}
    assert spoke == {("evaluation", "organiser"), ("synthesis", "humorist"), ("verdict", "humorist")}
    assert not game.entries.filter(speaker__in=["moderator", "evaluator"]).exists()
    calls = set(ModelCall.objects.filter(game=game, purpose__in=["evaluation", "synthesis", "verdict"])
                .values_list("purpose", "role"))  # fmt: skip
    assert calls == {("evaluation", "organiser"), ("synthesis", "humorist"), ("verdict", "humorist")}


def test_a_seated_participant_is_told_it_moderates(lab_scenario: MessageLabScenario) -> None:
    """The prompt gives the persona the seat the run gives it, not the role it was written for."""
    cfg = config(
        lab_scenario, rounds=1, gates=[], participants=PANEL, moderator="humorist", evaluator="organiser"
    )
    systems: dict[str, str] = {}

    def seen(req: prompts.Request) -> None:
        systems[req.purpose] = req.messages[0]["content"]

    final = play(lab_scenario, cfg, on_request=seen)
    assert final.verdict is not None
    assert systems["synthesis"].startswith("You are Fergus Tolley-Ashe, the panel's moderator,")
    assert systems["verdict"].startswith("You are Fergus Tolley-Ashe, the panel's moderator,")
    assert systems["evaluation"].startswith("You are Kofi Hallworth, the panel's evaluator,")
    # the last concept asked for: the panel's own members keep their part
    assert systems["concept"].startswith("You are Wendell Ashcombe, a member of a creative panel,")


# --- how many calls run at once --------------------------------------------------------------------------------


def test_the_parallel_setting_is_stored_and_bounds_the_calls_in_flight(
    client: Client, lab_version: ScenarioVersion, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    widths: list[int] = []

    class Counted(ThreadPoolExecutor):
        def __init__(self, max_workers: int, **kwargs: Any) -> None:
            widths.append(max_workers)
            super().__init__(max_workers, **kwargs)

    monkeypatch.setattr(turns, "ThreadPoolExecutor", Counted)
    assert post(client, lab_version, rounds=1, gates=[], parallel=2).status_code == 302
    two = Game.objects.get()
    assert state_of(two).config.parallel == 2
    play_headless(two)
    assert max(widths) == 2 and widths.count(2) >= 3  # creation, critique and refinement: two at a time

    widths.clear()
    settings.MERCURY_OFFLINE_CALL_LATENCY = 0.02  # each call takes a model's time, so overlaps would show
    assert post(client, lab_version, rounds=1, gates=[], parallel=1).status_code == 302
    one = Game.objects.latest("pk")
    assert state_of(one).config.parallel == 1
    play_headless(one)
    assert set(widths) == {1}
    calls = list(ModelCall.objects.filter(game=one, purpose__in=["concept", "critique"]).order_by("seq"))
    spans = [(c.started_at.timestamp(), c.started_at.timestamp() + c.latency_ms / 1000) for c in calls]  # type: ignore[union-attr]
    assert len(spans) == 6 and all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)), spans


def test_the_set_up_page_offers_the_seats_and_the_pace_with_the_scenarios_defaults(
    client: Client, lab_version: ScenarioVersion
) -> None:
    form = client.get(f"/message_lab/new/{lab_version.pk}/").content.decode()
    assert (
        '<optgroup label="Written to moderate">' in form and '<optgroup label="Written to evaluate">' in form
    )
    assert '<option value="moderator" selected>Imogen Castellane</option>' in form
    assert '<option value="evaluator" selected>Beatrix Oyelaran</option>' in form
    assert form.count('<optgroup label="A participant not on the panel">') == 2
    assert 'name="parallel" value="4" min="1" max="7"' in form
    blank = post(client, lab_version, rounds=1, gates=[], moderator="", evaluator="", parallel="")
    assert blank.status_code == 302
    cfg = state_of(Game.objects.get()).config  # left empty (an older page): the scenario's own
    assert (cfg.moderator, cfg.evaluator, cfg.parallel) == ("moderator", "evaluator", 4)


REFUSED = [
    ({"moderator": "skeptic"}, "moderator",
     "Wendell Ashcombe is on the panel and cannot also moderate it: choose someone else, or take them off the panel."),
    ({"evaluator": "storyteller"}, "evaluator",
     "Nkechi Lowther is on the panel and cannot also evaluate it: choose someone else, or take them off the panel."),
    ({"moderator": "humorist", "evaluator": "humorist"}, "evaluator",
     "Fergus Tolley-Ashe cannot both moderate and evaluate: choose two different personas."),
    ({"moderator": "nobody"}, "moderator", "Select a valid choice. nobody is not one of the available choices."),
    ({"parallel": 0}, "parallel", "Ensure this value is greater than or equal to 1."),
    ({"parallel": 8}, "parallel", "Ensure this value is less than or equal to 7."),
    ({"parallel": "many"}, "parallel", "Enter a whole number."),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fields", "field", "sentence"), REFUSED, ids=[f"{r[1]}-{i}" for i, r in enumerate(REFUSED)]
)
def test_a_set_up_that_does_not_fit_is_refused_beside_its_field(
    client: Client, lab_version: ScenarioVersion, fields: dict[str, Any], field: str, sentence: str
) -> None:
    refused = post(client, lab_version, **fields)
    page = refused.content.decode()
    assert refused.status_code == 400
    # Beside its field: drawn after it, before the next field's label.
    assert escape(sentence) in page.split(f'name="{field}"', 1)[1].split("</label>", 1)[0]
    assert not Game.objects.exists()


@pytest.mark.parametrize(
    ("options", "sentence"),
    [
        ({"moderator": "skeptic"}, "Wendell Ashcombe is on the panel and cannot also moderate it: choose someone "
                                   "else, or take them off the panel."),
        ({"moderator": "humorist", "evaluator": "humorist"},
         "Fergus Tolley-Ashe cannot both moderate and evaluate: choose two different personas."),
        ({"evaluator": "nobody"}, "There is no persona 'nobody'."),
        ({"moderator": "evaluator"}, "Beatrix Oyelaran is written to evaluate, not to moderate."),
        ({"evaluator": "moderator"}, "Imogen Castellane is written to moderate, not to evaluate."),
        ({"parallel": 0}, "Run 1 to 16 model calls at once, not 0."),
        ({"parallel": 17}, "Run 1 to 16 model calls at once, not 17."),
        ({"participants": ["skeptic", "humorist"]}, "Choose 3 to 7 participants, not 2."),
    ],
)  # fmt: skip
def test_options_in_code_are_refused_with_a_sentence(
    lab_scenario: MessageLabScenario, options: dict[str, Any], sentence: str
) -> None:
    with pytest.raises(ValueError) as refused:
        config_from_options(lab_scenario, {"participants": PANEL} | options)
    assert str(refused.value) == sentence


def test_the_command_line_takes_the_moderator_the_evaluator_and_the_pace(
    lab_scenario: MessageLabScenario,
) -> None:
    typed = {"moderator": "humorist", "evaluator": "organiser", "parallel": "2", "participants": "skeptic,nudger,storyteller"}  # fmt: skip
    options = get_kind("message_lab").headless.cli_options(role=None, human=None, options=typed)
    cfg: Config = config_from_options(lab_scenario, options)
    assert (cfg.moderator, cfg.evaluator, cfg.parallel) == ("humorist", "organiser", 2)
