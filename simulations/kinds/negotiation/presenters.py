"""What the student sees of a game: one context builder shared by the pages and the websocket consumer."""

from __future__ import annotations

import hashlib
import threading
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.utils.safestring import SafeString

from simulations.engine.visibility import visible_to
from simulations.kinds.negotiation import machine, rules
from simulations.kinds.negotiation.entries import kept_entries
from simulations.kinds.negotiation.games import scenario_of_version, seated, state_of
from simulations.kinds.negotiation.machine import Status
from simulations.kinds.negotiation.prompts import SeenEntry
from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import GameState
from simulations.models import Game
from simulations.services.pages.fragments import fragment
from simulations.services.pages.region_memo import render_region
from simulations.services.policy.form_keys import new_form_key

PHASES: dict[str, str] = {
    Status.ROLE_SELECTION: "Choose your delegation",
    Status.ROUND_1_OPENING_STATEMENTS: "Round 1 · Opening statements",
    Status.ROUND_2_SELECT_CONVO_1: "Round 2 · Private talks",
    Status.ROUND_2_CONVERSATION_ACTIVE: "Round 2 · Private talks",
    Status.ROUND_2_SELECT_CONVO_2: "Round 2 · Private talks",
    Status.ROUND_2_TALKS: "Round 2 · Private talks",
    Status.ISSUE_INTRO: "Round 3 · Public debate",
    Status.ISSUE_DEBATE_ROUND_1: "Round 3 · Public debate",
    Status.ISSUE_DEBATE_ROUND_2: "Round 3 · Public debate",
    Status.ISSUE_VOTE: "Round 3 · Vote",
    Status.REVIEW: "Review",
}


def phase_label(phase: str) -> str:
    return PHASES.get(phase, phase.replace("_", " ").title())


@dataclass(frozen=True)
class EntryView:
    seq: int
    speaker: str
    speaker_name: str
    kind: str
    text: str
    private: bool
    round: int
    issue: str
    mine: bool
    divider: str = ""  # a heading before this entry when it opens a round or an issue ("" when it does not)

    @property
    def is_chair(self) -> bool:
        return self.kind in ("chair", "result")


ROUND_TITLES = {1: "Round 1 of 3 · Opening statements", 2: "Round 2 of 3 · Private talks", 3: "Round 3 of 3 · Debate and votes"}  # fmt: skip


def _divider(scenario: Scenario, entry: SeenEntry, before: tuple[int, str] | None) -> str:
    """The heading shown before `entry` when it is the first of its round or (in Round 3) of its issue."""
    if before == (entry.round, entry.issue):
        return ""
    ids = [i.id for i in scenario.issues]
    if entry.round == 3 and entry.issue in ids:
        number = ids.index(entry.issue) + 1
        return f"Issue {number} of {len(scenario.issues)} · {scenario.issue(entry.issue).title}"
    if before is not None and before[0] == entry.round:
        return ""  # the same round, between issues (the chair's closing lines carry no issue)
    return ROUND_TITLES.get(entry.round, "")


def entry_views(
    scenario: Scenario, human: str, rows: Sequence[SeenEntry], *, before: tuple[int, str] | None = None
) -> list[EntryView]:
    """The student's view of entries: public ones and their own private talks (never anyone else's), each with
    the divider it opens. `before`: the round and issue of the last entry the reader already has."""
    views = []
    for e in rows:
        if human and not visible_to(e, human):
            continue
        views.append(
            EntryView(
                seq=e.seq, speaker=e.speaker, speaker_name=scenario.display_name(e.speaker), kind=e.kind,
                text=e.text, private=e.visibility == "private", round=e.round, issue=e.issue,
                mine=e.speaker == human, divider=_divider(scenario, e, before),
            )
        )  # fmt: skip
        before = (e.round, e.issue)
    return views


def transcript(game: Game, since_seq: int = 0) -> list[EntryView]:
    """The student's view of the entries after `since_seq` (all of them at 0), each new round's or issue's first
    with its heading, which depends on the last entry the reader already has: the kept entries
    (`entries.kept_entries`) hold both, so a render after a turn driven in this process reads no entries at all."""
    rows = kept_entries(game)
    if since_seq <= 0:
        return entry_views(scenario_of_version(game.scenario), game.human_role, rows)
    first_new = bisect_right(rows, since_seq, key=lambda e: e.seq)
    if first_new == len(rows):
        return []
    before = _seen_among(rows[:first_new], game.human_role)
    return entry_views(scenario_of_version(game.scenario), game.human_role, rows[first_new:], before=before)


def _seen_among(earlier: Sequence[SeenEntry], human_role: str | None) -> tuple[int, str] | None:
    """The round and issue of the last of `earlier` that the student sees (private talks of other seats are
    skipped: a heading follows what the reader has, not what exists)."""
    for entry in reversed(earlier):
        if not human_role or visible_to(entry, human_role):
            return (entry.round, entry.issue)
    return None


def _talk(scenario: Scenario, state: GameState) -> dict[str, Any] | None:
    convo = state.active_conversation
    if convo is None or state.human_role is None or state.talker_of(convo) != state.human_role:
        return None  # no talk, or another student's (a class group's game)
    each = scenario.talk_messages_each
    lane = state.lane(state.human_role)
    return {
        "number": convo.index + 1,
        "partner": scenario.display_name(convo.partner),
        # Round 2's lanes: another student chose this talk with the student, whose own choice waits until it ends.
        "chosen_by": scenario.display_name(convo.partner) if lane and lane.joined is not None else "",
        "you_left": max(0, each - convo.human_turns) if convo.phase == "OPEN" else int(not convo.human_final),
        "partner_left": max(0, each - convo.partner_turns)
        if convo.phase == "OPEN"
        else int(not convo.partner_final),
        "final": convo.phase == "FINAL_TURNS",
    }


def _issue(scenario: Scenario, state: GameState) -> dict[str, Any] | None:
    issue_state = state.active_issue
    if issue_state is None or not state.status.startswith("ISSUE_"):
        return None
    issue = scenario.issue(issue_state.issue_id)
    said = rules.public_statements(scenario, state, issue.id)
    return {
        "id": issue.id,
        "number": state.round3.active_issue_index + 1,
        "count": len(scenario.issues),
        "title": issue.title,
        "description": issue.description,
        "options": [
            {
                "id": o.id,
                "label": o.label,
                "description": o.description,
                "leaning": [scenario.display_name(c) for c in said[o.id]],
            }
            for o in issue.options
        ],  # fmt: skip
        "unstated": [scenario.display_name(c) for c in said[""]],
        "debate_round": issue_state.debate_round,
        "proposal": issue.option(issue_state.proposal).label if issue_state.proposal else None,
        "proposal_id": issue_state.proposal,
        "ballots": [
            {"name": scenario.display_name(r), "ballot": issue_state.ballots.get(r)}
            for r in issue_state.vote_order
        ],
    }


def _action(scenario: Scenario, state: GameState, step: machine.Step | None) -> dict[str, Any]:
    """The move panel: which kind of form, and the events its buttons send (the step's events, from the table:
    `event` is the move, `skip` the one that declines it, when the step offers one). No step: the student's own
    Round 2 lane is over while other students still talk."""
    if step is None:
        return {"kind": "talks_over"}
    action = _panel(scenario, state, step)
    if step.kind in ("human", "advance"):
        action["event"] = next(e for e in step.events if e not in machine.DECLINES)
        action["skip"] = next((e for e in step.events if e in machine.DECLINES), None)
    return action


def _panel(scenario: Scenario, state: GameState, step: machine.Step) -> dict[str, Any]:
    human = state.human_role
    if step.kind == "done" or state.status == Status.REVIEW:
        return {"kind": "review" if step.kind == "done" else "waiting", "who": "The debrief"}
    if step.kind == "ai":
        who = scenario.display_name(step.role) if step.role else "The chair"
        return {"kind": "waiting", "who": who, "purpose": step.purpose}
    if step.kind == "advance":
        return {"kind": "advance", "speaker": scenario.display_name(step.role or "")}
    if step.role and step.role != human:  # another student's seat acts (a class group's game)
        return {"kind": "waiting", "who": scenario.display_name(step.role), "purpose": step.purpose}
    purpose = step.purpose
    if purpose == "role":
        return {"kind": "roles"}
    if purpose == "partner":
        taken = {
            seat for c in state.round2.conversations if human in (state.talker_of(c), c.partner)
            for seat in (state.talker_of(c), c.partner)
        }  # fmt: skip
        requests = [r for r in state.talk_requests if r not in taken]
        others = [r for r in scenario.role_ids if r not in requests and r not in taken and r != human]

        # A student in a talk just now cannot be chosen (Round 2's lanes).
        def choice(seat: str) -> dict[str, Any]:
            return {"id": seat, "name": scenario.display_name(seat), "busy": not state.free_to_talk(seat)}

        return {
            "kind": "partner",
            "requests": [choice(r) for r in requests],
            "others": [choice(r) for r in others],
        }
    if purpose in ("talk", "talk_final", "talk_open"):
        return {"kind": "talk", "final": purpose == "talk_final", "limit": machine.MAX_MESSAGE_CHARS}
    if purpose == "placement":  # what "first in my group" means for this seat: countries speak before NGOs
        ngo = human in scenario.ngos
        group = "observer organisations" if ngo else "countries"
        votes = human is not None and scenario.role(human).votes
        return {"kind": "placement", "ngo": ngo, "group": group, "votes": votes}
    if purpose == "speech":
        return {"kind": "speech", "limit": machine.MAX_MESSAGE_CHARS}
    if purpose == "vote":
        return {"kind": "vote"}
    return {"kind": "waiting", "who": "The chair"}


def _round_of(status: str) -> int:
    if status.startswith("ROUND_1"):
        return 1
    if status.startswith("ROUND_2"):
        return 2
    if status.startswith(("ROUND_3", "ISSUE_")):
        return 3
    return 0


def orientation(scenario: Scenario, state: GameState) -> str:
    """Where the student is, in one line: "Round 3 of 3 · Issue 2 of 4 · Debate round 1 of 2"."""
    number = _round_of(state.status)
    if not number:
        return ""
    parts = [f"Round {number} of 3"]
    if number == 1:
        parts.append(
            f"Opening statement {min(state.round1.cursor + 1, len(state.round1.speaker_order))} of {len(state.round1.speaker_order)}"
        )
    elif number == 2 and state.round2.lanes:  # side by side: the student's talks, chosen or chosen for
        mine = [c for c in state.round2.conversations if state.human_role in (state.talker_of(c), c.partner)]
        if mine:
            parts.append(f"Private talk {len(mine)}")
    elif number == 2 and state.round2.conversations:
        parts.append(f"Private talk {len(state.round2.conversations)} of 2")
    elif number == 3 and state.active_issue is not None:
        parts.append(f"Issue {state.round3.active_issue_index + 1} of {len(scenario.issues)}")
        if state.status in (Status.ISSUE_DEBATE_ROUND_1, Status.ISSUE_DEBATE_ROUND_2):
            parts.append(f"Debate round {state.active_issue.debate_round or 1} of 2")
        elif state.status == Status.ISSUE_VOTE:
            parts.append("Vote")
    return " · ".join(parts)  # fmt: skip


def outcomes(scenario: Scenario, state: GameState) -> list[dict[str, Any]]:
    """Every issue's outcome so far, in agenda order: adopted or rejected (with the proposal and its yes votes),
    being debated, or still to come. Empty before Round 3."""
    if not state.round3.issues:
        return []
    by_id = {i.issue_id: i for i in state.round3.issues}
    active = state.active_issue.issue_id if state.active_issue is not None else None
    rows = []
    for n, issue in enumerate(scenario.issues, start=1):
        done = by_id.get(issue.id)
        row: dict[str, Any] = {"number": n, "title": issue.title, "result": "upcoming"}
        if done is not None and done.adopted is not None:
            yes = sum(1 for b in done.ballots.values() if b == "yes")
            row |= {
                "result": "adopted" if done.adopted else "rejected",
                "proposal": f"{done.proposal} {issue.option(done.proposal).label}" if done.proposal else "",
                "yes": yes, "no": len(done.ballots) - yes, "voters": len(done.ballots),
                "against": [scenario.display_name(r) for r, b in done.ballots.items() if b == "no"],
            }  # fmt: skip
        elif issue.id == active:
            row["result"] = "open"
        rows.append(row)
    return rows


def just_decided(rows: list[dict[str, Any]], state: GameState) -> dict[str, Any] | None:
    """The issue whose vote has just closed, while the next one is only being introduced (or the session is
    over): its result is shown, and announced, before anything covers it."""
    decided = [r for r in rows if r["result"] in ("adopted", "rejected")]
    if not decided:
        return None
    if state.status in (Status.ISSUE_INTRO, Status.ROUND_3_COMPLETE, Status.REVIEW) or not any(
        r["result"] == "open" for r in rows
    ):
        return decided[-1]
    return None


def draft_key(state: GameState) -> str:
    """Where a typed draft is kept in the browser: one place per talk and per debate turn, so a draft survives a
    refresh or another tab's move and is never offered at a different step."""
    convo = state.active_conversation
    if state.status == Status.ROUND_2_CONVERSATION_ACTIVE and convo is not None:
        return f"talk-{convo.index + 1}"
    if state.status == Status.ROUND_2_TALKS and convo is not None:  # several students: the game's nth talk
        return f"talk-{state.round2.conversations.index(convo) + 1}"
    if state.active_issue is not None and state.status.startswith("ISSUE_DEBATE"):
        return f"speech-{state.active_issue.issue_id}-{state.active_issue.debate_round}"
    return state.status.lower()


def earlier_talks(game: Game, scenario: Scenario, state: GameState) -> str:
    """The student's closed private talks, rendered as the panels' dialog ("" before the first one closes).

    Rendered once per game and set of closed talks, then kept: a closed talk never changes, and the panels are
    rendered again after every turn of the game's rest (this dialog was a fifth of each render)."""
    closed = tuple(
        c.partner
        for c in state.round2.conversations
        if c.phase == "CLOSED" and state.talker_of(c) == state.human_role
    )
    if not closed:
        return ""
    # The game's creation time guards against a reused id (a test database rolled back, say).
    key = (game.pk, game.created_at, game.human_role, closed)
    html = _rendered_talks.get(key)
    if html is None:
        rows = [e for e in kept_entries(game) if e.visibility == "private"]
        talks = [
            {
                "partner": scenario.display_name(partner),
                "entries": entry_views(scenario, game.human_role, [e for e in rows if partner in e.audience]),
            }
            for partner in closed
        ]
        html = fragment("negotiation/_earlier_talks.html", {"talks": talks})
        with _rendered_talks_lock:  # pages render in several threads
            while len(_rendered_talks) >= MAX_RENDERED_TALKS:
                _rendered_talks.pop(next(iter(_rendered_talks)))  # the oldest game's
            _rendered_talks[key] = html
    return html


MAX_RENDERED_TALKS = 500  # a few kilobytes each: one per game in its later rounds
_rendered_talks: dict[tuple[object, ...], SafeString] = {}
_rendered_talks_lock = threading.Lock()


def lanes_seen(scenario: Scenario, state: GameState) -> list[str]:
    """The other students' Round 2 lanes, as a student may see them: only whether each is in a private talk,
    choosing one, or done (never with whom, nor a word of it); the one talking with the student is in the talk's
    own line."""
    human, lines = state.human_role, []
    for lane in state.round2.lanes if state.status == Status.ROUND_2_TALKS else ():
        if lane.seat == human:
            continue
        name, talk = scenario.display_name(lane.seat), state.lane_talk(lane.seat)
        if talk is not None and talk.phase != "CLOSED" and human in (state.talker_of(talk), talk.partner):
            continue
        if talk is not None:
            lines.append(f"{name} is in a private talk.")
        elif lane.phase == Status.ROUND_2_WRAP_UP:
            lines.append(f"{name}'s private talks are over.")
        else:
            lines.append(f"{name} is choosing a partner for a private talk.")
    return lines


def game_context(game: Game) -> dict[str, Any]:
    scenario, state = scenario_of_version(game.scenario), state_of(game)
    if state.status == Status.ROUND_2_TALKS:  # side by side: the page shows its own student's lane
        state = machine.focused(state, state.human_role)
        step: machine.Step | None = machine.lane_step(state, state.human_role)
    else:
        step = machine.next_step(scenario, state)
    human = state.human_role
    rows = outcomes(scenario, state)
    action, issue = _action(scenario, state, step), _issue(scenario, state)
    return {
        "game": game,
        "scenario": scenario,
        "facts": scenario_facts(scenario),
        "phase_label": phase_label(state.status),
        "status": state.status,
        "version": game.version,
        # One key per render: whichever move is made from this render, it is committed at most once.
        "idem": new_form_key(),
        "human": {"id": human, "name": scenario.display_name(human)} if human else None,
        "step": step,
        "action": action,
        "talk": _talk(scenario, state),
        "lanes": lanes_seen(scenario, state),
        "issue": issue,
        # What the progress card and the issue's dialog read of those two (services/pages/region_memo.py keeps a region's
        # render while what it read is unchanged): `action` changes at every turn and `issue` with every stance
        # and ballot, and reading them whole re-rendered the dialog at every update and the card at most.
        "issue_title": issue["title"] if issue else "",
        "issue_dialog_opens": action["kind"] == "placement",
        "round1": {"done": state.round1.cursor, "total": len(state.round1.speaker_order)}
        if state.status == Status.ROUND_1_OPENING_STATEMENTS
        else None,
        # Round 3 and after: how many issues are settled.
        "issues_done": sum(1 for i in state.round3.issues if i.adopted is not None)
        if state.round3.issues
        else None,
        "earlier_talks": earlier_talks(game, scenario, state),
        "orientation": orientation(scenario, state),
        "outcomes": rows,
        "just_decided": just_decided(rows, state),
        "draft_key": f"{game.pk}:{draft_key(state)}",
    }


# Counts read better as words in a sentence ("four countries vote"); larger ones stay digits.
_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")  # fmt: skip


def _in_words(n: int) -> str:
    return _NUMBER_WORDS[n] if 0 <= n < len(_NUMBER_WORDS) else str(n)


def scenario_facts(scenario: Scenario) -> dict[str, Any]:
    """What the pages say about a scenario's shape, read from the scenario itself (never assumed): how many
    issues, how many voting countries and observer NGOs, and who chairs."""
    voters, ngos = len(scenario.voters), len(scenario.ngos)
    return {
        "slug": scenario.slug,
        "title": scenario.title,
        "summary": scenario.summary,
        "chair": scenario.chair.name,
        "issues": len(scenario.issues),
        "voters": voters,
        "voters_words": _in_words(voters),
        "ngos": ngos,
        "ngos_words": _in_words(ngos),
    }


def roles_context(scenario: Scenario) -> list[dict[str, Any]]:
    return [
        {"id": r.id, "name": r.name, "kind": r.kind, "votes": r.votes, "public_brief": r.public_brief}
        for r in scenario.roles
    ]


def persona_context(scenario: Scenario, role_id: str, *, confidential: bool = False) -> dict[str, Any] | None:
    """A seat's persona: what every delegation knows; `confidential`: also its confidential brief and offers, for
    the student who holds that seat or is choosing it for themselves (the set-up page of that one seat)."""
    if role_id not in scenario.role_ids:
        return None
    role = scenario.role(role_id)
    public = {
        "id": role.id,
        "name": role.name,
        "votes": role.votes,
        "public_brief": role.public_brief,
        "variants": role.openings,
    }
    if not confidential:
        return public
    return public | {
        "confidential": role.confidential_brief,
        "can_offer": [scenario.offer(o).label for o in role.can_offer],
    }


def brief_context(scenario: Scenario, state: GameState) -> dict[str, Any] | None:
    """The student's own briefs and persona, once the seat is chosen; never another seat's."""
    if state.human_role is None or state.human_variant is None:
        return None
    role = scenario.role(state.human_role)
    variant = role.opening(state.human_variant)
    return (persona_context(scenario, role.id, confidential=True) or {}) | {
        "persona": variant.persona,
        "posture": variant.summary,
    }


# The panels' regions (templates/negotiation/_panel_<name>.html) in the page's order. An update sends a region
# only when its HTML changed since the page last got it, and the move (`actions`) last, always: it carries the
# version the page's forms post, and app.js takes the panels' state from it once the other regions are in place. A
# region left alone keeps what the student did with it: the issue's dialog stays open while the delegations speak,
# a folded card stays folded.
PANEL_REGIONS = ("progress", "decided", "actions", "support", "outcomes", "issue", "talks")


def _region_oob(version: int) -> SafeString:
    """What makes a region sent alone an out-of-band swap, with the version the page's stale-render check compares.
    The regions' templates print it as `{{ region_oob }}` in their opening tag; their HTML without it is what the
    page shows, and what a page's memory fingerprints."""
    return SafeString(f' hx-swap-oob="outerHTML" data-version="{int(version)}"')


# Where a region's swap attributes go in its kept HTML (`_marked_region`): one render serves the page's own panels
# (without them) and an update (with the version of the moment). Escaped text can never contain it.
_OOB_MARK = SafeString(' data-region-oob=""')


def _region(name: str, context: dict[str, Any], request: Any = None) -> str:
    return fragment(f"negotiation/_panel_{name}.html", context, request)


def _marked_region(name: str, context: dict[str, Any]) -> str:
    """A region other than the move, with `_OOB_MARK` for its swap attributes, rendered again only when what it
    read has changed (services/pages/region_memo.py): an update renders every region to compare them, and most are as
    they were. The move is always rendered: it carries the version and a new key, and with a request its CSRF
    field."""
    return render_region(
        f"negotiation/_panel_{name}.html", context | {"region_oob": _OOB_MARK},
        owner=(context["game"].pk, context["game"].human_role),  # one student's view of it (a group's game)
    )  # fmt: skip


def render_panels(
    context: dict[str, Any], *, request: Any = None, rendered: dict[str, str] | None = None
) -> SafeString:
    """The panels whole: `#panels` around every region, in the page's order. `rendered`: regions already rendered
    (without their swap attributes) by the caller."""
    rendered = rendered or {}

    def region(name: str) -> str:
        if name in rendered:
            return rendered[name]
        if name == "actions":  # the only region that takes the request (its CSRF field)
            return _region(name, context, request)
        return _marked_region(name, context).replace(_OOB_MARK, "", 1)

    regions = "".join(region(name) for name in PANEL_REGIONS)
    return fragment("negotiation/_panels.html", context | {"regions": SafeString(regions)}, request)


def _fingerprint(html: str) -> str:
    """A short digest of a region's HTML: a page's memory holds six of them, not the earlier talks' whole HTML."""
    return hashlib.blake2b(html.encode(), digest_size=16).hexdigest()


def render_update(
    game: Game, *, since_seq: int, full: bool, shown: dict[str, str] | None = None
) -> tuple[str, int]:
    """The websocket's update of a negotiation page: the panels, the new transcript entries (all on a full
    render), and an empty stream box (the turn that streamed is now an entry).

    `shown`: the page's memory of its panels' regions (a fingerprint of each region's HTML), kept by its consumer.
    When it holds the page's regions, only those that changed are sent (with the move, always); else the whole
    panels. A move sent over the page's websocket leaves the panels to the consumer's next update, so the memory
    holds across it; a posted move's answer redraws them behind the consumer's back, and the consumer then empties
    it (`pages.move`, broadcast.notify_panels_drawn), so that its next update sends them whole."""
    game = seated(game)
    entries = transcript(game, since_seq=since_seq)
    context = game_context(game) | {"entries": entries, "oob": True}
    oob = _region_oob(game.version)
    # Every region is rendered (or its kept render reused), sent or not: its HTML is what the page's memory compares.
    marked = {name: _marked_region(name, context) for name in PANEL_REGIONS if name != "actions"}
    rendered = {name: html.replace(_OOB_MARK, oob, 1) for name, html in marked.items()}
    bare = {name: html.replace(_OOB_MARK, "", 1) for name, html in marked.items()}
    regions = {name: _fingerprint(html) for name, html in bare.items()}
    if full or not shown:
        parts: list[str] = [render_panels(context, rendered=bare)]
    else:
        parts = [html for name, html in rendered.items() if shown.get(name) != regions[name]]
        parts.append(_region("actions", context | {"region_oob": oob}))
    if shown is not None:
        shown.clear()
        shown.update(regions)
    template = "negotiation/_transcript.html" if full else "negotiation/_new_entries.html"
    if full or entries:
        parts.append(fragment(template, context))
    parts.append(fragment("game/_stream.html", {}))
    last = entries[-1].seq if entries else since_seq
    return "".join(parts), last
