"""Admin: scenario versions to browse (content changes arrive as new versions via load_scenario), games read-only.

Scenario versions are immutable because running games are pinned to them; editing a scenario means editing its
YAML and loading it again, which creates a new version and leaves running games untouched.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .models import (
    Checkpoint,
    Event,
    Game,
    ModelCall,
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
    list_display = ("pk", "owner", "scenario", "human_role", "phase", "status", "updated_at")
    list_filter = ("status", "phase", "human_role")
    readonly_fields = ("owner", "scenario", "seed", "status", "phase", "human_role", "version", "created_at",
                       "finished_at")  # fmt: skip
    exclude = ("state",)
    inlines = (VoteInline, EntryInline)


@admin.register(Event)
class EventAdmin(ReadOnly):
    list_display = ("game", "seq", "name", "from_state", "to_state", "actor")
    list_filter = ("name",)


@admin.register(ModelCall)
class ModelCallAdmin(ReadOnly):
    list_display = ("game", "seq", "role", "purpose", "model", "prompt_tokens", "completion_tokens", "status")
    list_filter = ("status", "purpose", "model")


@admin.register(Checkpoint)
class CheckpointAdmin(ReadOnly):
    list_display = ("game", "seq", "after_event", "transcript_seq", "schema_version", "created_at")
    exclude = ("state",)
