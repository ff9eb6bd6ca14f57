"""Scripted stand-ins for the student, used by the `play` command, tests and benchmarks.

A policy sees the scenario, the state and the step the game waits for, and returns the human event to submit.
Policies are pure functions of that input (no hidden counters), so a resumed game makes the same decisions. In
Round 2's side-by-side lanes (a game several students share) the state is focused on the step's lane
(`machine.focused`): its talk is `state.active_conversation`, its student's requests `state.talk_requests`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Protocol

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from simulations.engine import rng
from simulations.kinds.negotiation import rules
from simulations.kinds.negotiation.machine import Event, Status, Step
from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import Conversation, GameState
from simulations.services.policy.message_text import CONTROL_CHARACTERS, has_control_characters

Decision = tuple[str, dict[str, Any]]

PASSIVE_LINES = [
    "Thank you for sharing your views. We have noted them carefully and will reflect on them with our capital.",
    "We appreciate the frankness of this exchange and want to keep listening before we say more.",
    "That is helpful to understand. Our delegation is still consulting and is not in a position to commit today.",
    "We hear you. Let us keep this channel open as the debate unfolds in plenary.",
    "Thank you. We will take your points back to our team and consider them in good faith.",
    "We value this conversation and hope both our delegations can find common ground in the days ahead.",
]


class Policy(Protocol):
    name: str

    def decide(self, scenario: Scenario, state: GameState, step: Step) -> Decision: ...


def _own_ballot(state: GameState, role: str) -> str:
    issue = state.active_issue
    assert issue is not None and issue.proposal is not None
    return "yes" if issue.proposal in state.stances[role][issue.issue_id].acceptable else "no"


def own_talks(state: GameState, role: str) -> list[Conversation]:
    """The talks `role` chose (a class group's student may also be the partner in another student's talk)."""
    return [c for c in state.round2.conversations if state.talker_of(c) == role]


def talked(state: GameState, role: str, other: str) -> bool:
    return any({state.talker_of(c), c.partner} == {role, other} for c in state.round2.conversations)


def other_party(state: GameState, convo: Conversation, role: str) -> str:
    """Who `role` talks with in `convo`."""
    talker = state.talker_of(convo)
    return convo.partner if talker == role else str(talker)


def own_turns(state: GameState, convo: Conversation, role: str) -> int:
    """How many messages `role` has sent in `convo` (its final one counted)."""
    if state.talker_of(convo) == role:
        return convo.human_turns + int(convo.human_final)
    return convo.partner_turns + int(convo.partner_final)


def requested_partners(scenario: Scenario, state: GameState, role: str) -> list[str]:
    """The delegations that asked to talk with `role`, then every other seat, less those it has talked with and
    students in a talk just now."""
    seats = [*state.talk_requests, *scenario.role_ids]
    return [
        p for p in dict.fromkeys(seats) if p != role and not talked(state, role, p) and state.free_to_talk(p)
    ]


def current_talk(state: GameState) -> Conversation:
    """The talk a talk step is about (the open one)."""
    convo = state.active_conversation
    assert convo is not None, "no talk is open"
    return convo


class Passive:
    """Takes the safe default at every decision and never argues."""

    name = "passive"

    def __init__(self, role: str, variant: str | None = None) -> None:
        self.role, self.variant = role, variant

    def decide(self, scenario: Scenario, state: GameState, step: Step) -> Decision:
        match step.purpose:
            case "role":
                return Event.ROLE_CONFIRMED, {"role": self.role, "variant": self.variant}
            case "opening":
                return Event.OPENING_PRESENTED, {}
            case "partner":
                if state.round2_phase == Status.ROUND_2_SELECT_CONVO_1:
                    partner = requested_partners(scenario, state, self.role)[0]
                    return Event.CONVO_1_STARTED, {"partner": partner, "starter": "partner"}
                return Event.CONVO_2_SKIPPED, {}
            case "talk" | "talk_open" | "talk_final":
                line = rng.choice(state.seed, "passive-line", PASSIVE_LINES, state.event_seq)
                return Event.HUMAN_MESSAGE_SUBMITTED, {"text": line}
            case "placement":
                return Event.ISSUE_INTRO_COMPLETE, {"placement": "random"}
            case "speech":
                return Event.HUMAN_TURN_SKIP, {}
            case "vote":
                return Event.HUMAN_VOTE_CAST, {"ballot": _own_ballot(state, self.role)}
        raise ValueError(f"passive policy has no decision for {step}")


class Advocate(Passive):
    """Pushes its role's preferred options in talks and debate, puts its offers on the table, and names its price:
    where its brief would accept an option once something is offered, it says so (in a talk, to a partner who can
    pay it; in debate, to everyone) and votes for that option once the offer has been made."""

    name = "advocate"

    def decide(self, scenario: Scenario, state: GameState, step: Step) -> Decision:
        role = scenario.role(self.role)
        if step.purpose == "partner":
            convo_count = len(own_talks(state, self.role))
            starter = "human"
            free = requested_partners(scenario, state, self.role)
            asked = [p for p in state.talk_requests if p in free]
            if convo_count == 0:
                partner = (asked or free)[0]
                return Event.CONVO_1_STARTED, {"partner": partner, "starter": starter}
            if len(state.talk_requests) > 1 and asked:
                return Event.CONVO_2_STARTED, {"partner": asked[0], "starter": starter}
            return Event.CONVO_2_SKIPPED, {}
        if step.purpose in ("talk", "talk_open", "talk_final"):
            convo = current_talk(state)
            partner = other_party(state, convo, self.role)
            n = own_turns(state, convo, self.role)
            issue = scenario.issues[n % len(scenario.issues)]
            payer = set(scenario.role(partner).can_offer)
            price = None
            if n == 0:
                price = self._price(scenario, state, [i.id for i in scenario.issues], payer)
                price = price or self._lobby(scenario, state, partner)
            trade = self._trade(scenario, state, partner) if n == 1 else None
            offers = role.can_offer[n % len(role.can_offer) :][:1] if role.can_offer else []
            text = trade or self._plea(scenario, state, issue.id, n, offers)
            return Event.HUMAN_MESSAGE_SUBMITTED, {"text": f"{text} {price}" if price else text}
        if step.purpose == "placement":
            return Event.ISSUE_INTRO_COMPLETE, {"placement": "first"}
        if step.purpose == "speech":
            issue_state = state.active_issue
            assert issue_state is not None
            k = issue_state.debate_round
            offers = role.can_offer[
                2 * (k - 1) : 2 * k
            ]  # in debate, two of our offers a round, in brief order
            text = self._plea(scenario, state, issue_state.issue_id, k, offers)
            price = self._price(scenario, state, [issue_state.issue_id], None)
            return Event.HUMAN_TURN_SPEAK, {"text": f"{text} {price}" if price else text}
        if step.purpose == "vote":
            return Event.HUMAN_VOTE_CAST, {"ballot": "yes" if self._would_accept(state) else "no"}
        return super().decide(scenario, state, step)

    def _price(
        self, scenario: Scenario, state: GameState, issue_ids: list[str], payer: set[str] | None
    ) -> str | None:
        """Our first open condition on these issues (an option our brief accepts once something is offered that
        has not been yet), as a conditional: "We could accept 1.1 if a dedicated financial mechanism were
        offered." With a `payer`, only a price that payer can pay in full."""
        heard = set(state.offers_heard.get(self.role, []))
        for issue_id in issue_ids:
            if rules.resolved_issue(state, issue_id):
                continue
            for cond in state.stances[self.role][issue_id].conditions:
                missing = [o for o in cond.if_offered if o not in heard]
                if missing and (payer is None or set(missing) <= payer):
                    needs = " and ".join(scenario.offer(o).label for o in missing)
                    return f"We could accept {cond.accept} if {needs} were offered."
        return None

    def _lobby(self, scenario: Scenario, state: GameState, partner: str) -> str | None:
        """Ask a partner who can pay for what we cannot give ourselves (an observer's way to unlock a holdout):
        "Would Canada be ready to offer a dedicated financial mechanism?" Its yes is a promise it keeps."""
        own, said = state.stances[self.role], state.stated.get(partner, {})
        if not any(option == own[issue_id].preferred for issue_id, option in said.items()):
            return None  # only an ally (it backs in public an option we prefer) is asked to pay for our goals
        ours = set(scenario.role(self.role).can_offer)
        theirs = [o for o in scenario.role(partner).can_offer if o not in ours]
        if not theirs:
            return None
        return f"Would {scenario.display_name(partner)} be ready to offer {scenario.offer(theirs[0]).label}?"

    def _would_accept(self, state: GameState) -> bool:
        """Our brief's acceptable options, and an option whose condition has been met: its offers were made to
        us, or the option it depended on was adopted."""
        issue = state.active_issue
        assert issue is not None and issue.proposal is not None
        stance = state.stances[self.role][issue.issue_id]
        if issue.proposal in stance.acceptable:
            return True
        heard, adopted = set(state.offers_heard.get(self.role, [])), rules.adopted_options(state)
        return any(
            cond.accept == issue.proposal
            and (set(cond.if_offered) <= heard if cond.if_offered else cond.if_adopted in adopted)
            for cond in stance.conditions
        )

    def _trade(self, scenario: Scenario, state: GameState, partner: str) -> str | None:
        """A vote for a vote with a voting partner, from public information only: we promise support for an option
        the partner has said in public it backs (and we can accept) in return for our own preferred option on an
        issue where the partner has not publicly backed it. None when no such pair exists."""
        if not (scenario.role(self.role).votes and scenario.role(partner).votes):
            return None
        own = state.stances[self.role]
        said = state.stated.get(partner, {})
        promises = [
            (issue_id, option) for issue_id, option in sorted(said.items())
            if option in own[issue_id].acceptable and option != own[issue_id].preferred
        ]  # fmt: skip
        wants = [issue.id for issue in scenario.issues if said.get(issue.id) != own[issue.id].preferred]
        for promise_issue, promise in promises:
            for want_issue in wants:
                if want_issue != promise_issue:
                    want = own[want_issue].preferred
                    return f"If you support {want}, we will support {promise}."
        return None

    def _plea(self, scenario: Scenario, state: GameState, issue_id: str, n: int, offers: list[str]) -> str:
        """Our preferred option on the issue, one of our arguments for it (the n-th), and `offers` put on the
        table."""
        issue = scenario.issue(issue_id)
        preferred = state.stances[self.role][issue_id].preferred
        option = issue.option(preferred)
        lines = scenario.role(self.role).arguments[issue_id].support[preferred]
        parts = [
            f"On {issue.title.lower()}, we support {option.label.lower()} ({option.id}).",
            lines[n % len(lines)],
        ]
        if offers:
            labels = " and ".join(scenario.offer(o).label for o in offers)
            parts.append(f"To make that possible, we are ready to offer {labels}.")
        return " ".join(parts)


def _storable(text: str) -> str:
    """A script is stored with its game (PostgreSQL refuses NUL in JSON): the shared text rule's controls check."""
    if has_control_characters(text):
        raise ValueError(CONTROL_CHARACTERS)
    return text


Text = Annotated[str, AfterValidator(_storable)]


class ScriptedTalk(BaseModel):
    model_config = ConfigDict(extra="forbid")
    partner: Text
    starter: Text = "human"
    messages: list[Text] = Field(default_factory=list)


class ScriptedIssue(BaseModel):
    model_config = ConfigDict(extra="forbid")
    placement: Text = "skip"
    speeches: list[Text | None] = Field(default_factory=list)
    vote: Text | None = None


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Text | None = None
    variant: Text | None = None
    talks: list[ScriptedTalk] = Field(default_factory=list, max_length=2)
    issues: dict[str, ScriptedIssue] = Field(default_factory=dict)


class Scripted(Passive):
    """Replays the student's decisions and messages from a YAML or JSON file; gaps fall back to passive."""

    name = "script"

    def __init__(self, role: str, script: Script, path: str = "") -> None:
        super().__init__(script.role or role, script.variant)
        self.script, self.path = script, path

    @classmethod
    def from_file(cls, role: str, path: str | Path) -> Scripted:
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
            return cls(role, Script.model_validate(data), str(path))
        except (OSError, yaml.YAMLError, ValidationError, ValueError) as exc:  # ValueError: a NUL in the path
            raise ValueError(f"cannot read script {path}: {exc}") from exc

    def decide(self, scenario: Scenario, state: GameState, step: Step) -> Decision:
        talks, issue = self.script.talks, state.active_issue
        if step.purpose == "partner":
            n = len(own_talks(state, self.role))
            if n < len(talks):
                event = Event.CONVO_1_STARTED if n == 0 else Event.CONVO_2_STARTED
                return event, {"partner": talks[n].partner, "starter": talks[n].starter}
        if step.purpose in ("talk", "talk_open", "talk_final"):
            convo = current_talk(state)
            n = own_turns(state, convo, self.role)
            mine = state.talker_of(convo) == self.role  # a script writes its own talks, not others' with it
            messages = talks[convo.index].messages if mine and convo.index < len(talks) else []
            if n < len(messages):
                return Event.HUMAN_MESSAGE_SUBMITTED, {"text": messages[n]}
        plan = self.script.issues.get(issue.issue_id) if issue else None
        if plan and issue:
            if step.purpose == "placement":
                return Event.ISSUE_INTRO_COMPLETE, {"placement": plan.placement}
            if step.purpose == "speech":
                k = issue.debate_round - 1
                if k < len(plan.speeches) and plan.speeches[k]:
                    return Event.HUMAN_TURN_SPEAK, {"text": plan.speeches[k]}
                return Event.HUMAN_TURN_SKIP, {}
            if step.purpose == "vote" and plan.vote:
                return Event.HUMAN_VOTE_CAST, {"ballot": plan.vote}
        return super().decide(scenario, state, step)


class StandIn(Advocate):
    """The AI's stand-in for a class group's student (their seat handed to the AI, or their turn limit passed):
    argues the seat's brief as `Advocate` does, each move marked as the stand-in's (`stand_in`)."""

    name = "stand-in"

    def decide(self, scenario: Scenario, state: GameState, step: Step) -> Decision:
        event, payload = super().decide(scenario, state, step)
        return event, {**payload, "stand_in": True}


class BySeat:
    """Several students in one game (a class group's): each seat's policy decides when that seat acts. The first
    confirms the seats, its own and (`others`) the rest."""

    name = "seats"

    def __init__(self, policies: list[Policy]) -> None:
        self.policies = {_role_of(p): p for p in policies}
        self.first = policies[0]

    def decide(self, scenario: Scenario, state: GameState, step: Step) -> Decision:
        if step.purpose == "role":
            event, payload = self.first.decide(scenario, state, step)
            return event, {**payload, "others": [seat for seat in self.policies if seat != payload["role"]]}
        return self.policies.get(step.role or "", self.first).decide(scenario, state, step)


def _role_of(policy: Policy) -> str:
    role = getattr(policy, "role", None)
    assert isinstance(role, str), f"{policy.name} holds no seat"
    return role


def make_policy(spec: str, role: str) -> Policy:
    if spec == "passive":
        return Passive(role)
    if spec == "advocate":
        return Advocate(role)
    if spec.startswith("script:"):
        return Scripted.from_file(role, spec.removeprefix("script:"))
    raise ValueError(f"unknown human policy {spec!r}: use passive, advocate or script:FILE")


def policy_record(policy: Policy) -> dict[str, Any]:
    """What to store with a game so that it can be resumed with the same student: a script keeps its content
    (the file may have moved or changed by the time the game is resumed)."""
    if isinstance(policy, BySeat):  # a class group's: the same bot in every seat (headless.bot)
        return policy_record(policy.first)
    if isinstance(policy, Scripted):
        return {"kind": "script", "path": policy.path, "script": policy.script.model_dump(mode="json")}
    return {"kind": policy.name}


def policy_from_record(record: dict[str, Any], role: str) -> Policy:
    """The policy a game was stored with (see `policy_record`)."""
    kind = record.get("kind")
    if kind == "script":
        try:
            return Scripted(
                role, Script.model_validate(record.get("script") or {}), str(record.get("path", ""))
            )
        except ValidationError as exc:
            raise ValueError("the script stored with this game is not valid") from exc
    return make_policy(str(kind), role)


def describe_policy(record: dict[str, Any]) -> str:
    """The policy as `--human` spells it."""
    if record.get("kind") == "script":
        return f"script:{record.get('path') or '(stored script)'}"
    return str(record.get("kind"))
