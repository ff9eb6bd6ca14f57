"""Admin: scenario versions to browse, scenario drafts to write and publish (admin_scenarios.py), games read-only,
and the list of models teachers may choose from when starting a game.

Scenario versions are immutable because running games are pinned to them; a change to a scenario is a draft
(cloned from a version, or a file loaded again with load_scenario) published as a new version, which leaves
running games untouched.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html

from . import admin_game_files as game_files
from .admin_scenarios import ScenarioDraftAdmin, VersionAuthoring
from .models import (
    Checkpoint,
    Classroom,
    ClassSession,
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
from .services.files import scenario_drafts as drafts
from .services.people.access import class_scoped, readable_games


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
class ScenarioVersionAdmin(VersionAuthoring, ReadOnly):
    list_display = ("slug", "kind", "version", "title", "created_at", "source")
    list_filter = ("kind", "slug")
    readonly_fields = ("slug", "kind", "version", "title", "content_hash", "source", "created_at", "changes")
    exclude = ("document",)
    inlines = (RoleInline, IssueInline)
    actions = ("clone_versions", "compare_versions", "download_yaml")

    @admin.display(description="Changes from the previous version")
    def changes(self, obj: ScenarioVersion) -> str:
        previous = (
            ScenarioVersion.objects.filter(slug=obj.slug, version__lt=obj.version)
            .order_by("-version")
            .first()
        )
        if previous is None:
            return "The first version."
        text = drafts.diff(previous.document, obj.document, before_name=str(previous), after_name=str(obj))
        return format_html("<pre style='white-space: pre-wrap'>{}</pre>", text or "No changes.")


__all__ = ["ScenarioDraftAdmin"]  # registered in its module


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
    list_display = (
        "pk",
        "owner",
        "scenario",
        "human_role",
        "phase",
        "status",
        "model",
        "updated_at",
        "review",
    )
    list_filter = ("scenario__kind", "scenario__slug", "scenario", "status", "phase", "human_role",
                   ("created_at", admin.DateFieldListFilter), "model")  # fmt: skip
    date_hierarchy = "created_at"
    actions = ("download_exports", "download_outcomes")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Game]:
        """A teacher sees the games of their classes' students; other staff every game."""
        return super().get_queryset(request).filter(pk__in=readable_games(request.user).values("pk"))

    @admin.display(description="Review")
    def review(self, obj: Game) -> str:
        return format_html('<a href="{}">open</a>', reverse("review", args=[obj.pk]))

    @admin.action(description="Download the exports (JSON, one file per game, zipped)")
    def download_exports(self, request: HttpRequest, queryset: QuerySet[Game]) -> HttpResponse:
        return game_files.exports_zip(list(queryset.select_related("scenario").order_by("pk")))

    @admin.action(description="Download the outcomes per issue (CSV, for a class)")
    def download_outcomes(self, request: HttpRequest, queryset: QuerySet[Game]) -> HttpResponse:
        return game_files.outcomes_csv(list(queryset.select_related("scenario", "owner").order_by("pk")))

    readonly_fields = ("owner", "scenario", "seed", "status", "phase", "human_role", "version", "created_at",
                       "finished_at", "model_choice", "model", "judge_model")  # fmt: skip
    exclude = ("state", "model_access")
    inlines = (VoteInline, EntryInline)


@admin.register(Classroom)
class ClassroomAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Admins make classes; a teacher sees the classes they teach (read only, unless also given change rights)."""

    list_display = ("name", "teacher_names", "student_count")
    filter_horizontal = ("teachers", "students")
    search_fields = ("name", "students__username", "teachers__username")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Classroom]:
        rows = super().get_queryset(request)
        return rows.filter(teachers=request.user) if class_scoped(request.user) else rows

    @admin.display(description="Teachers")
    def teacher_names(self, obj: Classroom) -> str:
        return ", ".join(t.get_username() for t in obj.teachers.all())

    @admin.display(description="Students")
    def student_count(self, obj: Classroom) -> int:
        return obj.students.count()


@admin.register(ClassSession)
class ClassSessionAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Teachers run their sessions from their own pages (/classes/); the admin lists every session for admins."""

    list_display = ("title", "code", "teacher", "scenario", "status", "created_at")
    list_filter = ("status",)
    search_fields = ("title", "code", "teacher__username", "members__student__username")
    readonly_fields = ("code", "created_at", "started_at", "ended_at")

    def get_queryset(self, request: HttpRequest) -> QuerySet[ClassSession]:
        rows = super().get_queryset(request)
        return rows.filter(teacher=request.user) if class_scoped(request.user) else rows


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
    list_display = (
        "game",
        "seq",
        "after_event",
        "transcript_seq",
        "keyframe",
        "schema_version",
        "created_at",
    )
    exclude = ("state",)  # a keyframe is ~15 KB of JSON; `changes` (a turn's few hundred bytes) is shown

    @admin.display(boolean=True, description="whole state")
    def keyframe(self, obj: Checkpoint) -> bool:
        return obj.state is not None


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
