"""Admin: scenario versions to browse (content changes arrive as new versions via load_scenario), games read-only,
and the list of models teachers may choose from when starting a game (the only thing edited here).

Scenario versions are immutable because running games are pinned to them; editing a scenario means editing its
YAML and loading it again, which creates a new version and leaves running games untouched.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from .models import (
    Checkpoint,
    Event,
    Game,
    ModelCall,
    ModelChoice,
    ScenarioIssue,
    ScenarioRole,
    ScenarioVersion,
    TranscriptEntry,
    Vote,
)


class ReadOnly(admin.ModelAdmin):  # type: ignore[type-arg]
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class RoleInline(admin.TabularInline):  # type: ignore[type-arg]
    model = ScenarioRole
    fields = ("role_id", "name", "kind", "votes", "public_brief")
    readonly_fields = fields
    extra = 0
    can_delete = False


class IssueInline(admin.TabularInline):  # type: ignore[type-arg]
    model = ScenarioIssue
    fields = ("issue_id", "title", "options")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(ScenarioVersion)
class ScenarioVersionAdmin(ReadOnly):
    list_display = ("slug", "version", "title", "created_at", "source")
    readonly_fields = ("slug", "version", "title", "content_hash", "source", "created_at")
    exclude = ("document",)
    inlines = (RoleInline, IssueInline)


class EntryInline(admin.TabularInline):  # type: ignore[type-arg]
    model = TranscriptEntry
    fields = ("seq", "round", "phase", "speaker", "kind", "visibility", "audience", "text")
    readonly_fields = fields
    extra = 0
    can_delete = False


class VoteInline(admin.TabularInline):  # type: ignore[type-arg]
    model = Vote
    fields = ("issue", "proposal", "ballots", "adopted")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Game)
class GameAdmin(ReadOnly):
    list_display = ("pk", "owner", "scenario", "human_role", "phase", "status", "model", "updated_at")
    list_filter = ("status", "phase", "human_role", "model")
    readonly_fields = ("owner", "scenario", "seed", "status", "phase", "human_role", "version", "created_at",
                       "finished_at", "model_choice", "model", "judge_model")  # fmt: skip
    exclude = ("state", "model_access")
    inlines = (VoteInline, EntryInline)


@admin.register(Event)
class EventAdmin(ReadOnly):
    list_display = ("game", "seq", "name", "from_state", "to_state", "actor")
    list_filter = ("name",)


@admin.register(ModelCall)
class ModelCallAdmin(ReadOnly):
    list_display = ("game", "seq", "role", "purpose", "model", "prompt_tokens", "completion_tokens", "cost_usd",
                    "status", "outcome")  # fmt: skip
    list_filter = ("status", "outcome", "purpose", "model")


@admin.register(Checkpoint)
class CheckpointAdmin(ReadOnly):
    list_display = ("game", "seq", "after_event", "transcript_seq", "schema_version", "created_at")
    exclude = ("state",)


_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


class ModelChoiceForm(forms.ModelForm):  # type: ignore[type-arg]
    """A model entry must be usable as is: a model string, kwargs that are a JSON object, and a variable *name*
    for the key (a pasted key would end up in the database, which must never hold one)."""

    api_key_env = forms.RegexField(
        regex=_ENV_NAME, required=False, max_length=100, label="Key variable",
        help_text="Name of the environment variable that holds the key, e.g. OPENAI_API_KEY; empty: no key.",
        error_messages={"invalid": "Give the name of an environment variable (letters, digits, _), not the key."},
    )  # fmt: skip
    judge_api_key_env = forms.RegexField(
        regex=_ENV_NAME, required=False, max_length=100, label="Judge key variable",
        error_messages={"invalid": "Give the name of an environment variable (letters, digits, _), not the key."},
    )  # fmt: skip

    class Meta:
        model = ModelChoice
        fields = ("label", "model", "api_base", "api_key_env", "kwargs", "judge_model", "judge_api_base",
                  "judge_api_key_env", "judge_kwargs", "enabled", "ordering")  # fmt: skip

    def clean_model(self) -> str:
        model = str(self.cleaned_data.get("model") or "").strip()
        if not model:
            raise forms.ValidationError("Give the litellm model string, e.g. openai/gpt-4o-mini.")
        return model

    def clean_judge_model(self) -> str:
        return str(self.cleaned_data.get("judge_model") or "").strip()

    def _json_object(self, name: str) -> dict[str, Any]:
        value = self.cleaned_data.get(name)
        if value in (None, ""):
            return {}
        if not isinstance(value, dict):
            raise forms.ValidationError('Must be a JSON object, e.g. {"temperature": 0.7}.')
        return value

    def clean_kwargs(self) -> dict[str, Any]:
        return self._json_object("kwargs")

    def clean_judge_kwargs(self) -> dict[str, Any]:
        return self._json_object("judge_kwargs")


@admin.register(ModelChoice)
class ModelChoiceAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    form = ModelChoiceForm
    list_display = ("label", "model", "api_base", "judge_model", "enabled", "ordering")
    list_editable = ("enabled", "ordering")
    list_filter = ("enabled",)
    fieldsets = (
        (None, {"fields": ("label", "model", "api_base", "api_key_env", "kwargs", "enabled", "ordering")}),
        ("Separate judge model (optional)", {
            "fields": ("judge_model", "judge_api_base", "judge_api_key_env", "judge_kwargs"),
            "description": "Leave the judge model empty to let the playing model judge the messages.",
        }),
    )  # fmt: skip
