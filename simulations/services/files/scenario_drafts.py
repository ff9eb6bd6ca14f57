"""Scenario drafts: written in admin, validated by their kind's schema, published as immutable versions.

A draft is free to change; nothing plays it. Publishing validates it once more and stores its document as a
ScenarioVersion exactly as `load_scenario` stores a file (same content, same version), so games that pinned an
earlier version keep it. The lobby only ever lists versions, so only published content reaches students.
"""

from __future__ import annotations

import difflib
import json
import logging
from dataclasses import dataclass, replace
from typing import Any

import yaml
from django.conf import settings
from django.contrib.auth.models import User
from pydantic import ValidationError

from simulations.ai.gateway import ModelFailure
from simulations.engine.errors import MachineError
from simulations.kinds import ScenarioSource, Seat, all_kinds, get_kind
from simulations.models import Game, ScenarioDraft, ScenarioVersion
from simulations.services.content.model_choice import OFFLINE
from simulations.services.content.scenarios import store_scenario
from simulations.services.ledger.turns import create_game
from simulations.services.play.headless import play_to_end

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Problem:
    """One schema error: where in the document (a readable path), what is wrong there, and the location as
    keys and list indexes (for the structured editor to put it beside its field; empty when not known).
    `section`: the title of the editor's section it is in, when the draft is edited section by section."""

    where: str
    what: str
    loc: tuple[str | int, ...] = ()
    section: str = ""

    def __str__(self) -> str:
        text = f"{self.where}: {self.what}" if self.where else self.what
        return f"{self.section} — {text}" if self.section else text


class DraftInvalid(Exception):
    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


def validate(kind: str, document: Any) -> ScenarioSource:
    """The document as its kind would store it, or DraftInvalid listing every problem with its path."""
    if not isinstance(document, dict):
        raise DraftInvalid([Problem("", "the scenario must be a mapping of fields (name: value)")])
    try:
        return get_kind(kind).scenarios.source_of(document)
    except ValidationError as exc:
        raise DraftInvalid([_problem(document, e) for e in exc.errors()]) from exc
    except ValueError as exc:  # a kind's own cross-checks raised outside pydantic
        raise DraftInvalid([Problem("", str(exc))]) from exc


def _problem(document: dict[str, Any], error: Any) -> Problem:
    """A pydantic error located the way an editor reads the YAML: `roles[BRA].stances.1.firmness`, naming list
    items by their id where they have one."""
    parts: list[str] = []
    node: Any = document
    for key in error["loc"]:
        if isinstance(key, int) and isinstance(node, list) and 0 <= key < len(node):
            item = node[key]
            label = item.get("id") if isinstance(item, dict) else None
            index = f"[{label if label is not None else key}]"
            if parts:
                parts[-1] += index
            else:
                parts.append(index)
            node = item
        else:
            parts.append(str(key))
            node = node.get(key) if isinstance(node, dict) else None
    return Problem(".".join(parts), error["msg"], tuple(error["loc"]))


def parse_yaml(text: str) -> Any:
    """The editor's text as data; DraftInvalid (with the line) when it is not YAML."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        raise DraftInvalid(
            [Problem(where, f"not valid YAML ({getattr(exc, 'problem', None) or exc})")]
        ) from exc


def as_yaml(document: Any) -> str:
    """A document as files and diffs show it: fields in the schema's order, text kept readable."""
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100_000)  # no folded lines


class _BlockDumper(yaml.SafeDumper):
    """Text of several lines as a literal block (`|`), each line as it is, rather than a quoted string where a
    line break is written as a blank line. PyYAML quotes a text a block cannot hold (trailing spaces, say)."""


def _represent_text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|" if "\n" in text else None)


_BlockDumper.add_representer(str, _represent_text)


def as_editor_yaml(value: Any) -> str:
    """A document or a section of one as the editor shows it: as `as_yaml`, texts of several lines as blocks.
    It reads back as the same value."""
    return yaml.dump(value, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=100_000)


# --- sections: a draft edited one part at a time -----------------------------------------------------------------
# A negotiation is 186,000 characters of YAML, too much for one text area. The editor shows one section at a time,
# derived from the document alone, so every kind gets them: the top-level fields that hold plain values (the
# scenario's basics), then each other top-level field in the document's order, a long list of items (a
# negotiation's roles) one item a section. Saving a section puts its value back in place of the old one and checks
# the whole document; everything else stays exactly as it was, key order included.

WHOLE = "all"  # the key that stands for the whole document
BASICS = "basics"
# Characters (as JSON, quicker to measure than YAML) beyond which a list of mappings is edited item by item.
LONG_LIST = 10_000


@dataclass(frozen=True)
class Section:
    """One part of a scenario document edited on its own: the top-level fields with plain values (`BASICS`), one
    top-level field, or one item (`item`, its index) of the long list at `fields[0]`."""

    key: str  # in the editor's address: "basics", "chair", "roles.BRA" (an item by its id, else its number)
    title: str
    fields: tuple[str, ...]
    item: int | None = None
    group: str = ""  # an item's list, as the title names it ("Roles")

    @property
    def name(self) -> str:
        """The title within its group ("Brazil (BRA)")."""
        return self.title.removeprefix(f"{self.group}: ") if self.group else self.title

    @property
    def path(self) -> str:
        """Where it is in the document, as the schema's problems name it."""
        if self.key == BASICS:
            return ", ".join(self.fields)
        if self.item is None:
            return self.fields[0]
        return f"{self.fields[0]}[{self.key.split('.', 1)[1]}]"


def _plain(value: Any) -> bool:
    return not isinstance(value, dict | list)


def _label(field: str) -> str:
    return field.replace("_", " ").capitalize()


def sections(document: dict[str, Any]) -> list[Section]:
    """The document's sections in the editor's order: basics first, then the other top-level fields in the
    document's order."""
    basics = tuple(k for k, v in document.items() if _plain(v))
    out = [Section(BASICS, "Scenario basics", basics)] if basics else []
    for field, value in document.items():
        if _plain(value):
            continue
        items = value if isinstance(value, list) else []
        if items and all(isinstance(i, dict) for i in items) and size_of(value) > LONG_LIST:
            out += _item_sections(field, items)
        else:
            out.append(Section(field, _label(field), (field,)))
    return out


def size_of(value: Any) -> int:
    """About as many characters as the value's YAML (its JSON's: a tenth of the time to write)."""
    return len(json.dumps(value, ensure_ascii=False, default=str))


def _item_sections(field: str, items: list[dict[str, Any]]) -> list[Section]:
    ids = [str(i.get("id", "")) for i in items]
    by_id = all(ids) and len(set(ids)) == len(ids) and all(i != WHOLE and "." not in i for i in ids)
    out = []
    for n, item in enumerate(items):
        name = item.get("name") or item.get("title")
        what = f"{name} ({ids[n]})" if name and ids[n] else name or ids[n] or f"item {n + 1}"
        key = f"{field}.{ids[n] if by_id else n + 1}"
        out.append(Section(key, f"{_label(field)}: {what}", (field,), n, _label(field)))
    return out


def find_section(document: dict[str, Any], key: str) -> Section | None:
    return next((s for s in sections(document) if s.key == key), None)


def section_value(document: dict[str, Any], section: Section) -> Any:
    """What the section's text area holds: the basics as a mapping, a field's value, or the item."""
    if section.key == BASICS:
        return {k: document[k] for k in section.fields}
    value = document[section.fields[0]]
    return value if section.item is None else value[section.item]


def with_section(document: dict[str, Any], section: Section, value: Any) -> dict[str, Any]:
    """A new document with `value` in place of the section's old value; every other field and item is the same
    object as before, in the same place. The basics take a mapping: fields left out are removed, new ones
    follow the last of them; a field that has its own section is refused (DraftInvalid)."""
    if section.key == BASICS:
        return _with_basics(document, section, value)
    field = section.fields[0]
    if section.item is not None:
        items = list(document[field])
        items[section.item] = value
        value = items
    return {k: (value if k == field else v) for k, v in document.items()}


def _with_basics(document: dict[str, Any], section: Section, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DraftInvalid([Problem("", "this section must be a mapping of fields (name: value)",
                                    section=section.title)])  # fmt: skip
    elsewhere = [k for k in value if k in document and k not in section.fields]
    if elsewhere:
        raise DraftInvalid([Problem(str(k), "has its own section: edit it there", section=section.title)
                            for k in elsewhere])  # fmt: skip
    last = max((n for n, k in enumerate(document) if k in section.fields), default=-1)
    out: dict[str, Any] = {}
    for n, (k, v) in enumerate(document.items()):
        if k not in section.fields:
            out[k] = v
        elif k in value:
            out[k] = value[k]
        if n == last:
            out.update((k2, v2) for k2, v2 in value.items() if k2 not in document)
    if last < 0:
        out.update(value)
    return out


def section_of(document: dict[str, Any], loc: tuple[str | int, ...]) -> Section | None:
    """The section a location in the document is in (None: the document's top level)."""
    if not loc:
        return None
    for section in sections(document):
        if loc[0] in section.fields and (section.item is None or loc[1:2] == (section.item,)):
            return section
    return None


def edit_section(*, kind: str, document: dict[str, Any], key: str, text: str) -> ScenarioSource:
    """The document with one section's text put in its place, validated whole by the kind's schema. Raises
    DraftInvalid with each problem named by its section (and the line, for YAML that does not parse)."""
    section = find_section(document, key)
    if section is None:
        raise DraftInvalid([Problem("", "this section is no longer in the scenario: open the draft again")])
    try:
        value = parse_yaml(text)
    except DraftInvalid as exc:
        raise DraftInvalid([replace(p, section=section.title) for p in exc.problems]) from exc
    edited = with_section(document, section, value)
    try:
        return validate(kind, edited)
    except DraftInvalid as exc:
        raise DraftInvalid([_in_section(edited, p, section) for p in exc.problems]) from exc


def _in_section(document: dict[str, Any], problem: Problem, edited: Section) -> Problem:
    found = section_of(document, problem.loc)
    if found is None and problem.loc[:1] and problem.loc[0] in edited.fields:  # a field the edit removed
        found = edited
    return replace(problem, section=found.title if found else "The scenario")


def find_in_sections(document: dict[str, Any], text: str) -> dict[str, int]:
    """How many times `text` occurs (case ignored) in each section's text as the editor shows it, by key."""
    needle = text.casefold()
    return {
        s.key: as_editor_yaml(section_value(document, s)).casefold().count(needle) for s in sections(document)
    }


def save_draft(draft: ScenarioDraft, document: Any, *, user: User | None) -> ScenarioDraft:
    """Validate and store the draft's new content (DraftInvalid and nothing stored if it is not valid)."""
    source = validate(draft.kind, document)
    draft.document, draft.slug, draft.title = source.document, source.slug, source.title
    draft.updated_by = user
    draft.save()
    return draft


def clone(version: ScenarioVersion, *, user: User | None) -> ScenarioDraft:
    """A new draft with a published version's content, to edit into the next version (or, with a new slug or
    id in the document, into a new scenario)."""
    return ScenarioDraft.objects.create(
        kind=version.kind, slug=version.slug, title=version.title, document=version.document,
        based_on=version, updated_by=user,
    )  # fmt: skip


def publish(draft: ScenarioDraft, *, user: User | None) -> tuple[ScenarioVersion, bool]:
    """Store the draft as a version: (version, True) when new; (the existing version, False) when a version
    of this scenario already has exactly this content."""
    source = validate(draft.kind, draft.document)
    who = user.get_username() if user is not None else "unknown"
    version, created = store_scenario(
        kind=get_kind(draft.kind), source=source, origin=f"admin draft, by {who}"
    )
    draft.published = version
    draft.save(update_fields=["published"])
    return version, created


def diff(before: dict[str, Any] | None, after: dict[str, Any], *, before_name: str, after_name: str) -> str:
    """A unified diff of two documents as YAML (empty when they are the same)."""
    old = as_yaml(before).splitlines(keepends=True) if before is not None else []
    new = as_yaml(after).splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, fromfile=before_name, tofile=after_name, n=2))


# --- scenario files: export and import (YAML or JSON) ----------------------------------------------------------
# A scenario file holds one or more documents `{kind: <kind>, scenario: <the kind's document>}`; YAML separates
# several with `---`, JSON holds a list. Exporting what was imported gives the same text back. A kind whose format
# is a published one of its own (practice conversations: seed 001's JSON) also reads and writes that document
# bare, so a file made elsewhere imports as it is and one scenario exports as the same file (`ScenarioBook.bare_document`).

FORMATS = ("yaml", "json")


def dump_scenarios(items: list[ScenarioVersion | ScenarioDraft], *, fmt: str = "yaml") -> str:
    """Scenario versions or drafts as one file's text."""
    docs = [{"kind": item.kind, "scenario": item.document} for item in items]
    if fmt == "json" and len(items) == 1 and _bare_kind(items[0].document) == items[0].kind:
        return json.dumps(items[0].document, indent=2, ensure_ascii=False) + "\n"
    if fmt == "json":
        return json.dumps(docs if len(docs) != 1 else docs[0], indent=2, ensure_ascii=False) + "\n"
    return "---\n".join(as_yaml(doc) for doc in docs)


def parse_scenario_file(text: str, *, fmt: str) -> list[tuple[str, ScenarioSource]]:
    """(kind, validated source) for each document of a scenario file. Raises DraftInvalid (naming the document
    and the path in it) if any document is not valid; then nothing is to be stored."""
    try:
        if fmt == "json":
            data = json.loads(text)
            docs = data if isinstance(data, list) else [data]
        else:
            docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise DraftInvalid([Problem("", f"not valid {fmt.upper()} ({exc})")]) from exc
    found: list[tuple[str, ScenarioSource]] = []
    for n, doc in enumerate(docs, start=1):
        bare = _bare_kind(doc)
        if bare:
            doc = {"kind": bare, "scenario": doc}
        if not isinstance(doc, dict) or set(doc) != {"kind", "scenario"}:
            raise DraftInvalid([Problem(f"document {n}", "must have exactly two fields: kind and scenario")])
        if doc["kind"] not in settings.MERCURY_KINDS:
            raise DraftInvalid(
                [Problem(f"document {n}.kind", f"not a kind this site plays ({doc['kind']!r})")]
            )
        try:
            found.append((str(doc["kind"]), validate(str(doc["kind"]), doc["scenario"])))
        except DraftInvalid as exc:
            raise DraftInvalid([Problem(f"document {n}.scenario.{p.where}".rstrip("."), p.what)
                                for p in exc.problems]) from exc  # fmt: skip
    return found


def _bare_kind(document: Any) -> str:
    """The installed kind that reads `document` bare (without the `{kind, scenario}` envelope), or ""."""
    for kind in all_kinds():
        if kind.scenarios.bare_document(document):
            return kind.name
    return ""


# --- rehearsal: the draft played to the end by bots ------------------------------------------------------------

REHEARSAL_SUFFIX = "--rehearsal"  # rehearsals are versions of their own, unlisted scenario


@dataclass(frozen=True)
class Rehearsal:
    game: Game | None
    finished: bool
    problem: str  # empty when the game reached its end


def rehearse(draft: ScenarioDraft, *, seed: int = 1) -> Rehearsal:
    """Play the draft's content to the end, as a real game with the offline model everywhere and a bot in the
    student's seat (the kind says which), stored under an unlisted scenario `<slug>--rehearsal` so its review
    can be read like any game's. What stops it (a refused move, a content error) is the rehearsal's finding."""
    source = validate(draft.kind, draft.document)
    kind = get_kind(draft.kind)
    try:
        role, options = kind.admin.rehearsal(source.model)
    except ValueError as exc:
        return Rehearsal(None, False, str(exc))
    unlisted = replace(source, slug=f"{source.slug}{REHEARSAL_SUFFIX}"[:64])
    version, _ = store_scenario(
        kind=kind, source=unlisted, origin=f"rehearsal of draft {draft.pk}", listed=False
    )
    game = create_game(scenario_version=version, seed=seed, model=OFFLINE, options=options)
    try:
        game = play_to_end(game, bot=kind.headless.bot(game, Seat(role=role, human=None, say=log.info)))
    except (MachineError, ModelFailure, ValueError, RuntimeError) as exc:
        game.refresh_from_db()
        return Rehearsal(game, False, f"stopped in {kind.pages.phase_label(game.phase)}: {exc}")
    return Rehearsal(game, game.finished_at is not None, "")
