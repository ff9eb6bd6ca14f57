"""The admin's model list and the per-game choice: validated entries, the choice offered in the lobby, a game pinned
to its model for every call (turns and judge), the review and export saying which model played, what it cost and
how often the judge fell back, and the export of such a game importing back unchanged."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from simulations.admin import ModelChoiceForm
from simulations.kinds.negotiation.bots import make_policy
from simulations.kinds.negotiation.headless import play_game
from simulations.models import Game, ModelCall, ModelChoice
from simulations.services.content.model_choice import OFFLINE_LABEL
from simulations.services.files.export import export_game
from simulations.services.files.import_game import import_game
from tests.helpers import mercury_version

pytestmark = pytest.mark.django_db

JUDGE_PROMPT = "You read one message"
KEY = "sk-test-not-a-real-key-123"


def _form(**fields: Any) -> ModelChoiceForm:
    data = {"label": "Mini", "model": "openai/gpt-4o-mini", "kwargs": "{}", "judge_kwargs": "{}", "ordering": 0,
            "enabled": "on"} | fields  # fmt: skip
    return ModelChoiceForm(data=data)


def test_the_admin_form_refuses_unusable_entries() -> None:
    assert _form().is_valid()
    for kwargs in ("[1, 2]", '"hot"', "3", "{not json"):
        form = _form(kwargs=kwargs)
        assert not form.is_valid() and "kwargs" in form.errors, kwargs
    assert "judge_kwargs" in _form(judge_kwargs="[]").errors
    assert "model" in _form(model="   ").errors
    # A pasted key is refused: the database must hold only the variable's name.
    assert "api_key_env" in _form(api_key_env=KEY).errors
    assert "judge_api_key_env" in _form(judge_api_key_env="sk live key").errors
    saved = _form(kwargs='{"temperature": 0.2}', api_key_env="MINI_KEY").save()
    assert saved.kwargs == {"temperature": 0.2} and saved.api_key_env == "MINI_KEY"


def test_the_admin_pages_list_and_add_models() -> None:
    admin = User.objects.create_superuser("root", password="a-long-admin-pass-9")
    client = Client()
    client.force_login(admin)
    page = client.post(
        "/admin/simulations/modelchoice/add/",
        {"label": "Local", "model": "openai/llama", "api_base": "http://127.0.0.1:8080/v1", "kwargs": "[]",
         "judge_kwargs": "{}", "ordering": 1, "enabled": "on"},
    )  # fmt: skip
    assert page.status_code == 200 and b"JSON object" in page.content and not ModelChoice.objects.exists()
    page = client.post(
        "/admin/simulations/modelchoice/add/",
        {"label": "Local", "model": "openai/llama", "api_base": "http://127.0.0.1:8080/v1", "kwargs": "{}",
         "judge_kwargs": "{}", "ordering": 1, "enabled": "on"},
    )  # fmt: skip
    assert page.status_code == 302 and ModelChoice.objects.get().api_base == "http://127.0.0.1:8080/v1"
    assert b"Local" in client.get("/admin/simulations/modelchoice/").content


def _lobby_client() -> tuple[User, Client]:
    mercury_version()
    user = User.objects.create_user("teacher", password="a-long-test-passphrase-42")
    client = Client()
    client.force_login(user)
    return user, client


def test_the_lobby_offers_the_built_in_model_and_the_enabled_entries() -> None:
    _, client = _lobby_client()
    page = client.get("/").content.decode()
    assert 'name="model"' in page and "<select" not in page  # nothing to choose yet: the default, hidden
    ModelChoice.objects.create(label="Second", model="openai/gpt-4o", ordering=2)
    ModelChoice.objects.create(label="First", model="openai/gpt-4o-mini", ordering=1)
    ModelChoice.objects.create(label="Retired", model="openai/gpt-3.5-turbo", enabled=False)
    page = client.get("/").content.decode()
    assert (
        page.index(OFFLINE_LABEL) < page.index(">First<") < page.index(">Second<") and "Retired" not in page
    )
    # Starting with the default pins the settings' model; a disabled entry cannot be chosen.
    client.post("/games/new/", {"model": "default"})
    game = Game.objects.get()
    assert (game.model, game.judge_model, game.model_choice) == ("mercury-offline/default",) * 2 + (None,)
    retired = ModelChoice.objects.get(label="Retired")
    response = client.post("/games/new/", {"model": str(retired.pk)}, follow=True)
    assert Game.objects.count() == 1 and b"That model is not offered" in response.content


class Recorder:
    """litellm.completion answered by mock_response; the judge answers valid JSON for even calls only."""

    def __init__(self) -> None:
        self.turns: list[dict[str, Any]] = []
        self.judged: list[dict[str, Any]] = []
        self.invalid_answers = 0

    def install(self, monkeypatch: pytest.MonkeyPatch, *, judge_valid: bool | None = None) -> None:
        import litellm

        original = litellm.completion

        def completion(*args: Any, **kwargs: Any) -> Any:
            if kwargs["messages"][0]["content"].startswith(JUDGE_PROMPT):
                self.judged.append(kwargs)
                valid = judge_valid if judge_valid is not None else len(self.judged) % 2 == 0
                if not valid:
                    self.invalid_answers += 1
                answer = '{"support": {"2": ["2.1"]}}' if valid else "They seem keen."
            else:
                self.turns.append(kwargs)
                answer = "Our delegation supports 2.1 and asks for financing."
            return original(*args, mock_response=answer, **kwargs)

        monkeypatch.setattr(litellm, "completion", completion)


def _choice(**fields: Any) -> ModelChoice:
    return ModelChoice.objects.create(
        **({"label": "Mini", "model": "openai/gpt-4o-mini", "api_base": "http://127.0.0.1:9/v1",
            "api_key_env": "MERCURY_TEST_MINI_KEY", "kwargs": {"temperature": 0.2}, "judge_model": "openai/gpt-4o",
            "judge_api_key_env": "MERCURY_TEST_JUDGE_KEY"} | fields)
    )  # fmt: skip


def test_a_game_started_with_a_chosen_model_uses_it_for_every_call(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    monkeypatch.setenv("MERCURY_TEST_MINI_KEY", KEY)
    monkeypatch.setenv("MERCURY_TEST_JUDGE_KEY", "judge-" + KEY)
    assert settings.MERCURY_MODEL == "mercury-offline/default"  # the settings' model stays the offline one
    user, client = _lobby_client()
    choice = _choice()
    client.post("/games/new/", {"model": str(choice.pk)})
    game = Game.objects.get()
    # Pinned: later edits to the entry change nothing for this game.
    ModelChoice.objects.filter(pk=choice.pk).update(
        model="openai/gpt-3.5-turbo", api_base="http://elsewhere/"
    )
    recorder = Recorder()
    recorder.install(monkeypatch)
    game = play_game(game_id=game.pk, policy=make_policy("advocate", "CAN"))
    assert game.phase == "REVIEW"
    assert recorder.turns and recorder.judged
    for sent in recorder.turns:
        assert (sent["model"], sent["api_base"], sent["api_key"], sent["temperature"]) == (
            "openai/gpt-4o-mini", "http://127.0.0.1:9/v1", KEY, 0.2,
        )  # fmt: skip
    for sent in recorder.judged:
        assert (sent["model"], sent.get("api_base"), sent["api_key"]) == (
            "openai/gpt-4o",
            None,
            "judge-" + KEY,
        )
    calls = ModelCall.objects.filter(game=game)
    assert {c.model for c in calls.exclude(purpose="judge")} == {"openai/gpt-4o-mini"}
    assert {c.model for c in calls.filter(purpose="judge")} == {"openai/gpt-4o"}
    assert calls.filter(purpose="judge").count() == len(recorder.judged)
    # The key is never stored: not on the game, not in any call row.
    stored = json.dumps(list(Game.objects.filter(pk=game.pk).values())[0], default=str)
    stored += json.dumps(list(calls.values()), default=str)
    assert KEY not in stored and "MERCURY_TEST_MINI_KEY" in stored

    data = export_game(game=game)
    assert (data["game"]["model"], data["game"]["judge_model"]) == ("openai/gpt-4o-mini", "openai/gpt-4o")
    usage = data["token_usage"]
    assert (
        usage["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in data["model_calls"]))
        and usage["cost_usd"] > 0
    )
    assert usage["per_role"]["judge"]["cost_usd"] > 0 and usage["per_role"]["CHN"]["cost_usd"] > 0
    judged = data["judge_calls"]
    assert (judged["calls"], judged["fallback"], judged["failed"]) == (
        len(recorder.judged), recorder.invalid_answers, 0,
    )  # fmt: skip
    assert judged["fallback_rate"] == pytest.approx(recorder.invalid_answers / len(recorder.judged), abs=1e-4)
    assert 0 < judged["fallback_rate"] < 1

    page = client.get(f"/games/{game.pk}/review/").content.decode()
    assert "Played by <code>openai/gpt-4o-mini</code>" in page
    assert "messages judged by <code>openai/gpt-4o</code>" in page
    assert f"fallback rate {judged['fallback_rate']:.0%}" in page and "cost: $" in page


def test_a_game_whose_judge_always_fell_back_exports_and_imports_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every reading fell back to the rules, so the game replays; costs and outcomes survive the round trip."""
    monkeypatch.setenv("MERCURY_TEST_MINI_KEY", KEY)
    mercury_version()
    choice = _choice(judge_model="", judge_api_key_env="")
    out = StringIO()
    recorder = Recorder()
    recorder.install(monkeypatch, judge_valid=False)
    call_command("play", "--role", "EU", "--seed", "6", "--model", "Mini", "--quiet", stdout=out)
    game = Game.objects.get(pk=json.loads(out.getvalue().splitlines()[-1])["game_id"])
    assert game.model_choice == choice and game.judge_model == game.model == "openai/gpt-4o-mini"
    exported = json.loads(json.dumps(export_game(game=game)))
    assert {c["outcome"] for c in exported["model_calls"] if c["purpose"] == "judge"} == {"fallback"}
    assert exported["judge_calls"]["fallback_rate"] == 1.0
    game.delete()
    imported = import_game(data=exported)
    again = json.loads(json.dumps(export_game(game=imported)))
    again["game"]["id"] = exported["game"]["id"]
    assert again == exported


def test_play_takes_a_model_by_label_or_model_string_and_names_the_choices() -> None:
    mercury_version()
    ModelChoice.objects.create(label="Offline twin", model="mercury-offline/default")
    out = StringIO()
    call_command("play", "--role", "TZA", "--seed", "2", "--model", "offline twin", "--quiet", stdout=out)
    game = Game.objects.get(pk=json.loads(out.getvalue().splitlines()[-1])["game_id"])
    assert (
        game.phase == "REVIEW" and game.model_choice is not None and game.model_choice.label == "Offline twin"
    )
    with pytest.raises(
        CommandError, match=r"That model is not offered.*'Offline twin' \(mercury-offline/default\)"
    ):
        call_command("play", "--role", "TZA", "--model", "openai/gpt-9", "--quiet", stdout=StringIO())
