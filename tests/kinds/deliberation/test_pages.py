"""A deliberation in the browser's terms (Django's test client): the lobby starts one, the set-up form takes code in
each way, the page shows the committee, findings and rounds, a person plays each kind of seat through the move
forms, and the review and its downloads show the verdict. AI turns are played by the platform's one driver with
the offline model, as a background worker would play them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils.html import escape

from simulations.engine.errors import IllegalEvent, InvalidMove
from simulations.kinds import Actor, kind_of
from simulations.kinds.deliberation import forms, presenters
from simulations.kinds.deliberation.games import state_of
from simulations.kinds.deliberation.pages import MoveRefused
from simulations.kinds.deliberation.scenario import DeliberationScenario
from simulations.kinds.deliberation.state import Stance, State, Verdict
from simulations.models import Event, Game, ScenarioVersion
from simulations.services.content.scenarios import load_scenarios
from simulations.services.files.export import export_markdown
from simulations.services.ledger.turns import StaleTurn
from simulations.services.play.drive import Outcome, drive_game
from simulations.services.policy.message_text import (
    CONTROL_CHARACTERS,
    FIELD_SENTENCES,
    NO_VISIBLE_TEXT,
    ReadableTextField,
)
from simulations.services.policy.move_form import MissingVersion, NulInForm
from simulations.services.policy.student_errors import for_student

from .test_report import FORGED_NAME, assert_inert

# What whole games say and show, the same on any database: the embedded leg only (tests/conftest.py).
pytestmark = [pytest.mark.django_db, pytest.mark.content]
ROOT = Path(__file__).resolve().parents[3]
PASSWORD = "a-long-test-passphrase-42"


@pytest.fixture(autouse=True)
def _fresh_rate_counters() -> None:
    cache.clear()  # the rate limits count in the cache, which outlives each test's database


@pytest.fixture
def version() -> ScenarioVersion:
    ((stored, _),) = load_scenarios(path=ROOT / "scenarios" / "deliberation")
    return stored


@pytest.fixture
def owner() -> User:
    return User.objects.create_user("reviewer", password=PASSWORD)


@pytest.fixture
def client(owner: User) -> Client:
    c = Client()
    c.force_login(owner)
    return c


def start(client: Client, version: ScenarioVersion, **fields: Any) -> Any:
    return client.post(f"/deliberation/new/{version.pk}/", {"source": "sample", "seat": "", **fields})


def started(client: Client, version: ScenarioVersion, **fields: Any) -> Game:
    response = start(client, version, **fields)
    assert response.status_code == 302, response.content.decode()[:2000]
    game = Game.objects.get(pk=int(response["Location"].strip("/").split("/")[-1]))
    assert response["Location"] == f"/games/{game.pk}/"
    return game


def drive(game: Game) -> Game:
    """Play AI turns until the person must act or the committee concludes (a background worker's job)."""
    result = drive_game(game_id=game.pk, stream=False)
    assert result.outcome in (Outcome.DONE, Outcome.HUMAN), result
    return Game.objects.get(pk=game.pk)


def panel(html: str) -> dict[str, str]:
    found = re.search(r'<div id="panels" data-action="(\w+)" data-status="(\w+)" data-version="(\d+)"', html)
    assert found, "the page has no panels"
    return {"action": found[1], "status": found[2], "version": found[3]}


def move(client: Client, game: Game, event: str, **fields: Any) -> Any:
    return client.post(
        f"/games/{game.pk}/move/",
        {"event": event, "version": game.version, "idem": f"k{game.version}", **fields},
    )


def shown(text: str) -> str:
    """A persona's words as the transcript draws them: escaped, the lines it quotes in backticks as code."""
    return "".join(
        f"<code>{escape(part)}</code>" if kind == "code" else escape(part)
        for kind, part in presenters.text_parts(text)
    )


# --- the lobby and the set-up form ------------------------------------------------------------------------------


def test_the_lobby_lists_the_deliberation_and_opens_its_set_up(
    client: Client, version: ScenarioVersion, scenario: DeliberationScenario
) -> None:
    lobby = client.get("/").content.decode()
    assert scenario.title in lobby and 'value="code-review"' in lobby
    assert "(Code review committee, version 1)" in lobby and scenario.description.split()[0] in lobby
    response = client.post("/games/new/", {"scenario": "code-review", "model": "default"})
    assert (
        response.status_code == 302
        and response["Location"] == f"/deliberation/new/{version.pk}/?model=default"
    )
    page = client.get(response["Location"]).content.decode()
    for sample in scenario.samples:
        assert sample.label in page and sample.description in page
    for seat in ["proposer", *scenario.members]:
        assert f'value="{seat}"' in page and scenario.persona(seat).label in page
    assert 'name="model" value="default"' in page
    for source in ("sample", "paste", "file", "diff"):
        assert f'name="source" value="{source}"' in page
    assert not Game.objects.exists()  # nothing is created before the code is submitted


def test_the_set_up_shows_only_the_chosen_input_form(client: Client, version: ScenarioVersion) -> None:
    """Each input form names the sources it serves; the kind's stylesheet (no script needed) hides every form the
    checked "What to review" radio does not serve, so the page shows one form at a time."""
    page = client.get(f"/deliberation/new/{version.pk}/").content.decode()
    served = re.findall(r'<fieldset data-source="([a-z ]+)"><legend>([^<]+)</legend>', page)
    assert [(s, legend) for s, legend in served] == [
        ("sample", "Samples"), ("paste", "Paste code"), ("file diff", "Upload a file, or a diff"),
        ("diff", "A unified diff"),
    ]  # fmt: skip
    assert re.search(r'<link rel="stylesheet" href="[^"]*deliberation/setup\.css">', page)
    css = (ROOT / "simulations/kinds/deliberation/static/deliberation/setup.css").read_text()
    for source in ("sample", "paste", "file", "diff"):
        assert (
            f'form.setup:has(input[name="source"][value="{source}"]:checked) '
            f'fieldset[data-source]:not([data-source~="{source}"])'
        ) in css
    assert "display: none" in css
    assert 'class="setup"' in page and re.search(r'name="source" value="sample"[^>]*checked', page)


def test_a_sample_starts_a_deliberation_listed_in_the_lobby(
    client: Client, version: ScenarioVersion, scenario: DeliberationScenario
) -> None:
    game = started(client, version, sample="style")
    state = state_of(game)
    assert state.submission.label == scenario.sample("style").label and state.human_seat is None
    page = client.get(f"/games/{game.pk}/").content.decode()
    assert all(scenario.persona(p.id).label in page for p in scenario.personas)
    assert 'ws-connect="/ws/games/' in page and '<div id="stream">' in page
    assert "E711" in page and "ruff" in page  # the verification results, by tool and severity
    assert panel(page)["action"] == "waiting"  # an AI member has the floor
    lobby = client.get("/").content.decode()
    assert f"#{game.pk}" in lobby and "Debate: members give their opinions" in lobby


def test_pasted_code_is_checked_by_the_tools(client: Client, version: ScenarioVersion) -> None:
    code = (
        "import subprocess\r\n\r\n\r\ndef run(cmd: str) -> None:\r\n    subprocess.run(cmd, shell=True)\r\n"
    )
    game = started(client, version, source="paste", code=code, filename="runner.py")
    sub = state_of(game).submission
    assert (sub.source, sub.label, sub.code) == ("paste", "runner.py", code.replace("\r\n", "\n"))
    assert ("bandit", "B602") in {(f.tool, f.code) for f in sub.findings}


def test_an_uploaded_file_is_checked_by_the_tools(client: Client, version: ScenarioVersion) -> None:
    upload = SimpleUploadedFile("helper.py", b"def f(x):\n    l = x\n    return l == None\n")
    game = started(client, version, source="file", upload=upload)
    sub = state_of(game).submission
    assert (sub.source, sub.label) == ("file", "helper.py")
    assert {"E711", "E741"} <= {f.code for f in sub.findings}


def test_a_unified_diff_is_checked_on_its_added_lines(client: Client, version: ScenarioVersion) -> None:
    diff = (
        "--- a/app/settings.py\n+++ b/app/settings.py\n@@ -1,2 +1,3 @@\n import os\n"
        '+API_SECRET = "fake-secret-4e8a1f9c2b7d6035e1a8c4f2"\n DEBUG = False\n'
    )
    game = started(client, version, source="diff", diff=diff, seat="security")
    sub = state_of(game).submission
    assert sub.source == "diff" and sub.critical_findings and {f.line for f in sub.critical_findings} == {2}
    assert state_of(game).human_seat == "security"
    uploaded = started(
        client, version, source="diff", upload=SimpleUploadedFile("change.patch", diff.encode())
    )
    assert state_of(uploaded).submission.findings == sub.findings


@pytest.mark.parametrize(
    ("fields", "sentence"),
    [
        ({"source": "diff", "diff": "just some text\nno hunks"}, "This is not a unified diff"),
        ({"source": "file", "upload": SimpleUploadedFile("blob.py", b"\x00\x01\x02binary")}, "looks binary"),
        ({"source": "paste", "code": "   "}, "Paste the code to review."),
    ],
)
def test_code_that_cannot_be_reviewed_is_refused_with_the_input_kept(
    client: Client, version: ScenarioVersion, fields: dict[str, Any], sentence: str
) -> None:
    response = start(client, version, seat="maintainer", **fields)
    page = response.content.decode()
    assert response.status_code == 400 and sentence in page
    assert re.search(r'value="maintainer"[^>]*checked', page)  # the chosen seat is kept
    if fields["source"] == "diff":
        assert "just some text" in page  # what the user pasted is still in the form
    assert not Game.objects.exists()


def test_an_oversized_upload_is_refused_by_its_size(
    client: Client, version: ScenarioVersion, scenario: DeliberationScenario
) -> None:
    limit = scenario.checks.max_bytes
    upload = SimpleUploadedFile("big.py", b"x = 1\n" * (limit // 6 + 1))
    response = start(client, version, source="file", upload=upload)
    assert response.status_code == 400
    assert forms.TOO_LARGE.format(size=upload.size, limit=limit) in response.content.decode()
    assert not Game.objects.exists()


def test_a_post_too_large_to_hold_a_reviewable_submission_is_not_read(
    client: Client, version: ScenarioVersion, scenario: DeliberationScenario
) -> None:
    huge = "x = 1\n" * (scenario.checks.max_bytes // 2)  # three times the limit
    response = start(client, version, source="paste", code=huge)
    assert response.status_code == 400
    assert MoveRefused.POST_TOO_LARGE.format(limit=scenario.checks.max_bytes) in response.content.decode()
    game = drive(started(client, version, sample="secret", seat="proposer"))
    response = move(client, game, "AMENDED_CODE_SUBMITTED", code=huge)
    assert response.status_code == 400 and Game.objects.get(pk=game.pk).version == game.version


def test_the_lobby_model_choice_must_be_offered(client: Client, version: ScenarioVersion) -> None:
    response = start(client, version, sample="clean", model="999")
    assert response.status_code == 400 and "That model is not offered" in response.content.decode()
    assert not Game.objects.exists()


# --- watching and playing a seat --------------------------------------------------------------------------------


def test_watching_the_planted_secret_to_its_verdict(
    client: Client, version: ScenarioVersion, scenario: DeliberationScenario
) -> None:
    game = drive(started(client, version, sample="secret"))
    state = state_of(game)
    assert (state.verdict, state.round) == (Verdict.APPROVED, 2)
    page = client.get(f"/games/{game.pk}/").content.decode()
    assert panel(page)["action"] == "review" and f"/games/{game.pk}/review/" in page
    assert "Round 1" in page and "Round 2" in page and "Veto: a critical flaw blocks the change" in page
    vetoes = [b for b in state.rounds[0].ballots.values() if b.stance == Stance.VETO]
    assert vetoes and all(shown(b.text) in page for b in vetoes)  # each persona's words, escaped
    assert len(state.submissions) == 2 and "Earlier: version 1" in page
    assert "Debate → Veto" in page and "DEBATE → VETO" not in page  # transitions in words, not state names


def test_a_person_as_proposer_amends_after_the_veto_and_it_is_approved(
    client: Client, version: ScenarioVersion, scenario: DeliberationScenario
) -> None:
    game = drive(started(client, version, sample="secret", seat="proposer"))
    page = client.get(f"/games/{game.pk}/").content.decode()
    assert panel(page) == {"action": "amend", "status": "VETO", "version": str(game.version)}
    assert "AWS_SECRET" in page  # the form starts from the vetoed code
    amended = scenario.sample("secret").amended
    assert amended is not None
    response = move(client, game, "AMENDED_CODE_SUBMITTED", code=amended.replace("\n", "\r\n"))
    assert response.status_code == 302 and response["Location"] == f"/games/{game.pk}/"
    again = move(client, game, "AMENDED_CODE_SUBMITTED", code=amended)  # a double click: same version and key
    assert again.status_code == 409 and escape(for_student(StaleTurn())) in again.content.decode()
    game = drive(Game.objects.get(pk=game.pk))
    state = state_of(game)
    assert (state.verdict, state.submission.version, state.submission.findings) == (Verdict.APPROVED, 2, [])
    assert state.submission.label == "gateway.py, amended by the proposer"
    assert Event.objects.filter(game=game, name="AMENDED_CODE_SUBMITTED").count() == 1


def test_a_proposer_may_upload_the_amended_file(
    client: Client, version: ScenarioVersion, scenario: DeliberationScenario
) -> None:
    game = drive(started(client, version, sample="secret", seat="proposer"))
    amended = scenario.sample("secret").amended or ""
    response = move(
        client,
        game,
        "AMENDED_CODE_SUBMITTED",
        code="",
        upload=SimpleUploadedFile("gateway.py", amended.encode()),
    )
    assert response.status_code == 302
    state = state_of(drive(Game.objects.get(pk=game.pk)))
    assert state.verdict == Verdict.APPROVED and state.submission.code == amended


def test_an_amendment_that_cannot_be_reviewed_keeps_the_typed_code(
    client: Client, version: ScenarioVersion
) -> None:
    game = drive(started(client, version, sample="secret", seat="proposer"))
    response = move(
        client, game, "AMENDED_CODE_SUBMITTED", code="", upload=SimpleUploadedFile("g.py", b"\xff\xfe bad")
    )
    assert response.status_code == 400 and "not UTF-8 text" in response.content.decode()
    assert Game.objects.get(pk=game.pk).version == game.version  # nothing stored
    response = move(client, game, "AMENDMENT_DECLINED", text="")
    assert response.status_code == 400 and panel(response.content.decode())["action"] == "amend"


def test_a_proposer_who_declines_leaves_the_veto_to_the_business_driver(
    client: Client, version: ScenarioVersion
) -> None:
    game = drive(started(client, version, sample="secret", seat="proposer"))
    response = move(client, game, "AMENDMENT_DECLINED", text="No time to rework this release.")
    assert response.status_code == 302
    state = state_of(drive(Game.objects.get(pk=game.pk)))
    # A hard-coded secret allows no compromise (house rules): the chair declares the veto irreconcilable.
    assert state.verdict == Verdict.REQUEST_CHANGES and state.proposer_declined
    assert any(e.text == "No time to rework this release." for e in state.log)


def test_a_member_gives_opinions_and_is_refused_a_veto_without_a_critical_flaw(
    client: Client, version: ScenarioVersion, scenario: DeliberationScenario
) -> None:
    game = drive(started(client, version, sample="clean", seat="security"))
    page = client.get(f"/games/{game.pk}/").content.decode()
    assert panel(page)["action"] == "opinion" and 'value="VETO"' in page  # the security lead holds a veto
    text = "I veto this on principle."
    response = move(client, game, "OPINION_GIVEN", stance="VETO", confidence="0.9", text=text)
    refused = response.content.decode()
    assert response.status_code == 400 and MoveRefused.NO_CRITICAL_FLAW in refused  # the stance field
    assert escape(text) in refused and re.search(r'value="VETO"[^>]*checked', refused)  # the input is kept
    response = move(client, game, "OPINION_GIVEN", stance="SYNTHESIS", confidence="1.5", text="Fine.")
    assert response.status_code == 400 and "Confidence" in response.content.decode()
    response = move(
        client, game, "OPINION_GIVEN", stance="SYNTHESIS", confidence="0.9", text="Clean; merge it.",
        fix_items="add a docstring example\n\n",
    )  # fmt: skip
    assert response.status_code == 302
    state = state_of(drive(Game.objects.get(pk=game.pk)))
    ballot = state.rounds[0].ballots["security"]
    assert (ballot.stance, ballot.text, ballot.fix_items) == (
        Stance.SYNTHESIS,
        "Clean; merge it.",
        ["add a docstring example"],
    )
    assert state.verdict == Verdict.REQUEST_CHANGES and "add a docstring example" in state.fix_items


def test_a_member_without_a_veto_is_not_offered_one(client: Client, version: ScenarioVersion) -> None:
    game = drive(started(client, version, sample="clean", seat="maintainer"))
    page = client.get(f"/games/{game.pk}/").content.decode()
    assert panel(page)["action"] == "opinion" and 'value="VETO"' not in page
    response = move(client, game, "OPINION_GIVEN", stance="VETO", confidence="0.9", text="Veto.")
    assert response.status_code == 400 and Game.objects.get(pk=game.pk).version == game.version


@pytest.mark.parametrize("offer", [True, False])
def test_the_business_driver_answers_a_veto(client: Client, version: ScenarioVersion, offer: bool) -> None:
    game = drive(started(client, version, sample="deadlock", seat="business"))
    assert panel(client.get(f"/games/{game.pk}/").content.decode())["action"] == "opinion"
    assert (
        move(client, game, "OPINION_GIVEN", stance="OBJECT", confidence="0.9", text="Blocked.").status_code
        == 302
    )
    game = drive(
        Game.objects.get(pk=game.pk)
    )  # the security lead vetoes the shell injection; the AI proposer declines
    page = client.get(f"/games/{game.pk}/").content.decode()
    assert panel(page)["action"] == "compromise" and panel(page)["status"] == "VETO"
    if offer:
        response = move(
            client, game, "COMPROMISE_OFFERED", text="A week of delay costs us a launch.",
            conditions="ship behind a flag\nfix B602 next sprint",
        )  # fmt: skip
        assert response.status_code == 302
        state = state_of(Game.objects.get(pk=game.pk))
        assert state.status == State.DEBATE and state.round == 2
        assert state.current_round and state.current_round.compromise
        assert state.current_round.compromise.conditions == ["ship behind a flag", "fix B602 next sprint"]
        assert "ship behind a flag" in client.get(f"/games/{game.pk}/").content.decode()
    else:
        response = move(client, game, "COMPROMISE_DECLINED", text="No compromise on injection.")
        assert response.status_code == 302
        state = state_of(Game.objects.get(pk=game.pk))
        assert state.verdict == Verdict.REQUEST_CHANGES


def test_moves_out_of_turn_or_without_a_version_are_refused(client: Client, version: ScenarioVersion) -> None:
    game = started(client, version, sample="style", seat="proposer")  # an AI member has the floor first
    assert kind_of(game).next_step(game).actor is Actor.AI
    response = move(client, game, "OPINION_GIVEN", stance="SYNTHESIS", confidence="0.9", text="Me first.")
    not_yet = for_student(InvalidMove("DEBATE", "OPINION_GIVEN", InvalidMove.WRONG_ACTOR))
    assert response.status_code == 409 and escape(not_yet) in response.content.decode()
    response = client.post(f"/games/{game.pk}/move/", {"event": "AMENDMENT_DECLINED", "text": "no"})
    assert response.status_code == 400 and MissingVersion.MESSAGE in response.content.decode()
    response = move(client, game, "NO_SUCH_EVENT")
    illegal = for_student(IllegalEvent("DEBATE", "NO_SUCH_EVENT", ["OPINION_GIVEN"]))
    assert response.status_code == 409 and escape(illegal) in response.content.decode()
    assert Game.objects.get(pk=game.pk).version == game.version


# --- review, downloads, access ----------------------------------------------------------------------------------


def test_the_review_shows_rounds_votes_verdict_and_the_report(
    client: Client, version: ScenarioVersion, scenario: DeliberationScenario
) -> None:
    game = drive(started(client, version, sample="secret"))
    state = state_of(game)
    html = client.get(f"/games/{game.pk}/review/").content.decode()
    assert "APPROVED" in html and "Fix items" in html
    assert html.count('class="vote-chart"') == len(state.rounds) == 2
    assert (
        html.count('<svg role="img"') == 2 and 'class="seg veto"' in html and 'class="seg synthesis"' in html
    )
    for member in scenario.members:
        assert scenario.persona(member).label in html
    first = state.rounds[0].quorum
    assert first is not None and f"Quorum: {first.synthesis} of {first.effective} effective" in html
    report = client.get(f"/games/{game.pk}/export.md")
    assert (
        report.status_code == 200
        and report["Content-Disposition"] == 'attachment; filename="review-report.md"'
    )
    body = report.content.decode()
    assert (
        "### Round 1 — VETO" in body
        and "- **State**: VETO" in body
        and "- **Transition**: VETO → PROPOSAL" in body
    )
    assert "**Verdict**: APPROVED" in body
    ledger = json.loads(client.get(f"/games/{game.pk}/export.json").content)
    assert ledger["format"] == "simulation-export/3" and ledger["kind"] == "deliberation"
    assert ledger["deliberation"]["verdict"] == "APPROVED" and len(ledger["deliberation"]["submissions"]) == 2
    assert [e["name"] for e in ledger["events"]] == list(
        Event.objects.filter(game=game).order_by("seq").values_list("name", flat=True)
    )
    assert len(ledger["transcript"]) == len(state.log)


def test_a_majority_abstain_warning_shows_in_the_review(client: Client, version: ScenarioVersion) -> None:
    # Only a correctness finding: the operations manager and the security lead are outside their field and
    # abstain; the person in the maintainer's seat agrees below the seat's threshold, which counts as abstaining.
    game = drive(started(client, version, source="paste", code="import os\n", seat="maintainer"))
    response = move(client, game, "OPINION_GIVEN", stance="SYNTHESIS", confidence="0.2", text="Not sure.")
    assert response.status_code == 302
    game = drive(Game.objects.get(pk=game.pk))
    state = state_of(game)
    quorum = state.rounds[0].quorum
    assert quorum is not None and (quorum.abstain, quorum.effective) == (3, 1) and state.warnings
    html = client.get(f"/games/{game.pk}/review/").content.decode()
    assert all(f"Warning: {escape(w)}" in html for w in state.warnings)
    assert "below this seat&#x27;s threshold 0.55: counted as an abstention" in html
    assert state.verdict is not None and state.verdict.value in html


def test_another_user_gets_404(client: Client, version: ScenarioVersion) -> None:
    game = drive(started(client, version, sample="secret", seat="proposer"))
    other = Client()
    other.force_login(User.objects.create_user("other", password=PASSWORD))
    for url in (f"/games/{game.pk}/", f"/games/{game.pk}/review/", f"/games/{game.pk}/export.md"):
        assert other.get(url).status_code == 404, url
    assert move(other, game, "AMENDMENT_DECLINED", text="not mine").status_code == 404
    assert Game.objects.get(pk=game.pk).version == game.version


def test_the_websocket_update_redraws_the_live_parts(client: Client, version: ScenarioVersion) -> None:
    game = drive(started(client, version, sample="secret", seat="proposer"))
    html, last = kind_of(game).pages.render_update(game, since_seq=0, full=True)
    assert last == len(state_of(game).log)
    for part in ('id="panels"', 'id="submission"', 'id="rounds"', 'id="stream"'):
        assert part in html
    assert html.count('hx-swap-oob="outerHTML"') == 3 and 'data-action="amend"' in html


def test_an_htmx_move_gets_the_live_parts_back(client: Client, version: ScenarioVersion) -> None:
    """With JavaScript the forms post with HTMX: the answer is the panels (and the rest out of band), a refusal
    with its own status (400 for a bad field), which HTMX swaps so that its sentence shows."""
    game = drive(started(client, version, sample="secret", seat="proposer"))
    refused = client.post(
        f"/games/{game.pk}/move/", {"event": "AMENDMENT_DECLINED", "version": game.version, "text": ""},
        HTTP_HX_REQUEST="true",
    )  # fmt: skip
    html = refused.content.decode()
    assert refused.status_code == 400 and html.startswith('<div id="panels"') and "<html" not in html
    assert panel(html)["action"] == "amend" and 'class="error"' in html
    done = client.post(
        f"/games/{game.pk}/move/", {"event": "AMENDMENT_DECLINED", "version": game.version, "text": "Not now."},
        HTTP_HX_REQUEST="true",
    )  # fmt: skip
    html = done.content.decode()
    assert done.status_code == 200 and panel(html)["version"] == str(game.version + 1)
    assert 'id="rounds" hx-swap-oob="outerHTML"' in html and "Not now." in html


def test_a_share_link_reads_the_review_and_the_report(client: Client, version: ScenarioVersion) -> None:
    game = drive(started(client, version, sample="style"))
    assert client.post(f"/games/{game.pk}/share/").status_code == 302
    game.refresh_from_db()
    reader = Client()  # anonymous: only the link, whose token the share page posts once for the session
    granted = reader.post("/shared/", {"token": game.share_token}, follow=True)
    html = granted.content.decode()
    assert "REQUEST_CHANGES" in html and "Create a read-only link" not in html
    assert game.share_token and game.share_token not in html  # the owner's link is not shown to readers
    report = reader.get(f"/games/{game.pk}/export.md")
    assert report.status_code == 200 and "**Verdict**: REQUEST_CHANGES" in report.content.decode()
    assert reader.get(f"/games/{game.pk}/").status_code == 302  # the game page itself: log in first


def test_the_lobby_offers_the_flagship_first(client: Client, version: ScenarioVersion) -> None:
    """With every kind loaded, the default choice is the first kind of settings.MERCURY_KINDS (the negotiation),
    so a class that clicks "Start a new game" without choosing lands in Mercury, not in a code review."""
    from tests.helpers import mercury_version

    mercury_version()
    lobby = client.get("/").content.decode()
    assert 'value="mercury" checked' in lobby and 'value="code-review" checked' not in lobby
    assert lobby.index('value="mercury"') < lobby.index('value="code-review"')


# --- issue #64: what a person writes is refused at the form when unreadable, and stays text in the report ----------


CLEAN_CODE = "def f(x):\n\treturn x\n"


def field_sentence(text: str, *, one_line: bool = False) -> str:
    """What the platform's text field says of `text`: the deliberation's fields show its sentence, whatever it is
    (for a NUL today Django's CharField answers first, "Null characters are not allowed.")."""
    with pytest.raises(ValidationError) as refused:
        ReadableTextField(one_line=one_line).clean(text)
    message: str = refused.value.messages[0]
    return message


@pytest.mark.parametrize("name", [FORGED_NAME, "ok\x1b[2J.py", "ok\x00.py"], ids=["lines", "esc", "nul"])
def test_a_file_name_must_be_one_readable_line(client: Client, version: ScenarioVersion, name: str) -> None:
    """Finding 5/6: a name with a line break would start lines of its own in the report, a control character
    reach whoever reads it: refused, its sentence next to the field, the code pasted with it kept in the form."""
    code = "def f(x):\n\treturn x\n"
    response = start(client, version, source="paste", code=code, filename=name, seat="maintainer")
    page = response.content.decode()
    assert response.status_code == 400 and escape(field_sentence(name, one_line=True)) in page
    assert escape(code) in page and re.search(r'value="maintainer"[^>]*checked', page)
    assert not Game.objects.exists()


def test_a_file_name_with_markup_stays_text_in_the_markdown_downloads(
    client: Client, version: ScenarioVersion, scenario: DeliberationScenario
) -> None:
    """Finding 5: a file name and an opinion with HTML and Markdown in them, read by a Markdown viewer from
    review-report.md (the page's download) and from the platform's Markdown export: text, no element."""
    name = 'x"><img src=x onerror=alert(1)>.py'
    game = drive(
        started(client, version, source="paste", code="import os\n", filename=name, seat="maintainer")
    )
    assert state_of(game).submission.label == name
    opinion = (
        "Fine.\n\n# Injected heading\n\n- **Verdict**: APPROVED (forged)\n\n<img src=x onerror=alert(2)>"
    )
    fixes = "![pixel](https://tracker.example/p.png)\n| a | b |"
    response = move(client, game, "OPINION_GIVEN", stance="SYNTHESIS", confidence="0.9", text=opinion,
                    fix_items=fixes)  # fmt: skip
    assert response.status_code == 302
    game = drive(Game.objects.get(pk=game.pk))
    state = state_of(game)
    assert state.verdict is not None and state.fix_items == [
        "![pixel](https://tracker.example/p.png)",
        "| a | b |",
    ]
    download = client.get(f"/games/{game.pk}/export.md")
    assert download["Content-Disposition"] == 'attachment; filename="review-report.md"'
    written = (name, "# Injected heading", "APPROVED (forged)", "<img src=x onerror=alert(2)>", "| a | b |",
               "![pixel](https://tracker.example/p.png)")  # fmt: skip
    for body in (download.content.decode(), export_markdown(game=game)):
        assert_inert(body, scenario, state, written=written)


@pytest.mark.parametrize(
    "fields",
    [
        {"source": "paste", "code": "x = 1\x1b[31m\n"},
        {"source": "paste", "code": "x = 1\x00\n"},
        {"source": "diff", "diff": "--- a/x.py\n+++ b/x.py\n@@ -1 +1,2 @@\n x = 1\n+y = 2\x07\n"},
        {"source": "file", "upload": SimpleUploadedFile("esc.py", b"x = 1\x1b[2J\n")},
        {
            "source": "diff",
            "upload": SimpleUploadedFile("c.diff", b"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-x\n+y\x7f\n"),
        },
    ],
    ids=["paste-esc", "paste-nul", "diff-bel", "file-esc", "diff-file-del"],
)
def test_code_with_control_characters_is_refused_at_its_field(
    client: Client, version: ScenarioVersion, fields: dict[str, Any]
) -> None:
    """Finding 6: code is kept verbatim (tabs, line ends) but a control character is refused next to its field,
    in the shared rule's words, and nothing is stored."""
    response = start(client, version, seat="maintainer", **fields)
    page = response.content.decode()
    assert response.status_code == 400 and escape(FIELD_SENTENCES[CONTROL_CHARACTERS]) in page
    assert not Game.objects.exists()
    game = started(client, version, source="paste", code=CLEAN_CODE.replace("\n", "\r\n"), filename="tabs.py")
    assert state_of(game).submission.code == CLEAN_CODE  # tabs kept, the browser's CRLF made LF


def test_an_uploaded_file_name_must_be_one_line() -> None:
    """Django's multipart parser drops unprintable characters from a posted name; the form holds the rule itself."""
    with pytest.raises(ValidationError) as refused:
        forms.read_upload(SimpleUploadedFile("ok.py\n\n# Injected", b"x = 1\n"), limit=1000)
    assert refused.value.messages == [forms.UPLOAD_NAME]
    assert forms.read_upload(SimpleUploadedFile("ok.py", b"x\t= 1\n"), limit=1000) == forms.UploadedCode(
        name="ok.py", text="x\t= 1\n"
    )


@pytest.mark.parametrize("bad", ["\x07", "\x1b[2J", "\x00"], ids=["bel", "esc", "nul"])
def test_an_opinion_with_control_characters_is_refused_and_kept(
    client: Client, version: ScenarioVersion, bad: str
) -> None:
    """Finding 6: BEL/ESC, and text with nothing visible, used to be stored in the opinion. Now the field's
    sentence, 400, the person's text still in the form, nothing stored (a NUL too, on PostgreSQL with no 500)."""
    game = drive(started(client, version, sample="clean", seat="security"))
    text = f"Looks fine{bad} to me."
    response = move(client, game, "OPINION_GIVEN", stance="SYNTHESIS", confidence="0.9", text=text)
    page = response.content.decode()
    # A NUL is refused in any field of any kind's move form with one sentence, before the fields are read.
    refusal = NulInForm.MESSAGE if "\x00" in bad else f"Text: {field_sentence(text)}"
    assert response.status_code == 400 and escape(refusal) in page
    assert f">{escape(text)}</textarea>" in page and panel(page)["action"] == "opinion"
    response = move(client, game, "OPINION_GIVEN", stance="SYNTHESIS", confidence="0.9", text="Fine.",
                    fix_items=f"add a test\nrun it{bad}")  # fmt: skip
    assert response.status_code == 400
    refusal = NulInForm.MESSAGE if "\x00" in bad else f"Fix items: {field_sentence(bad)}"
    assert escape(refusal) in response.content.decode()
    response = move(client, game, "OPINION_GIVEN", stance="SYNTHESIS", confidence="0.9", text="\u200b \u3164")
    assert response.status_code == 400
    assert escape(FIELD_SENTENCES[NO_VISIBLE_TEXT]) in response.content.decode()
    stored = Game.objects.get(pk=game.pk)
    assert stored.version == game.version and "security" not in state_of(stored).rounds[0].ballots


def test_a_proposers_answers_with_control_characters_are_refused(
    client: Client, version: ScenarioVersion
) -> None:
    """Finding 6: the decline's statement, the amended code pasted or uploaded."""
    game = drive(started(client, version, sample="secret", seat="proposer"))
    sentence = escape(FIELD_SENTENCES[CONTROL_CHARACTERS])
    for event, fields in (
        ("AMENDMENT_DECLINED", {"text": "Not\x1b now."}),
        ("AMENDED_CODE_SUBMITTED", {"code": "x = 1\x07\n"}),
        ("AMENDED_CODE_SUBMITTED", {"code": "", "upload": SimpleUploadedFile("g.py", b"x = 1\x1b\n")}),
    ):
        response = move(client, game, event, **fields)
        page = response.content.decode()
        assert response.status_code == 400 and sentence in page, event
        if "text" in fields:
            assert f">{escape(fields['text'])}</textarea>" in page
    assert Game.objects.get(pk=game.pk).version == game.version


def test_a_business_drivers_answers_with_control_characters_are_refused(
    client: Client, version: ScenarioVersion
) -> None:
    """Finding 6: the compromise's argument and conditions, the decline's statement."""
    game = drive(started(client, version, sample="deadlock", seat="business"))
    assert (
        move(client, game, "OPINION_GIVEN", stance="OBJECT", confidence="0.9", text="Blocked.").status_code
        == 302
    )
    game = drive(Game.objects.get(pk=game.pk))
    assert panel(client.get(f"/games/{game.pk}/").content.decode())["action"] == "compromise"
    argument, conditions = "A week of delay costs a launch.", "ship behind a flag"
    for event, fields, bad in (
        ("COMPROMISE_OFFERED", {"text": argument + "\x07", "conditions": conditions}, "text"),
        ("COMPROMISE_OFFERED", {"text": argument, "conditions": conditions + "\x1b[0m"}, "conditions"),
        ("COMPROMISE_DECLINED", {"text": "No\x00 compromise."}, "text"),
    ):
        page = move(client, game, event, **fields).content.decode()
        sentence = escape(
            NulInForm.MESSAGE
            if "\x00" in fields[bad]
            else f"{bad.capitalize()}: {field_sentence(fields[bad])}"
        )
        assert sentence in page and f">{escape(fields['text'])}</textarea>" in page, (event, bad)  # text kept
    assert Game.objects.get(pk=game.pk).version == game.version


# --- issue #64: a page behind the game, and an event the phase does not take ---------------------------------------


def test_a_stale_page_is_told_the_turn_was_played_and_an_event_out_of_phase_is_illegal(
    client: Client, version: ScenarioVersion
) -> None:
    """Finding 7: a form from before the last commit is a StaleTurn (409, "already played"); a current form with
    an event this phase does not take is an IllegalEvent (409, its own sentence): both in `for_student`'s words,
    the person's text kept, nothing stored."""
    game = drive(started(client, version, sample="clean", seat="security"))
    text = "Clean; merge it."
    opinion = {"event": "OPINION_GIVEN", "stance": "SYNTHESIS", "confidence": "0.9", "text": text}
    offer = {"event": "COMPROMISE_OFFERED", "text": text, "conditions": "ship it", "version": game.version}
    illegal = for_student(IllegalEvent("DEBATE", "COMPROMISE_OFFERED", ["OPINION_GIVEN"]))
    for htmx in (False, True):  # a plain post, and HTMX's (its refusals are 409 too)
        headers = {"HX-Request": "true"} if htmx else {}
        stale = client.post(
            f"/games/{game.pk}/move/", opinion | {"version": game.version - 1}, headers=headers
        )
        page = stale.content.decode()
        assert stale.status_code == 409 and escape(for_student(StaleTurn())) in page
        assert f">{escape(text)}</textarea>" in page
        refused = client.post(f"/games/{game.pk}/move/", offer, headers=headers)
        assert refused.status_code == 409 and escape(illegal) in refused.content.decode()
    assert Game.objects.get(pk=game.pk).version == game.version
