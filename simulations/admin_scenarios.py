"""Admin for scenario authoring: drafts edited as YAML, one section at a time (a negotiation's basics, chair,
issues, each role) or whole, and validated by their kind's schema; published as immutable versions; versions
cloned into drafts and compared.

Who may do what: the "Scenario editors" group (migration 0010) may add, change, delete and publish drafts; other
staff with view permissions only read. Every publication is in the admin's history (LogEntry) under the user who
made it, on the draft and on the version it stored.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

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

from .authoring import StructuredForm, parts
from .kinds import get_kind
from .models import ScenarioDraft, ScenarioVersion
from .services.files import scenario_drafts as drafts

EDITOR_ROWS = 36  # the whole document's text area; a section's is sized to its text, within these bounds
SECTION_ROWS = (8, 40)
WHOLE_HELP = (
    "The whole scenario. Saving checks it against the kind's schema; publishing stores it as a new version that "
    "new games can use (games already started keep theirs)."
)


class DraftForm(forms.ModelForm):  # type: ignore[type-arg]
    """A scenario as YAML, whole (a new draft, or on request) or one section of it (`section_key`, which the admin
    sets from the page's address). It is checked as YAML, then the whole document by the kind's schema; every
    problem is listed beside the editor with its section and its path in the document (`Roles: Brazil (BRA) —
    roles[BRA].stances.1.firmness: ...`), and nothing is saved."""

    kind = forms.ChoiceField(choices=[(k, k) for k in settings.MERCURY_KINDS])
    section = forms.CharField(required=False, widget=forms.HiddenInput)
    text = forms.CharField(
        label="Scenario (YAML)",
        widget=forms.Textarea(
            attrs={"rows": EDITOR_ROWS, "cols": 120, "spellcheck": "false", "class": "yaml-editor"}
        ),
        help_text=WHOLE_HELP,
    )
    section_key = drafts.WHOLE

    class Meta:
        model = ScenarioDraft
        fields = ("kind", "based_on")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        document = self.instance.document if self.instance.pk else None
        self.part = drafts.find_section(document, self.section_key) if document else None
        self.fields["section"].initial = self.section_key
        if self.part is not None and document is not None:
            text = drafts.as_editor_yaml(drafts.section_value(document, self.part))
            lines = text.count("\n") + 2
            self.fields["text"].initial = text
            self.fields["text"].label = f"{self.part.title} (YAML)"
            self.fields["text"].widget.attrs["rows"] = max(SECTION_ROWS[0], min(lines, SECTION_ROWS[1]))
            self.fields["text"].help_text = format_html(
                "This section only: <code>{}</code> in the scenario. Saving checks the whole scenario against "
                "the kind's schema and changes nothing else; publishing stores it as a new version.",
                self.part.path,
            )
        elif document:
            self.fields["text"].initial = drafts.as_editor_yaml(document)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        kind, text = cleaned.get("kind"), cleaned.get("text")
        if not kind or text is None:
            return cleaned
        try:
            if self.instance.pk and self.section_key != drafts.WHOLE:
                source = drafts.edit_section(kind=str(kind), document=self.instance.document,
                                             key=self.section_key, text=str(text))  # fmt: skip
            else:
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
    readonly_fields = ("slug", "title", "preview_link", "published", "updated_by", "updated_at", "changes")

    change_list_template = "admin/simulations/scenariodraft_change_list.html"
    change_form_template = "admin/simulations/scenariodraft/change_form.html"

    def _section_key(self, request: HttpRequest, obj: ScenarioDraft | None) -> str:
        """Which part of the draft the page edits: the one a form was posted for (the whole document when it
        names none: a new draft, or a client that posts the whole text), else the address's `section`, else
        the first section."""
        if obj is None or not obj.document:
            return drafts.WHOLE
        if request.method == "POST" and self.has_change_permission(request, obj):
            return request.POST.get("section") or drafts.WHOLE
        asked = request.GET.get("section", "")
        if asked == drafts.WHOLE or drafts.find_section(obj.document, asked):
            return asked
        return next((s.key for s in drafts.sections(obj.document)), drafts.WHOLE)

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        return type(form.__name__, (form,), {"section_key": self._section_key(request, obj)})

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        """A new draft: its kind and the whole text. A draft: the section being edited first (staff who only
        read see it as text, drawn by the template), then what the draft is, then its changes and
        publication."""
        if obj is None:
            return [(None, {"fields": ("kind", "based_on", "text")})]
        about = [
            ("About this draft", {"fields": ("kind", "based_on", "slug", "title", "preview_link")}),
            ("Changes and publication", {"fields": ("changes", "published", "updated_by", "updated_at")}),
        ]
        if not self.has_change_permission(request, obj):
            return about
        return [(self._section_title(request, obj), {"fields": ("section", "text"), "classes": ("draft-content",)}),
                *about]  # fmt: skip

    def _section_title(self, request: HttpRequest, obj: ScenarioDraft) -> str:
        found = drafts.find_section(obj.document, self._section_key(request, obj))
        return found.title if found else "The whole scenario"

    def render_change_form(self, request: HttpRequest, context: dict[str, Any], add: bool = False,
                           change: bool = False, form_url: str = "", obj: Any = None) -> HttpResponse:  # fmt: skip
        if obj is not None and obj.document:
            key = context["adminform"].form.section_key
            context.update(self._sections_context(request, obj, key))
            if not self.has_change_permission(request, obj):  # the section as text, above the other fields
                found = drafts.find_section(obj.document, key)
                value = drafts.section_value(obj.document, found) if found else obj.document
                context["reader_section"] = {"title": self._section_title(request, obj),
                                             "text": drafts.as_editor_yaml(value)}  # fmt: skip
        return super().render_change_form(request, context, add, change, form_url, obj)

    def _sections_context(self, request: HttpRequest, obj: ScenarioDraft, current: str) -> dict[str, Any]:
        """The draft's sections above the editor, each a link, the items of a list grouped under its name; with
        `find`, how often the text occurs in each."""
        find = request.GET.get("find", "").strip()
        counts = drafts.find_in_sections(obj.document, find) if find else {}

        def url(key: str) -> str:
            return "?" + urlencode({"section": key, **({"find": find} if find else {})})

        groups: list[dict[str, Any]] = []
        for section in drafts.sections(obj.document):
            if not groups or section.group != groups[-1]["title"]:
                groups.append({"title": section.group, "sections": []})
            groups[-1]["sections"].append({"key": section.key, "name": section.name, "url": url(section.key),
                                           "current": section.key == current,
                                           "matches": counts.get(section.key, 0)})  # fmt: skip
        return {
            "draft_groups": groups,
            "draft_section": current,
            "draft_find": find,
            "draft_found": sum(counts.values()),
            "draft_whole": {
                "url": url(drafts.WHOLE),
                "current": current == drafts.WHOLE,
                "size": f"{round(drafts.size_of(obj.document), -3):,}",  # about as long as its YAML
            },
        }

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
        """The draft's main fields as forms (the kind's `authoring_fields`), one part at a time (`?part=`, the
        first by default) under a table of contents of every part: sections of text, a grid of stances. Saving
        checks the whole scenario with the kind's schema; its errors show beside the fields at fault (or above
        the form, naming their part) and nothing is saved. Staff who may only read see the same forms,
        disabled."""
        draft = ScenarioDraft.objects.filter(pk=draft_id).first()
        if draft is None or not self.has_view_permission(request, draft):
            raise Http404("No such draft.")
        may_change = self.has_change_permission(request, draft)
        if request.method == "POST" and not may_change:
            raise PermissionDenied
        specs = get_kind(draft.kind).admin.authoring_fields(draft.document)
        pages = parts(specs)
        part = next((p for p in pages if p.key == request.GET.get("part")), pages[0] if pages else None)
        data = request.POST if request.method == "POST" else None
        only = part.fields if part is not None else ()
        form = StructuredForm(specs, draft.document, data, disabled=not may_change, only=only)
        if data is not None and form.is_valid():
            try:
                drafts.save_draft(draft, form.edited(draft.document), user=_user(request))
            except drafts.DraftInvalid as exc:
                form.add_problems(exc.problems)
            else:
                where = f" ({part.title})" if part is not None else ""
                self.log_change(request, draft, f"Edited in the forms editor{where}.")
                self.message_user(request, f"{draft}: saved. Publish it for new games to use it.")
                return redirect(_fields_url(draft, part.key if part is not None else ""))
        at = pages.index(part) if part is not None else 0
        context = {
            **self.admin_site.each_context(request),
            "title": f"{'Edit' if may_change else 'Read'} {draft}",
            "opts": self.model._meta,
            "draft": draft,
            "form": form,
            "may_change": may_change,
            "part": part,
            "toc": _table_of_contents(draft, pages, part),
            "previous": pages[at - 1] if at > 0 else None,
            "next": pages[at + 1] if at + 1 < len(pages) else None,
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
            "body": mark_safe(kind.admin.preview(kind.scenarios.parse(draft.document))),  # noqa: S308  # rendered by the kind's autoescaped template
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
        return format_html('<pre class="scenario-yaml">{}</pre>', text or "No changes yet.")

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
    return get_kind(game.scenario.kind).pages.phase_label(game.phase)


def _fields_url(draft: ScenarioDraft, part: str) -> str:
    url = reverse("admin:simulations_scenariodraft_fields", args=[draft.pk])
    return f"{url}?{urlencode({'part': part})}" if part else url


def _table_of_contents(draft: ScenarioDraft, pages: list[Any], current: Any) -> list[dict[str, Any]]:
    """The forms editor's parts grouped by section: a section split in groups lists its groups under it."""
    toc: list[dict[str, Any]] = []
    for page in pages:
        entry = {"title": page.title, "url": _fields_url(draft, page.key), "current": page == current,
                 "count": len(page.fields), "section": page.section, "parts": []}  # fmt: skip
        if page.title == page.section:
            toc.append(entry)
            continue
        if not toc or toc[-1]["section"] != page.section or toc[-1]["url"]:
            toc.append({**entry, "title": page.section, "url": "", "current": False, "count": 0})
        toc[-1]["parts"].append({**entry, "title": page.title.removeprefix(f"{page.section}: ")})
        toc[-1]["count"] += len(page.fields)
    return toc


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
