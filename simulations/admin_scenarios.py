"""Admin for scenario authoring: drafts edited as YAML and validated by their kind's schema, published as
immutable versions; versions cloned into drafts and compared.

Who may do what: the "Scenario editors" group (migration 0010) may add, change, delete and publish drafts; other
staff with view permissions only read. Every publication is in the admin's history (LogEntry) under the user who
made it, on the draft and on the version it stored.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from .authoring import StructuredForm
from .kinds import get_kind
from .models import ScenarioDraft, ScenarioVersion
from .services import scenario_drafts as drafts

EDITOR_ROWS = 36


class DraftForm(forms.ModelForm):  # type: ignore[type-arg]
    """The whole scenario as YAML: checked as YAML, then by the kind's schema; every problem is listed beside the
    editor with its path in the document (`roles[BRA].stances.1.firmness: ...`), and nothing is saved."""

    kind = forms.ChoiceField(choices=[(k, k) for k in settings.MERCURY_KINDS])
    text = forms.CharField(
        label="Scenario (YAML)",
        widget=forms.Textarea(
            attrs={
                "rows": EDITOR_ROWS,
                "cols": 120,
                "spellcheck": "false",
                "style": "font-family: monospace; width: 100%",
            }
        ),  # fmt: skip
        help_text="The whole scenario. Saving checks it against the kind's schema; publishing stores it as a new "
        "version that new games can use (games already started keep theirs).",
    )

    class Meta:
        model = ScenarioDraft
        fields = ("kind", "based_on")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk and self.instance.document:
            self.fields["text"].initial = drafts.as_yaml(self.instance.document)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        kind, text = cleaned.get("kind"), cleaned.get("text")
        if not kind or text is None:
            return cleaned
        try:
            source = drafts.validate(str(kind), drafts.parse_yaml(str(text)))
        except drafts.DraftInvalid as exc:
            raise forms.ValidationError({"text": [str(p) for p in exc.problems]}) from exc
        self.instance.document, self.instance.slug, self.instance.title = (
            source.document,
            source.slug,
            source.title,
        )
        return cleaned


class ImportForm(forms.Form):
    file = forms.FileField(
        help_text="A scenario file as `export_scenario` or *Download* writes it (YAML or .json)."
    )


@admin.register(ScenarioDraft)
class ScenarioDraftAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    form = DraftForm
    list_display = ("slug", "kind", "title", "based_on", "published", "updated_by", "updated_at")
    list_filter = ("kind",)
    readonly_fields = ("slug", "title", "preview_link", "published", "updated_by", "updated_at", "changes",
                       "scenario_yaml")  # fmt: skip
    fields = ("kind", "based_on", "slug", "title", "preview_link", "text", "changes", "published", "updated_by",
              "updated_at")  # fmt: skip

    change_list_template = "admin/simulations/scenariodraft_change_list.html"

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        """Staff who only read see the scenario as text, not an empty editor."""
        fields = [f for f in super().get_fields(request, obj) if f != "scenario_yaml"]
        if obj is not None and not self.has_change_permission(request, obj):
            fields[fields.index("text")] = "scenario_yaml"
        return fields

    @admin.display(description="Scenario (YAML)")
    def scenario_yaml(self, obj: ScenarioDraft) -> str:
        return format_html("<pre style='white-space: pre-wrap'>{}</pre>", drafts.as_yaml(obj.document))

    def get_urls(self) -> list[Any]:
        preview = self.admin_site.admin_view(self.preview_view)
        upload = self.admin_site.admin_view(self.import_view)
        structured = self.admin_site.admin_view(self.structured_view)
        return [path("<int:draft_id>/preview/", preview, name="simulations_scenariodraft_preview"),
                path("<int:draft_id>/fields/", structured, name="simulations_scenariodraft_fields"),
                path("import/", upload, name="simulations_scenariodraft_import"),
                *super().get_urls()]  # fmt: skip

    def import_view(self, request: HttpRequest) -> HttpResponse:
        """Upload a scenario file (YAML, or JSON by its suffix): every scenario in it becomes a draft, or none
        does and the problems are listed."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = ImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["file"]
            fmt = "json" if upload.name.lower().endswith(".json") else "yaml"
            try:
                text = upload.read().decode("utf-8")
                found = drafts.parse_scenario_file(text, fmt=fmt)
            except UnicodeDecodeError:
                form.add_error("file", "The file is not UTF-8 text.")
            except drafts.DraftInvalid as exc:
                for problem in exc.problems:
                    form.add_error("file", str(problem))
            else:
                for kind, source in found:
                    draft = ScenarioDraft.objects.create(kind=kind, slug=source.slug, title=source.title,
                                                         document=source.document, updated_by=_user(request))  # fmt: skip
                    self.log_addition(request, draft, f"Imported from {upload.name}.")
                self.message_user(request, f"{len(found)} draft(s) imported from {upload.name}.")
                return redirect("admin:simulations_scenariodraft_changelist")
        context = {**self.admin_site.each_context(request), "title": "Import a scenario file", "form": form,
                   "opts": self.model._meta}  # fmt: skip
        return TemplateResponse(request, "admin/simulations/scenario_import.html", context)

    @admin.display(description="Preview")
    def preview_link(self, obj: ScenarioDraft) -> str:
        if obj.pk is None:
            return "—"
        url = reverse("admin:simulations_scenariodraft_preview", args=[obj.pk])
        fields = reverse("admin:simulations_scenariodraft_fields", args=[obj.pk])
        return format_html(
            '<a href="{}">As the students will see it (saved content)</a> · '
            '<a href="{}">Edit briefs, options and stances in forms</a>',
            url,
            fields,
        )

    def structured_view(self, request: HttpRequest, draft_id: int) -> HttpResponse:
        """The draft's main fields as forms (the kind's `authoring_fields`): sections of text, a grid of stances.
        Saving checks the whole scenario with the kind's schema; its errors show beside the fields at fault and
        nothing is saved. Staff who may only read see the same forms, disabled."""
        draft = ScenarioDraft.objects.filter(pk=draft_id).first()
        if draft is None or not self.has_view_permission(request, draft):
            raise Http404("No such draft.")
        may_change = self.has_change_permission(request, draft)
        if request.method == "POST" and not may_change:
            raise PermissionDenied
        specs = get_kind(draft.kind).authoring_fields(draft.document)
        data = request.POST if request.method == "POST" else None
        form = StructuredForm(specs, draft.document, data, disabled=not may_change)
        if data is not None and form.is_valid():
            try:
                drafts.save_draft(draft, form.edited(draft.document), user=_user(request))
            except drafts.DraftInvalid as exc:
                form.add_problems(exc.problems)
            else:
                self.log_change(request, draft, "Edited in the forms editor.")
                self.message_user(request, f"{draft}: saved. Publish it for new games to use it.")
                return redirect("admin:simulations_scenariodraft_fields", draft.pk)
        context = {
            **self.admin_site.each_context(request),
            "title": f"{'Edit' if may_change else 'Read'} {draft}",
            "opts": self.model._meta,
            "draft": draft,
            "form": form,
            "may_change": may_change,
        }
        return TemplateResponse(request, "admin/simulations/scenario_fields.html", context)

    def preview_view(self, request: HttpRequest, draft_id: int) -> HttpResponse:
        draft = ScenarioDraft.objects.filter(pk=draft_id).first()
        if draft is None or not self.has_view_permission(request, draft):
            raise Http404("No such draft.")
        kind = get_kind(draft.kind)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Preview of {draft}",
            "opts": self.model._meta,
            "draft": draft,
            "body": mark_safe(kind.preview(kind.parse_scenario(draft.document))),  # noqa: S308  # rendered by the kind's autoescaped template
        }
        return TemplateResponse(request, "admin/simulations/scenario_preview.html", context)

    actions = ("publish_drafts", "rehearse_drafts", "download_yaml")

    @admin.action(
        description="Rehearse: play to the end with bots and the offline model", permissions=["change"]
    )
    def rehearse_drafts(self, request: HttpRequest, queryset: QuerySet[ScenarioDraft]) -> None:
        for draft in queryset:
            try:
                result = drafts.rehearse(draft)
            except drafts.DraftInvalid as exc:
                self.message_user(request, f"{draft}: not valid, not rehearsed: {exc}", messages.ERROR)
                continue
            if result.game is None:
                self.message_user(
                    request, f"{draft}: cannot be rehearsed: {result.problem}", messages.WARNING
                )
                continue
            review = reverse("review", args=[result.game.pk])
            if result.finished:
                summary = rehearsal_summary(result.game)
                self.message_user(request, format_html(
                    '{}: rehearsed to the end ({}). <a href="{}">Read its review</a>.', draft, summary, review))  # fmt: skip
            else:
                self.message_user(request, format_html(
                    '{}: the rehearsal {}. <a href="{}">See where</a>.', draft, result.problem, review),
                    messages.ERROR)  # fmt: skip

    @admin.action(description="Download as a scenario file (YAML)")
    def download_yaml(self, request: HttpRequest, queryset: QuerySet[ScenarioDraft]) -> HttpResponse:
        return _scenario_file(list(queryset.order_by("slug")), "drafts")

    def save_model(self, request: HttpRequest, obj: ScenarioDraft, form: Any, change: bool) -> None:
        obj.updated_by = request.user if request.user.is_authenticated else None  # type: ignore[assignment]
        super().save_model(request, obj, form, change)

    @admin.display(description="Changes from the version it was cloned from")
    def changes(self, obj: ScenarioDraft) -> str:
        if obj.pk is None or obj.based_on is None:
            return "—"
        text = drafts.diff(
            obj.based_on.document, obj.document, before_name=str(obj.based_on), after_name="draft"
        )
        return format_html("<pre style='white-space: pre-wrap'>{}</pre>", text or "No changes yet.")

    def has_publish_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("simulations.publish_scenariodraft")

    @admin.action(description="Publish the selected drafts as new versions", permissions=["publish"])
    def publish_drafts(self, request: HttpRequest, queryset: QuerySet[ScenarioDraft]) -> None:
        for draft in queryset:
            try:
                version, created = drafts.publish(draft, user=_user(request))
            except drafts.DraftInvalid as exc:
                self.message_user(request, f"{draft}: not published: {exc}", messages.ERROR)
                continue
            if not created:
                self.message_user(request, f"{draft}: {version} already has this content; nothing new published.",
                                  messages.WARNING)  # fmt: skip
                continue
            self.log_change(request, draft, f"Published as {version}.")
            self.log_addition(request, version, f"Published from draft {draft.pk}.")
            self.message_user(request, f"{draft}: published as {version}. New games use it from now on.")


def rehearsal_summary(game: Any) -> str:
    """What a rehearsed game decided, in a few words: its issues adopted and rejected, or its final phase."""
    votes = list(game.votes.values_list("adopted", flat=True))
    if votes:
        return f"{sum(votes)} of {len(votes)} issues adopted"
    return get_kind(game.scenario.kind).phase_label(game.phase)


def _user(request: HttpRequest) -> Any:
    return request.user if request.user.is_authenticated else None


def _scenario_file(items: list[Any], name: str) -> HttpResponse:
    """A file `import_scenario` (or an editor) reads back: one YAML document per scenario."""
    stem = items[0].slug if len(items) == 1 else name
    response = HttpResponse(drafts.dump_scenarios(items), content_type="application/yaml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{stem}.yaml"'
    return response


class VersionAuthoring:
    """The authoring actions of the (read-only) version admin: clone into a draft, compare two versions,
    download as a scenario file."""

    @admin.action(description="Download as a scenario file (YAML)")
    def download_yaml(self, request: HttpRequest, queryset: QuerySet[ScenarioVersion]) -> HttpResponse:
        return _scenario_file(list(queryset.order_by("slug", "version")), "scenarios")

    def has_clone_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("simulations.add_scenariodraft")

    @admin.action(description="Edit as a new draft", permissions=["clone"])
    def clone_versions(self, request: HttpRequest, queryset: QuerySet[ScenarioVersion]) -> None:
        for version in queryset:
            draft = drafts.clone(version, user=_user(request))
            admin_self: Any = self
            admin_self.log_addition(request, draft, f"Cloned from {version}.")
            admin_self.message_user(request, f"Draft of {version} created: edit it under Scenario drafts.")

    @admin.action(description="Compare two selected versions")
    def compare_versions(
        self, request: HttpRequest, queryset: QuerySet[ScenarioVersion]
    ) -> HttpResponse | None:
        admin_self: Any = self
        chosen = list(queryset.order_by("slug", "version"))
        if len(chosen) != 2:
            admin_self.message_user(request, "Select exactly two versions to compare.", messages.WARNING)
            return None
        before, after = chosen
        text = drafts.diff(before.document, after.document, before_name=str(before), after_name=str(after))
        context = {
            **admin_self.admin_site.each_context(request),
            "title": f"{before} → {after}",
            "before": before,
            "after": after,
            "diff": text,
            "opts": admin_self.model._meta,
        }
        return TemplateResponse(request, "admin/simulations/scenario_diff.html", context)
