"""Stateful property tests of the pure Mercury engine: random event sequences against its invariants.

A `RuleBasedStateMachine` starts a fresh game, optionally fast-forwards it with a random but legal policy
(so the later rounds and the votes are reached within a bounded number of steps), then interleaves:

* `legal_step`: whatever `next_step` asks for, with payloads drawn from valid and invalid values;
* `random_event`: any event of the table with a random payload dict;
* `resume_roundtrip`: storing and resuming the current state changes nothing.

A refused event (IllegalEvent / InvalidMove) must leave the state untouched and name the current state; an
accepted one must have been allowed and its payload valid. The invariants below are checked after every step.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from simulations.engine.errors import IllegalEvent, InvalidMove, MachineError
from simulations.kinds.negotiation import machine
from simulations.kinds.negotiation.events import MAX_SUMMARY_CHARS
from simulations.kinds.negotiation.machine import MAX_MESSAGE_CHARS, Outcome, Step
from simulations.kinds.negotiation.scenario import load_scenario_dir
from simulations.kinds.negotiation.state import GameState

SCENARIO = load_scenario_dir(Path(__file__).parents[3] / "scenarios" / "mercury")
ROLE_IDS = SCENARIO.role_ids
VOTERS = frozenset(SCENARIO.voters)
CHAIR = SCENARIO.chair.id
VARIANTS = {role.id: [v.id for v in role.openings] for role in SCENARIO.roles}
ALL_VARIANTS = sorted({v for ids in VARIANTS.values() for v in ids})
RANK = machine.PHASE_ORDER
# Status and Event are str enums: a state's status finds its transitions.
ACTOR: dict[tuple[str, str], str] = {(t.source, t.event): t.actor for t in machine.TRANSITIONS}
SELF_LOOPS = frozenset(t.source for t in machine.TRANSITIONS if t.source == t.target)
TEXT_EVENTS = frozenset(
    {
        "HUMAN_MESSAGE_SUBMITTED",
        "AI_MESSAGE_COMMITTED",
        "HUMAN_TURN_SPEAK",
        "AI_TURN_COMMITTED",
        "AI_SUMMARY_READY",
    }
)

# --- text ---------------------------------------------------------------------------------------------------

OPTION_IDS = [o.id for issue in SCENARIO.issues for o in issue.options]
OPTION_LABELS = [o.label for issue in SCENARIO.issues for o in issue.options]
OPTION_KEYWORDS = [k for issue in SCENARIO.issues for o in issue.options for k in o.keywords]
OFFER_LABELS = [o.label for o in SCENARIO.offers]
OFFER_KEYWORDS = [k for o in SCENARIO.offers for k in o.keywords]
MENTIONS = OPTION_IDS + OPTION_LABELS + OPTION_KEYWORDS + OFFER_LABELS + OFFER_KEYWORDS
TEMPLATES = [
    "{}",
    "We support {}.",
    "We strongly support {}, and urge others to join us.",
    "We oppose {}.",
    "We cannot accept {}.",
    "We offer {}.",
    "We are prepared to provide {} to partners who join us.",
    "We will commit to {}; we will never accept the alternative.",
]

_sentence = st.builds(str.format, st.sampled_from(TEMPLATES), st.sampled_from(MENTIONS))
_long_text = st.tuples(
    st.text(min_size=1, max_size=6), st.integers(MAX_MESSAGE_CHARS - 5, MAX_MESSAGE_CHARS + 5)
).map(lambda t: (t[0] * (MAX_MESSAGE_CHARS + 10))[: t[1]])
MESSAGES = st.one_of(
    st.lists(_sentence, min_size=1, max_size=4).map(" ".join),
    st.sampled_from(OPTION_IDS + OPTION_LABELS + OFFER_LABELS),
    st.text(max_size=40),
    st.sampled_from(["", "   ", "\n\t"]),
    _long_text,
)
JUNK = st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=6), st.lists(st.integers(), max_size=2))

# Texts of the fast-forward policy: sentences the judge reads, so stances move and votes differ between runs.
WARP_TEXTS = [t.format(m) for t in TEMPLATES[1:] for m in MENTIONS]


def _mostly(valid: st.SearchStrategy[Any], junk: st.SearchStrategy[Any] = JUNK) -> st.SearchStrategy[Any]:
    """Valid values three times in four."""
    return st.one_of(valid, valid, valid, junk)


def _text_payload() -> st.SearchStrategy[dict[str, Any]]:
    return _mostly(
        st.fixed_dictionaries({"text": MESSAGES}), st.one_of(st.just({}), st.builds(dict, text=JUNK))
    )


def _role_payload(data: st.DataObject) -> dict[str, Any]:
    role = data.draw(_mostly(st.sampled_from(ROLE_IDS), st.one_of(st.just(CHAIR), JUNK)), label="role")
    own = VARIANTS.get(role, []) if isinstance(role, str) else []
    variant = data.draw(
        st.one_of(st.sampled_from(own or ALL_VARIANTS), st.sampled_from(ALL_VARIANTS), JUNK), label="variant"
    )
    payload: dict[str, Any] = {"role": role}
    if data.draw(st.booleans(), label="with variant"):
        payload["variant"] = variant
    return payload


def _convo_payload(data: st.DataObject) -> dict[str, Any]:
    partner = data.draw(_mostly(st.sampled_from(ROLE_IDS), st.one_of(st.just(CHAIR), JUNK)), label="partner")
    payload: dict[str, Any] = {"partner": partner}
    if data.draw(st.booleans(), label="with starter"):
        payload["starter"] = data.draw(_mostly(st.sampled_from(["human", "partner"])), label="starter")
    return payload


def human_payload(data: st.DataObject, event: str) -> dict[str, Any]:
    if event == "ROLE_CONFIRMED":
        return _role_payload(data)
    if event in ("CONVO_1_STARTED", "CONVO_2_STARTED"):
        return _convo_payload(data)
    if event in TEXT_EVENTS:
        return data.draw(_text_payload(), label="text payload")
    if event == "ISSUE_INTRO_COMPLETE":
        return {
            "placement": data.draw(_mostly(st.sampled_from(["first", "random", "skip"])), label="placement")
        }
    if event == "HUMAN_VOTE_CAST":
        ballot = data.draw(_mostly(st.sampled_from(["yes", "no"]), st.sampled_from(["YES", "abstain", ""])))
        return {"ballot": ballot}
    return {}  # CONVO_2_SKIPPED, HUMAN_TURN_SKIP, OPENING_PRESENTED take no payload


PAYLOAD_KEYS = ["role", "variant", "partner", "starter", "placement", "ballot", "text", "status"]
PAYLOAD_VALUES = st.one_of(
    JUNK,
    MESSAGES,
    st.sampled_from(
        [
            *ROLE_IDS,
            CHAIR,
            *ALL_VARIANTS,
            "human",
            "partner",
            "first",
            "random",
            "skip",
            "yes",
            "no",
            *machine.STATES,
        ]
    ),
)
RANDOM_PAYLOADS = st.dictionaries(
    st.one_of(st.sampled_from(PAYLOAD_KEYS), st.text(max_size=5)), PAYLOAD_VALUES, max_size=4
)


# The fields each event takes (seed 002 §5); a judge's "signals" ride along with a message or speech.
FIELDS: dict[str, set[str]] = {
    "ROLE_CONFIRMED": {"role", "variant"},
    "CONVO_1_STARTED": {"partner", "starter"},
    "CONVO_2_STARTED": {"partner", "starter"},
    **{event: {"text", "signals"} for event in TEXT_EVENTS},
    "AI_SUMMARY_READY": {"text"},
    "ISSUE_INTRO_COMPLETE": {"placement"},
    "HUMAN_VOTE_CAST": {"ballot"},
    "RESUME_READY": {"status"},
}


def expected_refusal(state: GameState, event: str, payload: dict[str, Any]) -> str | None:
    """The InvalidMove reason an allowed event must be refused with, or None when its payload is valid: the
    first of its fields that is wrong, in the order the event lists them, then a field it does not take."""
    reason = _field_refusal(state, event, payload)
    if reason is None and set(payload) - FIELDS.get(event, set()):
        return InvalidMove.UNKNOWN_FIELD
    return reason


def _field_refusal(state: GameState, event: str, payload: dict[str, Any]) -> str | None:
    if event == "ROLE_CONFIRMED":
        role = payload.get("role")
        if role not in ROLE_IDS:
            return InvalidMove.UNKNOWN_ROLE
        variant = payload.get("variant")
        if variant is not None and not isinstance(variant, str):
            return InvalidMove.UNKNOWN_VARIANT
        return None if (variant or VARIANTS[role][0]) in VARIANTS[role] else InvalidMove.UNKNOWN_VARIANT
    if event in ("CONVO_1_STARTED", "CONVO_2_STARTED"):
        partner = payload.get("partner")
        if partner not in ROLE_IDS or partner == state.human_role:
            return InvalidMove.BAD_PARTNER
        if partner in [c.partner for c in state.round2.conversations]:
            return InvalidMove.SAME_PARTNER
        return None if payload.get("starter", "partner") in ("human", "partner") else InvalidMove.BAD_STARTER
    if event in TEXT_EVENTS:
        text = payload.get("text")
        if not isinstance(text, str) or not text.strip():
            return InvalidMove.EMPTY_TEXT
        # The debrief is a handout in sections, with its own larger limit (events.MAX_SUMMARY_CHARS).
        limit = MAX_SUMMARY_CHARS if event == "AI_SUMMARY_READY" else MAX_MESSAGE_CHARS
        return InvalidMove.TEXT_TOO_LONG if len(text) > limit else None
    if event == "ISSUE_INTRO_COMPLETE":
        return None if payload.get("placement") in ("first", "random", "skip") else InvalidMove.BAD_PLACEMENT
    if event == "HUMAN_VOTE_CAST":
        return None if payload.get("ballot") in ("yes", "no") else InvalidMove.BAD_BALLOT
    if event == "RESUME_READY":
        return None if payload.get("status") in machine.RESUMABLE else InvalidMove.BAD_STATUS
    return None


def warp_move(state: GameState, step: Step, rnd: random.Random) -> tuple[str, dict[str, Any]]:
    """A random legal move for the fast-forward: every payload valid."""
    event = step.events[0]
    if step.kind in ("system", "advance") or (step.kind == "ai" and step.purpose in ("skip", "vote")):
        return event, {}
    if step.kind == "ai":
        return event, {"text": rnd.choice(WARP_TEXTS)}
    if event == "ROLE_CONFIRMED":
        role = rnd.choice(ROLE_IDS)
        return event, {"role": role, "variant": rnd.choice(VARIANTS[role])}
    if step.purpose == "partner":
        used = {c.partner for c in state.round2.conversations}
        if "CONVO_2_SKIPPED" in step.events and rnd.random() < 0.3:
            return "CONVO_2_SKIPPED", {}
        partners = [r for r in ROLE_IDS if r != state.human_role and r not in used]
        return event, {"partner": rnd.choice(partners), "starter": rnd.choice(["human", "partner"])}
    if event == "ISSUE_INTRO_COMPLETE":
        return event, {"placement": rnd.choice(["first", "random", "skip"])}
    if step.purpose == "speech" and rnd.random() < 0.2:
        return "HUMAN_TURN_SKIP", {}
    if event == "HUMAN_VOTE_CAST":
        return event, {"ballot": "yes" if rnd.random() < 0.7 else "no"}
    return event, {"text": rnd.choice(WARP_TEXTS)}


# --- the machine --------------------------------------------------------------------------------------------


class MercuryMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.state = machine.new_game(0)
        self.history: list[tuple[GameState, Outcome]] = []  # (state before, outcome) per accepted event
        self.cursors: Counter[str] = Counter()  # per invariant: how much of `history` it has checked
        self.last_transcript_seq = 0
        self.votes_per_issue: Counter[str] = Counter()
        self.adopted: dict[str, bool] = {}

    # -- helpers --

    def accept(self, before: GameState, outcome: Outcome) -> None:
        self.history.append((before, outcome))
        self.state = outcome.state

    def unchecked(self, name: str) -> list[tuple[GameState, Outcome]]:
        start = self.cursors[name]
        self.cursors[name] = len(self.history)
        return self.history[start:]

    def attempt(self, event: str, payload: dict[str, Any]) -> Outcome | None:
        before = self.state
        snapshot = before.model_dump()
        allowed = machine.allowed_events(before)
        expected = expected_refusal(before, event, payload) if event in allowed else None
        try:
            outcome = machine.apply(SCENARIO, before, event, payload)
        except MachineError as err:
            assert before.model_dump() == snapshot, f"refused {event} changed the state"
            assert before.status in str(err), str(err)
            if isinstance(err, IllegalEvent):
                assert event not in allowed
                assert (err.state, err.event) == (before.status, event)
                assert err.allowed == allowed
            else:
                assert isinstance(err, InvalidMove), repr(err)
                assert event in allowed
                assert (err.state, err.event, err.reason) == (before.status, event, expected), str(err)
            return None
        assert before.model_dump() == snapshot, f"{event} mutated the state it was applied to"
        assert event in allowed, f"{event} accepted in {before.status}, allowed: {allowed}"
        assert expected is None, f"{event} accepted {payload!r}, expected refusal: {expected}"
        assert (outcome.event, outcome.source, outcome.target) == (event, before.status, outcome.state.status)
        self.accept(before, outcome)
        return outcome

    # -- start --

    @initialize(
        seed=st.integers(0, 2**32 - 1),
        warp=st.one_of(st.just(0), st.integers(0, 120), st.integers(120, 260)),
        warp_seed=st.integers(),
    )
    def start(self, seed: int, warp: int, warp_seed: int) -> None:
        """A new game, fast-forwarded by `warp` random legal moves (so later rounds are reached too)."""
        self.state = machine.new_game(seed)
        assert self.attempt("NEW_GAME_CREATED", {}) is not None
        rnd = random.Random(warp_seed)
        for _ in range(warp):
            step = machine.next_step(SCENARIO, self.state)
            if step.kind == "done":
                break
            event, payload = warp_move(self.state, step, rnd)
            assert self.attempt(event, payload) is not None, (event, payload)

    # -- rules --

    @rule(data=st.data())
    def legal_step(self, data: st.DataObject) -> None:
        step = machine.next_step(SCENARIO, self.state)
        if step.kind == "done":
            return
        if step.kind == "system":
            assert self.attempt(step.events[0], {}) is not None
        elif step.kind == "ai":
            payload = (
                {} if step.purpose in ("skip", "vote") else data.draw(_text_payload(), label="ai payload")
            )
            self.attempt(step.events[0], payload)
        else:
            event = data.draw(st.sampled_from(step.events), label="event")
            self.attempt(event, human_payload(data, event))

    @rule(event=st.sampled_from(machine.EVENTS), payload=RANDOM_PAYLOADS)
    def random_event(self, event: str, payload: dict[str, Any]) -> None:
        self.attempt(event, payload)

    @rule()
    def resume_roundtrip(self) -> None:
        stored = self.state.model_dump(mode="json")
        resumed = machine.resume(SCENARIO, stored)
        assert resumed.model_dump(mode="json") == stored

    # -- invariants --

    @invariant()
    def sequences_are_contiguous(self) -> None:
        for before, outcome in self.unchecked("seq"):
            assert outcome.seq == before.event_seq + 1 == outcome.state.event_seq
            for entry in outcome.entries:
                assert entry.seq == self.last_transcript_seq + 1, (entry.seq, self.last_transcript_seq)
                self.last_transcript_seq = entry.seq
            assert outcome.state.transcript_seq == self.last_transcript_seq
        assert self.state.transcript_seq == self.last_transcript_seq
        assert self.state.event_seq == len(self.history)

    @invariant()
    def exactly_one_actor(self) -> None:
        state = self.state
        step = machine.next_step(SCENARIO, state)
        assert isinstance(step, Step)
        allowed = machine.allowed_events(state)
        actors = {ACTOR[(state.status, e)] for e in allowed}
        assert len(actors) <= 1, f"{state.status}: several actors may act: {allowed}"
        if step.kind == "done":
            assert not allowed and state.status == "REVIEW"
            return
        assert step.events and set(step.events) <= set(allowed), (step, allowed)
        assert actors == {step.kind}, (step, allowed)
        if step.kind == "human":
            assert step.role == state.human_role

    @invariant()
    def phases_move_forward(self) -> None:
        for before, outcome in self.unchecked("phase"):
            after = outcome.state
            src, dst = before.status, after.status
            idx_before, idx_after = before.round3.active_issue_index, after.round3.active_issue_index
            if (src, dst) == ("ISSUE_RESOLUTION", "ISSUE_INTRO"):
                assert idx_after == idx_before + 1
                continue
            assert idx_after == idx_before, (src, dst, idx_before, idx_after)
            if src == dst:
                assert src in SELF_LOOPS, f"unexpected self-loop in {src}"
            elif (src, dst) == ("ROUND_2_SELECT_CONVO_2", "ROUND_2_CONVERSATION_ACTIVE"):
                # the table lists SELECT_CONVO_2 after CONVERSATION_ACTIVE: the second talk re-enters it
                assert len(after.round2.conversations) == 2
            else:
                assert RANK[dst] > RANK[src], f"{src} -> {dst} goes backwards"

    @invariant()
    def votes_are_well_formed(self) -> None:
        human = self.state.human_role
        for issue in self.state.round3.issues:
            assert set(issue.ballots) <= VOTERS, f"issue {issue.issue_id}: ballots {issue.ballots}"
            if issue.vote_order:
                assert issue.vote_order == SCENARIO.voters
            if human not in VOTERS:
                assert human not in issue.ballots, f"the human NGO {human} voted"
        for before, outcome in self.unchecked("votes"):
            if outcome.event == "HUMAN_VOTE_CAST":
                assert before.human_role in VOTERS, f"the human NGO {before.human_role} voted"
            for entry in outcome.entries:
                if entry.kind == "vote":
                    assert entry.speaker in VOTERS, f"{entry.speaker} cannot vote"
            if outcome.vote is not None:
                issue_id = outcome.vote["issue"]
                self.votes_per_issue[issue_id] += 1
                assert self.votes_per_issue[issue_id] == 1, f"issue {issue_id} voted twice"
                assert set(outcome.vote["ballots"]) == VOTERS
                assert outcome.vote["adopted"] == all(b == "yes" for b in outcome.vote["ballots"].values())
            for issue in outcome.state.round3.issues:
                if issue.adopted is not None:
                    first = self.adopted.setdefault(issue.issue_id, issue.adopted)
                    assert issue.adopted == first, f"issue {issue.issue_id} changed its result"
                    assert self.votes_per_issue[issue.issue_id] == 1
                else:
                    assert issue.issue_id not in self.adopted

    @invariant()
    def private_entries_stay_private(self) -> None:
        for _, outcome in self.unchecked("private"):
            convos = outcome.state.round2.conversations
            for entry in outcome.entries:
                if entry.kind == "message":
                    assert entry.visibility == "private"
                if entry.visibility == "public":
                    assert entry.audience == []
                    continue
                assert entry.visibility == "private"
                assert entry.round == 2 and entry.phase.startswith("ROUND_2_"), entry
                assert convos, entry
                human, partner = outcome.state.human_role, convos[-1].partner
                assert human is not None and human != partner
                assert entry.audience == sorted([human, partner])
                assert entry.speaker in (CHAIR, human, partner)


TestMercuryMachine = MercuryMachine.TestCase
TestMercuryMachine.settings = settings(
    max_examples=40,
    stateful_step_count=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --- resuming into a status the state does not support --------------------------------------------------


def test_resume_ready_into_inconsistent_state_is_refused() -> None:
    """A fresh state claimed to rest in ISSUE_INTRO has no issues: resuming it must be refused as a
    MachineError (or at worst leave a state whose next event is refused), never crash with an
    AssertionError."""
    state = machine.apply(SCENARIO, machine.new_game(1), "LOAD_EXISTING_GAME").state
    with pytest.raises(MachineError):
        resumed = machine.apply(SCENARIO, state, "RESUME_READY", {"status": "ISSUE_INTRO"}).state
        machine.apply(SCENARIO, resumed, "ISSUE_INTRO_COMPLETE", {"placement": "first"})
    snapshot = machine.new_game(1).model_copy(update={"status": "ISSUE_INTRO", "human_role": "BRA"})
    with pytest.raises(MachineError):
        machine.resume(SCENARIO, snapshot.model_dump(mode="json"))
