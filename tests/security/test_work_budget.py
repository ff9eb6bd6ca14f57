"""Finding 1 (issue #64, "one form fills a disk"): the work a person's runs may ask of a school's server. Runs of
the kinds that advance without the student (a social feed, a Message Lab panel) are estimated before they start
and refused from the web over the limit per run, past the runs one person may have going at once, or over the
limit for one person's unfinished runs together; the command line is not limited."""

from __future__ import annotations

import re
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.html import escape

from simulations.kinds import get_kind
from simulations.kinds.message_lab.scenario import load_default_scenario
from simulations.kinds.social_feed.headless import play_headless
from simulations.models import Game, ModelChoice, ScenarioVersion
from simulations.services.content.scenarios import store_scenario
from simulations.services.play.work_budget import OverBudget, WorkEstimate, check_work
from tests.budget import set_school_limits, town_square

pytestmark = pytest.mark.django_db(transaction=True)
PASSWORD = "a-long-test-passphrase-42"
FEED_ADVICE = "Lower the number of agents or rounds, or checkpoint less often."
TWO_GOING = (
    "You already have 2 runs going (at most 2 at once): let one finish before you start another. A paused run, or "
    "one waiting for your decision, counts until it has finished."
)


@pytest.fixture(autouse=True)
def _school_limits(settings: Any) -> None:
    set_school_limits(settings)


@pytest.fixture
def town() -> ScenarioVersion:
    return town_square()


@pytest.fixture
def lab() -> ScenarioVersion:
    kind = get_kind("message_lab")
    source = kind.scenarios.source_of(load_default_scenario().model_dump(mode="json"))
    return store_scenario(kind=kind, source=source, origin="tests")[0]


def student(name: str) -> Client:
    client = Client()
    client.force_login(User.objects.create_user(name, password=PASSWORD))
    return client


def feed(client: Client, version: ScenarioVersion, **fields: Any) -> Any:
    data = {"agents": 10, "max_rounds": 2, "checkpoint_frequency": 1, "reasoner_enabled": "on"} | fields
    return client.post(f"/social_feed/new/{version.pk}/", data)


def panel(client: Client, version: ScenarioVersion, **fields: Any) -> Any:
    data = {"brief": "darning-kit-launch", "rounds": 2, "gates": ["1"],
            "participants": ["direct_response", "storyteller", "skeptic"], "brief_text": ""} | fields  # fmt: skip
    return client.post(f"/message_lab/new/{version.pk}/", data)


def test_a_third_background_run_is_refused_until_one_finishes(
    town: ScenarioVersion, lab: ScenarioVersion
) -> None:
    alice = student("alice")
    assert feed(alice, town).status_code == 302
    assert panel(alice, lab).status_code == 302  # a panel waits at its gate for her: it still counts
    for third in (feed(alice, town), panel(alice, lab)):
        assert third.status_code == 400 and escape(TWO_GOING) in third.content.decode()
    assert Game.objects.count() == 2
    assert feed(student("bob"), town).status_code == 302  # another person's runs are their own
    play_headless(Game.objects.filter(owner__username="alice", scenario__kind="social_feed").get())
    assert feed(alice, town).status_code == 302  # one finished: room for another
    assert feed(alice, town).status_code == 400


def test_one_persons_runs_together_are_limited(settings: Any, town: ScenarioVersion) -> None:
    settings.MERCURY_MAX_BACKGROUND_RUNS_PER_USER = 5
    settings.MERCURY_MAX_RUN_MB_PER_USER = 9  # a run stores what happened: these three come to 11 MB together
    alice = student("alice")
    assert (
        feed(alice, town, agents=2000, max_rounds=47, checkpoint_frequency=50).status_code == 302
    )  # 59 s, 6 MB
    assert (
        feed(alice, town, agents=2000, max_rounds=20, checkpoint_frequency=10).status_code == 302
    )  # 27 s, 3 MB
    refused = feed(alice, town, agents=1000, max_rounds=30, checkpoint_frequency=10)  # 13 s, 3 MB: each under
    assert (
        refused.status_code == 400
        and escape(
            "Together with your runs still going, this run would take about 98 seconds of the server's time and store "
            "about 11 MB; the limit for one person's runs at once is 90 seconds and 9 MB. Let one of them finish first, "
            f"or make this one smaller. {FEED_ADVICE}"
        )
        in refused.content.decode()
    )
    assert Game.objects.count() == 2
    assert feed(student("bob"), town, agents=1000, max_rounds=30, checkpoint_frequency=10).status_code == 302


def test_one_persons_runs_of_a_day_are_limited_finished_or_not(settings: Any, town: ScenarioVersion) -> None:
    """Finished runs keep their rows: a student who starts run after run, each finished before the next, fills a
    disk over a day unless that day's runs are counted together."""
    settings.MERCURY_MAX_RUN_MB_PER_USER_PER_DAY = 8
    big = {"agents": 2000, "max_rounds": 47, "checkpoint_frequency": 50}  # 59 s, 6 MB
    alice = student("alice")
    assert feed(alice, town, **big).status_code == 302
    Game.objects.filter(owner__username="alice").update(status=Game.Status.FINISHED)  # as if it had run
    refused = feed(alice, town, **big)
    assert (
        refused.status_code == 400
        and escape(
            "Your runs of the last 24 hours and this one would store about 11 MB; one person's runs may store 8 MB in "
            f"a day. Make this run smaller, or start it tomorrow. {FEED_ADVICE}"
        )
        in refused.content.decode()
    )
    Game.objects.filter(owner__username="alice").update(
        created_at=timezone.now() - timedelta(days=1, minutes=1)
    )
    assert feed(alice, town, **big).status_code == 302  # yesterday's run no longer counts
    assert feed(student("bob"), town, **big).status_code == 302


def test_a_real_models_calls_are_limited_per_run(town: ScenarioVersion) -> None:
    """With a real model every post is written by a call, and every ambiguous agent decided by one."""
    choice = ModelChoice.objects.create(label="Hosted", model="openai/some-model")
    alice = student("alice")
    refused = feed(alice, town, agents=400, max_rounds=50, checkpoint_frequency=5, model=str(choice.pk))
    assert (
        refused.status_code == 400
        and escape(
            f"This run would make about 2,348 model calls; the limit for one run is 2,000 model calls. {FEED_ADVICE}"
        )
        in refused.content.decode()
    )
    assert feed(alice, town, agents=400, max_rounds=50, checkpoint_frequency=5).status_code == 302  # offline


def test_a_panel_is_estimated_too(settings: Any, lab: ScenarioVersion) -> None:
    settings.MERCURY_MAX_RUN_MB = (
        5  # the largest panel the form allows stores about 9 MB: under the default 50
    )
    alice = student("alice")
    everyone = [
        "direct_response",
        "storyteller",
        "skeptic",
        "art_director",
        "organiser",
        "nudger",
        "plain_editor",
    ]
    refused = panel(alice, lab, rounds=12, participants=everyone)
    assert (
        refused.status_code == 400
        and escape(
            "This run would store about 14 MB; the limit for one run is 5 MB. Choose fewer rounds or a smaller panel."
        )
        in refused.content.decode()
    )
    assert panel(alice, lab).status_code == 302


def test_limits_of_zero_are_no_limits(settings: Any, town: ScenarioVersion) -> None:
    for name in ("SECONDS", "MB", "MODEL_CALLS", "SECONDS_PER_USER", "MB_PER_USER", "MB_PER_USER_PER_DAY"):
        setattr(settings, f"MERCURY_MAX_RUN_{name}", 0)
    settings.MERCURY_MAX_BACKGROUND_RUNS_PER_USER = 0
    user = User.objects.create_user("admin-ish", password=PASSWORD)
    for _ in range(3):
        check_work(user_id=user.pk, estimate=WorkEstimate(seconds=1e6, storage_bytes=10**12, model_calls=10**6),
                   advice=FEED_ADVICE)  # fmt: skip
    settings.MERCURY_MAX_RUN_SECONDS = 1
    with pytest.raises(OverBudget) as refused:
        check_work(user_id=user.pk, estimate=WorkEstimate(seconds=7200, storage_bytes=0), advice=FEED_ADVICE)
    assert str(refused.value) == (
        f"This run would take about 2.0 hours of the server's time; the limit for one run is 1 second. {FEED_ADVICE}"
    )


def test_the_command_line_is_not_limited(settings: Any, town: ScenarioVersion) -> None:
    """Teachers and admins run what they choose from `manage.py play`: the limits are for runs set up from the web."""
    settings.MERCURY_MAX_RUN_MB = 0.1  # a 30-agent feed checkpointed every round for 20 rounds: about 195 KB
    options = {"agents": 30, "max_rounds": 20, "checkpoint_frequency": 1}
    refused = feed(student("alice"), town, **options)
    assert refused.status_code == 400 and escape("store about 195 KB; the limit for one run is 100 KB.") in (
        refused.content.decode()
    )
    played = [arg for key, value in options.items() for arg in ("--option", f"{key}={value}")]
    call_command("play", "--scenario", "town-square", *played, "--quiet", stdout=StringIO())
    assert Game.objects.get().status == Game.Status.FINISHED


def test_the_check_reads_each_runs_set_up_never_its_whole_state(town: ScenarioVersion) -> None:
    """A feed's state is the whole simulation (tens of megabytes at the limit): a set-up's check reads only the
    stored set-up of the person's runs, whatever their size."""
    alice = student("alice")
    assert feed(alice, town).status_code == 302
    user = User.objects.get(username="alice")
    with CaptureQueriesContext(connection) as queries:
        check_work(user_id=user.pk, estimate=WorkEstimate(seconds=1, storage_bytes=1), advice=FEED_ADVICE)
    games = [q["sql"] for q in queries.captured_queries if "simulations_game" in q["sql"]]
    # the whole column selected is `..."state", "next"` or `..."state" FROM`; its set-up alone is an expression
    assert games and not [
        sql for sql in games if re.search(r'"simulations_game"\."state"(,\s*"|\s+FROM)', sql)
    ]
