"""What one AI seat needs to negotiate on its turn: what was just said to it, what the engine made of it, what it
has already said, its open conditions and who can offer what.

Everything comes from entries the seat may see (the caller filters) and from the seat's own stance; another
delegation's position is only ever what that delegation backed in its own words, as the judge reads them. The
result goes into the facts block (the offline writer composes from it) and, as prose, into the task text a real
model reads (`situation_text`).

Scenario lines (arguments, asks, openers, closers) are handed over only when the judge reads them the way the
writer will use them: a support line must not back another option, an objection must not read as support, an ask
must not repeat a demand already met. So whatever judge is installed, the offline seat never says what it does
not mean.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from simulations.kinds.negotiation import judge, reading, rules
from simulations.kinds.negotiation.memory import Seen
from simulations.kinds.negotiation.scenario import Scenario
from simulations.kinds.negotiation.state import GameState, Stance

SPOKEN_KINDS = ("opening", "message", "speech")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# A student conceding something reads as support to the judge; these words tell the writer to acknowledge it.
CONCESSION_WORDS = (
    "can accept", "could accept", "can live with", "could live with", "prepared to accept", "willing to accept",
    "will not stand in the way", "would not block", "we concede", "we can agree to", "could agree to",
)  # fmt: skip
ADDRESSED_KEEP = 2  # in debate: answer at most the last two speeches heard since this seat last spoke


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def fingerprint(sentence: str) -> str:
    """A short stable digest of a sentence (case and spacing ignored): how a seat remembers what it said."""
    return hashlib.sha256(" ".join(sentence.lower().split()).encode()).hexdigest()[:8]


def option_ref(scenario: Scenario, option_id: str) -> dict[str, str]:
    """An option as prompts and facts name it: id, label and its issue."""
    for issue in scenario.issues:
        for option in issue.options:
            if option.id == option_id:
                return {"id": option.id, "label": option.label, "issue": issue.id}
    raise KeyError(option_id)


def _offer_ref(scenario: Scenario, offer_id: str) -> dict[str, str]:
    return {"id": offer_id, "label": scenario.offer(offer_id).label}


def _issue_of(scenario: Scenario, option_id: str) -> str:
    return option_ref(scenario, option_id)["issue"]


def _flat(bucket: dict[str, list[str]]) -> list[str]:
    return sorted((o for opts in bucket.values() for o in opts), key=rules.option_sort_key)


def stated_positions(scenario: Scenario, seen: Sequence[Seen]) -> dict[str, dict[str, str]]:
    """speaker -> issue -> the one option it last backed in its own words (a message backing two is skipped)."""
    out: dict[str, dict[str, str]] = {}
    for entry in seen:
        if entry.kind not in SPOKEN_KINDS:
            continue
        signals = judge.shared_signals(scenario, entry.text)
        for issue_id, options in signals.support.items():
            if len(options) == 1:
                out.setdefault(entry.speaker, {})[issue_id] = options[0]
    return out


def _trade_verdict(
    scenario: Scenario, state: GameState, speaker: str, role: str, want: str, promise: str
) -> tuple[bool, str]:
    """Whether the engine took the trade for this seat, and if not, why (the same tests as the judge's)."""
    if any(c.by == speaker and c.to == role and c.in_return == want and c.promise == promise
           for c in state.commitments):  # fmt: skip
        return True, "accepted"
    if not scenario.role(speaker).votes:
        return False, "not_voter"
    want_issue, promise_issue = _issue_of(scenario, want), _issue_of(scenario, promise)
    if want_issue == promise_issue:
        return False, "same_issue"
    if rules.resolved_issue(state, want_issue) or rules.resolved_issue(state, promise_issue):
        return False, "resolved"
    stance = state.stances[role][want_issue]
    if want in stance.red_lines:
        return False, "red_line"
    if state.stances[role][promise_issue].preferred != promise:
        return False, "not_wanted"
    return False, "already"


def _questions(scenario: Scenario, text: str) -> list[dict[str, Any]]:
    out = []
    for sentence in split_sentences(text):
        if not sentence.endswith("?"):
            continue
        # A question backs nothing (the judge reads no stance in it): what it asks about is what it names.
        options, offers = reading.named(scenario, sentence)
        out.append(
            {
                "options": [option_ref(scenario, o) for o in dict.fromkeys(options)],
                "offers": [_offer_ref(scenario, o) for o in offers],
            }
        )
    return out


def _concessions(scenario: Scenario, text: str) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for sentence in split_sentences(text):
        lowered = sentence.lower()
        if sentence.endswith("?") or not any(w in lowered for w in CONCESSION_WORDS):
            continue
        for option in _flat(judge.shared_signals(scenario, sentence).support):
            out.append(option_ref(scenario, option))
    return out


def _statements(text: str) -> str:
    """The message without its questions: "can you offer X?" asks for X, it does not offer it."""
    return " ".join(s for s in split_sentences(text) if not s.endswith("?"))


def _read_entry(
    scenario: Scenario, state: GameState, entry: Seen, role: str, stated: dict[str, dict[str, str]]
) -> dict[str, Any]:
    signals = judge.read_signals(scenario, entry.text)  # a copy: its offers are narrowed below
    stated_offers = judge.shared_signals(scenario, _statements(entry.text)).offers if signals.offers else []
    signals.offers = [o for o in signals.offers if o in stated_offers]
    credible = judge.credible_offers(scenario, entry.speaker, signals)
    trades = []
    for trade in signals.trades:
        accepted, why = _trade_verdict(scenario, state, entry.speaker, role, trade.want, trade.promise)
        trades.append(
            {
                "want": option_ref(scenario, trade.want),
                "promise": option_ref(scenario, trade.promise),
                "accepted": accepted,
                "why": why,
            }
        )
    return {
        "seq": entry.seq,
        "speaker": entry.speaker,
        "name": scenario.display_name(entry.speaker),
        "kind": entry.kind,
        "supports": [option_ref(scenario, o) for o in _flat(signals.support)],
        "opposes": [option_ref(scenario, o) for o in _flat(signals.oppose)],
        "conditional": [option_ref(scenario, o) for o in _flat(signals.conditional)],
        "offers": [_offer_ref(scenario, o) for o in credible],
        "offers_doubtful": [_offer_ref(scenario, o) for o in signals.offers if o not in credible],
        "asks": [_offer_ref(scenario, o) for o in signals.asks],
        "trades": trades,
        "questions": _questions(scenario, entry.text),
        "concedes": _concessions(scenario, entry.text),
        "stated": dict(sorted(stated.get(entry.speaker, {}).items())),
    }


def _addressed(
    scenario: Scenario,
    state: GameState,
    seen: Sequence[Seen],
    role: str,
    purpose: str,
    stated: dict[str, dict[str, str]],
) -> list[dict[str, Any]]:
    """The messages said to this seat since it last spoke, oldest first (in talks: its partner's)."""
    heard: list[Seen] = []
    for entry in reversed(seen):
        if entry.speaker == role and entry.kind in ("message", "speech"):
            break
        if entry.kind == ("message" if purpose.startswith("talk") else "speech"):
            heard.append(entry)
        elif purpose == "speech" and entry.kind == "result":
            break  # a vote closed the previous issue: what came before it is no longer the debate
    heard.reverse()
    if purpose == "speech":
        heard = heard[-ADDRESSED_KEEP:]
    return [_read_entry(scenario, state, e, role, stated) for e in heard]


def _requests(
    scenario: Scenario, seen: Sequence[Seen], role: str, stated: dict[str, dict[str, str]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """What others said they need (a conditional "we could accept X if Y were offered") and still do (they have
    not backed X since), and what was offered in debate."""
    offered: set[str] = set()
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in seen:
        if entry.kind not in SPOKEN_KINDS:
            continue
        signals = judge.shared_signals(scenario, entry.text)
        if entry.kind == "speech":  # offers reach every delegation only in debate (openings move no one)
            offered |= set(judge.credible_offers(scenario, entry.speaker, signals))
        if entry.speaker == role or entry.kind == "opening" or not signals.asks:
            continue  # an opening statement sets out a whole programme: a need counts once said in the talks
        for option in _flat(signals.conditional):
            latest[(entry.speaker, option)] = {
                "speaker": entry.speaker,
                "name": scenario.display_name(entry.speaker),
                "option": option_ref(scenario, option),
                "offers": sorted(signals.asks),
                "seq": entry.seq,
            }
    requests = []
    for request in sorted(latest.values(), key=lambda r: r["seq"]):
        if stated.get(request["speaker"], {}).get(request["option"]["issue"]) == request["option"]["id"]:
            continue  # it already backs the option: nothing to buy
        request["missing"] = [o for o in request["offers"] if o not in offered]
        requests.append(request)
    return requests, sorted(offered)


def _stance_ok(stance: Stance, options: list[str]) -> bool:
    return all(o in stance.acceptable for o in options)


def _line_backs(
    scenario: Scenario,
    state: GameState,
    role: str,
    text: str,
    *,
    issue_only: str | None = None,
    may_back: set[str] | None = None,
    may_ask: set[str] | None = None,
) -> dict[str, str] | None:
    """What a scenario line backs (issue -> option) if the writer may say it, else None.

    A line may back only options the seat accepts (one per issue, and only `may_back` if given), oppose only
    options it does not accept, ask only for offers in `may_ask`, offer nothing and trade nothing; with
    `issue_only`, it may not name another issue's options at all.
    """
    signals = judge.shared_signals(scenario, text)
    if signals.offers or signals.trades or (signals.asks and not set(signals.asks) <= (may_ask or set())):
        return None
    stances = state.stances[role]
    backs: dict[str, str] = {}
    for issue_id, options in signals.support.items():
        if len(options) != 1 or not _stance_ok(stances[issue_id], options):
            return None
        if may_back is not None and options[0] not in may_back:
            return None
        backs[issue_id] = options[0]
    for issue_id, options in signals.oppose.items():
        if any(o in stances[issue_id].acceptable for o in options):
            return None
    for issue_id, options in signals.conditional.items():
        open_accepts = {c.accept for c in stances[issue_id].conditions if c.if_offered}
        if not set(options) <= open_accepts:
            return None
    named = {*signals.support, *signals.oppose, *signals.conditional}
    if issue_only is not None and named - {issue_only}:
        return None
    return backs


def _stems(scenario: Scenario, offers: set[str]) -> list[str]:
    """Word stems of offers already made ("financ" from "financing"), to spot a met demand in other words."""
    return sorted({k.lower()[:6] for o in offers for k in scenario.offer(o).keywords if len(k) >= 6})


def _usable(lines: list[str], **check: Any) -> list[dict[str, Any]]:
    out = []
    scenario, state, role = check.pop("scenario"), check.pop("state"), check.pop("role")
    met = check.pop("met", [])
    for text in lines:
        if any(stem in text.lower() for stem in met):
            continue
        backs = _line_backs(scenario, state, role, text, **check)
        if backs is not None:
            out.append({"text": text, "backs": backs})
    return out


def _lines(
    scenario: Scenario, state: GameState, role_id: str, purpose: str, issue_id: str | None
) -> dict[str, Any]:
    role = scenario.role(role_id)
    stances = state.stances[role_id]
    issues = [issue_id] if issue_id else [i.id for i in scenario.issues]
    common = {"scenario": scenario, "state": state, "role": role_id}
    support: dict[str, list[dict[str, Any]]] = {}
    oppose: dict[str, list[dict[str, Any]]] = {}
    for iss in issues:
        stance = stances[iss]
        arguments = role.arguments[iss]
        for option in [o.id for o in scenario.issue(iss).options]:
            if option in stance.acceptable:
                support[option] = _usable(
                    arguments.support.get(option, []), issue_only=iss, may_back={option}, **common
                )
            else:
                oppose[option] = _usable(
                    arguments.oppose.get(option, []), issue_only=iss, may_back=set(), **common
                )
    heard = set(state.offers_heard.get(role_id, []))
    open_needs = {o for s in stances.values() for c in s.conditions for o in c.if_offered if o not in heard}
    preferred = {s.preferred for s in stances.values()}
    out: dict[str, Any] = {"support": support, "oppose": oppose}
    if purpose.startswith("talk"):
        met = _stems(scenario, heard)
        out["asks"] = _usable(role.talk.asks, may_back=preferred, may_ask=open_needs, met=met, **common)
        out["openers"] = _usable(role.talk.openers, may_back=preferred, **common)
        out["closers"] = _usable(role.talk.closers, may_back=preferred, **common)
    return out


def _persuaded(scenario: Scenario, state: GameState, role_id: str, option_id: str) -> list[str]:
    """The role's "persuaded" lines filled with the option, kept when they read as support for it alone."""
    label = scenario.issue(_issue_of(scenario, option_id)).option(option_id).label
    out = []
    for template in scenario.role(role_id).talk.persuaded:
        at_start = template.startswith("{option}") or ". {option}" in template
        text = template.replace("{option}", label if at_start else label[0].lower() + label[1:])
        signals = judge.shared_signals(scenario, text)
        if signals.support == {_issue_of(scenario, option_id): [option_id]} and not (
            signals.oppose or signals.conditional or signals.offers or signals.trades
        ):
            out.append(text)
    return out


def _changes(
    scenario: Scenario, state: GameState, role_id: str, recent: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """This seat's stance changes since it last spoke, with their cause and the option id."""
    out = []
    for change in recent:
        issue = scenario.issue(change["issue"])
        option = next(o.id for o in issue.options if o.label == change["option_label"])
        reason = str(change.get("reason", ""))
        cause = (
            "condition" if reason.startswith("its condition was met")
            else "trade" if reason.startswith("a trade with")
            else "adoption" if reason.startswith("its commitment applied")
            else "argument"
        )  # fmt: skip
        stance = state.stances[role_id][issue.id]
        if option not in stance.acceptable:
            continue  # withdrawn since
        out.append(
            {
                "issue": issue.id,
                "option": option_ref(scenario, option),
                "field": change["field"],
                "cause": cause,
                "persuaded": _persuaded(scenario, state, role_id, option) if cause == "argument" else [],
            }
        )
    return out


def _promised(scenario: Scenario, seen: Sequence[Seen], role: str) -> list[str]:
    """Offers this seat said yes to in a private talk: its partner asked for them (as a need or a question) and
    its next message offered them. A seat keeps that word in debate; an offer it mentioned unasked binds it less."""
    promised: set[str] = set()
    asked: set[str] = set()
    for entry in seen:
        if entry.kind != "message":
            continue
        if entry.speaker != role:
            asked = set(judge.shared_signals(scenario, entry.text, speaker=entry.speaker).asks)
            asked |= {o["id"] for q in _questions(scenario, entry.text) for o in q["offers"]}
            continue
        signals = judge.shared_signals(scenario, _statements(entry.text), speaker=role)
        promised |= asked & set(judge.credible_offers(scenario, role, signals))
        asked = set()
    return sorted(promised)


def negotiation_facts(
    scenario: Scenario,
    state: GameState,
    seen: Sequence[Seen],
    role_id: str,
    purpose: str,
    recent_changes: list[dict[str, Any]],
    issue_id: str | None,
) -> dict[str, Any]:
    role = scenario.role(role_id)
    stated = stated_positions(scenario, seen)
    requests, offered = _requests(scenario, seen, role_id, stated)
    own = [e for e in seen if e.speaker == role_id and e.kind in ("message", "speech")]
    who_can = {
        o.id: [scenario.display_name(r.id) for r in scenario.roles if o.id in r.can_offer and r.id != role_id]
        for o in scenario.offers
    }
    stances = state.stances[role_id]
    facts: dict[str, Any] = {
        "addressed": _addressed(scenario, state, seen, role_id, purpose, stated),
        "changes": _changes(scenario, state, role_id, recent_changes),
        "requests": requests,
        "offered": offered,
        "offers_heard": sorted(state.offers_heard.get(role_id, [])),
        "promised": _promised(scenario, seen, role_id),
        "can_offer": [_offer_ref(scenario, o) for o in role.can_offer],
        "who_can_offer": who_can,
        "red_lines": sorted({o for s in stances.values() for o in s.red_lines}, key=rules.option_sort_key),
        "firmness": {i: s.firmness for i, s in sorted(stances.items())},
        "votes": role.votes,
        "used": sorted({fingerprint(s) for e in own for s in split_sentences(e.text)}),
        "own_trades": sorted(
            {f"{t.want}>{t.promise}" for e in own for t in judge.shared_signals(scenario, e.text).trades}
        ),
        "spoken": len(own),
        "lines": _lines(scenario, state, role_id, purpose, issue_id),
    }
    student = _counterpart(state)
    if student:
        facts["human"] = student
        facts["partner_votes"] = scenario.role(student).votes
        facts["partner_can_offer"] = list(scenario.role(student).can_offer)
        facts["partner_stated"] = dict(sorted(stated.get(student, {}).items()))
    return facts


def _counterpart(state: GameState) -> str | None:
    """The student a delegation answers: in a talk, the student it talks with; elsewhere the first student."""
    convo = state.active_conversation
    return state.talker_of(convo) if convo is not None else state.human_role


def _names(refs: list[dict[str, str]]) -> str:
    return ", ".join(f"{r['id']} ({r['label']})" for r in refs)


_WHY = {
    "accepted": "the trade stands: you now accept what they asked for",
    "not_voter": "they cannot vote, so their promise is worth nothing at the ballot",
    "same_issue": "both options belong to one issue",
    "resolved": "one of the issues is already decided",
    "red_line": "what they ask for is one of your red lines",
    "not_wanted": "what they promise is not the option you prefer",
    "already": "you already accept what they ask for",
}


def situation_text(facts: dict[str, Any]) -> str:
    """The same negotiation facts as prose, for a real model (which never sees the facts block)."""
    lines: list[str] = []
    for heard in facts["addressed"]:
        said = []
        if heard["supports"]:
            said.append(f"backs {_names(heard['supports'])}")
        if heard["opposes"]:
            said.append(f"objects to {_names(heard['opposes'])}")
        if heard["offers"]:
            said.append("offers " + ", ".join(o["label"] for o in heard["offers"]))
        if heard["asks"]:
            said.append("asks for " + ", ".join(o["label"] for o in heard["asks"]))
        for trade in heard["trades"]:
            said.append(
                f"proposes a trade (you support {trade['want']['id']}, they support {trade['promise']['id']}): "
                f"{_WHY[trade['why']]}"
            )
        if heard["questions"]:
            said.append(f"asks {len(heard['questions'])} question(s) you should answer")
        if said:
            lines.append(f"- {heard['name']} just said to you: " + "; ".join(said) + ".")
    for change in facts["changes"]:
        lines.append(
            f"- Since you last spoke you came to accept {change['option']['id']} ({change['cause']})."
        )
    for request in facts["requests"]:
        missing = [o for o in request["missing"]]
        if missing:
            lines.append(
                f"- {request['name']} said it could accept {request['option']['id']} if offered: "
                f"{', '.join(missing)} (not yet offered)."
            )
    if facts["can_offer"]:
        lines.append("- You can offer: " + ", ".join(o["label"] for o in facts["can_offer"]) + ".")
    if not lines:
        return "Nothing new has been put to you since you last spoke."
    return "What is in front of you:\n" + "\n".join(lines)
