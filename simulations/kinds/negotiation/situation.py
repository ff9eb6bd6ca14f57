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
from collections.abc import Collection, Sequence
from typing import Any, cast

from simulations.kinds.negotiation import dialogue, judge, reading, rules
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


def stated_positions(
    scenario: Scenario, seen: Sequence[Seen], humans: Collection[str] = ()
) -> dict[str, dict[str, str]]:
    """speaker -> issue -> the one option it last backed in its own words (a message backing two is skipped). A
    student's words are read as the engine read them, by meaning too."""
    out: dict[str, dict[str, str]] = {}
    for entry in seen:
        if entry.kind not in SPOKEN_KINDS:
            continue
        signals = judge.shared_signals(scenario, entry.text, meaning=entry.speaker in humans)
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
    if judge.cooled(state):
        return False, "cooled"
    want_issue, promise_issue = _issue_of(scenario, want), _issue_of(scenario, promise)
    if want_issue == promise_issue:
        return False, "same_issue"
    if rules.resolved_issue(state, want_issue) or rules.resolved_issue(state, promise_issue):
        return False, "resolved"
    stance = state.stances[role][want_issue]
    if want in stance.red_lines and want not in stance.acceptable:
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
                "issues": dialogue.issues_named(scenario, sentence),  # its subject, when it names no option
                "on_topic": dialogue.touches(scenario, sentence),
                "price": dialogue.asks_price(sentence),  # what the listener wants in return
                "priority": dialogue.asks_priority(sentence),  # what matters most to the listener
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
    # A copy: its offers are narrowed below. A student's words are read as the engine read them, by meaning too
    # (within the debated issue for a speech), so that the reply answers what moved the listener.
    human = entry.speaker in state.humans
    speaker = entry.speaker if human else None
    issue = getattr(entry, "issue", None) if human and entry.kind == "speech" else None
    signals = judge.read_signals(scenario, entry.text, speaker=speaker, issue=issue, meaning=human)
    statements = _statements(entry.text)
    stated_offers = (
        judge.shared_signals(scenario, statements, speaker=speaker, issue=issue, meaning=human).offers
        if signals.offers
        else []
    )
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
    acts = dialogue.read_acts(scenario, entry.text)
    questions = _questions(scenario, entry.text)
    read_issues = {
        *signals.support, *signals.oppose, *signals.conditional,
        *(_issue_of(scenario, o) for t in signals.trades for o in (t.want, t.promise)),
        *(o["issue"] for q in questions for o in q["options"]),
    }  # fmt: skip
    named_issues = [*(_issue_of(scenario, o) for o in acts.options_named), *acts.issues_named]
    read_offers = {*signals.offers, *signals.asks, *(o["id"] for q in questions for o in q["offers"])}
    return {
        "seq": entry.seq,
        "speaker": entry.speaker,
        "name": scenario.display_name(entry.speaker),
        "kind": entry.kind,
        # What the message does besides taking positions (dialogue.py), and what it named without saying what
        # it means: an issue with no position read on it, an offer neither made, asked for nor asked about.
        "acts": {
            "greeting": acts.greeting,
            "thanks": acts.thanks,
            "farewell": acts.farewell,
            "acknowledges": acts.acknowledges,
            "hostile": acts.hostile,
            "off_topic_questions": len(acts.off_topic_questions),
            "on_topic": acts.on_topic,
        },
        "unclear_issues": [i for i in dict.fromkeys(named_issues) if i not in read_issues],
        "unclear_offers": [_offer_ref(scenario, o) for o in acts.offers_named if o not in read_offers],
        "supports": [option_ref(scenario, o) for o in _flat(signals.support)],
        "opposes": [option_ref(scenario, o) for o in _flat(signals.oppose)],
        "conditional": [option_ref(scenario, o) for o in _flat(signals.conditional)],
        "offers": [_offer_ref(scenario, o) for o in credible],
        "offers_doubtful": [_offer_ref(scenario, o) for o in signals.offers if o not in credible],
        "asks": [_offer_ref(scenario, o) for o in signals.asks],
        "trades": trades,
        "questions": questions,
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
    out = [_read_entry(scenario, state, e, role, stated) for e in heard]
    issue = state.active_issue.issue_id if purpose == "speech" and state.active_issue else None
    for entry, read in zip(heard, out, strict=True):
        if issue is not None and not read["acts"]["hostile"]:
            read["engage"] = _engagements(scenario, entry, role, issue)
    return out


_OPTION_REF = re.compile(r"\(\d+\.\d+\)")


def _proper_words(scenario: Scenario) -> set[str]:
    """Words the scenario's lines capitalise in mid-sentence (names such as "Arctic" or "China"): a reason
    starting with one keeps its capital after "that"; any other first word is lower-cased."""
    memo = scenario.memo()
    found = memo.get(("proper-words",))
    if found is None:
        words: set[str] = set()
        for role in scenario.roles:
            for arguments in role.arguments.values():
                for lines in (*arguments.support.values(), *arguments.oppose.values()):
                    for line in lines:
                        words |= set(re.findall(r"(?<=[a-z,;] )[A-Z][A-Za-z]*", line))
        found = memo[("proper-words",)] = words
    assert isinstance(found, set)
    return found


def _lower_first(scenario: Scenario, text: str) -> str:
    first = text.split()[0]
    if first in _proper_words(scenario) or (first.isupper() and len(first) > 1):
        return text
    return first.lower() + text[len(first) :]


_FIRST_PERSON = re.compile(r"\b(we|our|ours|us|i|my)\b", re.IGNORECASE)


def _reason_of(scenario: Scenario, text: str) -> str | None:
    """The reason a speech gives: the first clause of its first sentence that argues rather than states a
    position (no option reference, no delegation named, no question), lower-cased to follow "that"."""
    names = [scenario.display_name(r) for r in scenario.role_ids]
    for sentence in split_sentences(text):
        if sentence.endswith("?") or _OPTION_REF.search(sentence) or any(n in sentence for n in names):
            continue
        clause = dialogue.reason_clause(sentence)
        if len(clause) < 25 or len(clause) > 160 or _FIRST_PERSON.search(clause):
            continue  # reported in another's mouth, "we" and "our" would change whom they mean
        return _lower_first(scenario, clause)
    return None


def _engagements(scenario: Scenario, entry: Seen, role: str, issue: str) -> dict[str, list[str]]:
    """Sentences this seat may use to engage a debate speech's argument (agreeing or differing), each checked by
    the judge: agreement may back only what the speaker backed here, difference must back nothing, and neither
    may name another issue's options."""
    # Asked again for the same speech at every later prompt of the debate: kept, found or not.
    key = ("engage", role, entry.speaker, issue, entry.text)
    memo = scenario.memo()
    if key in memo:
        kept = cast(dict[str, list[str]], memo[key])
        return {side: list(texts) for side, texts in kept.items()}
    reason = _reason_of(scenario, entry.text)
    theirs = judge.shared_signals(scenario, entry.text, speaker=entry.speaker, issue=issue).support.get(
        issue, []
    )
    if reason is None or len(theirs) != 1:
        memo[key] = {"agree": [], "differ": []}
        return {"agree": [], "differ": []}
    me, them = scenario.role(role).name, scenario.display_name(entry.speaker)
    out: dict[str, list[str]] = {"agree": [], "differ": []}
    turn = int(
        fingerprint(reason), 16
    )  # which frame comes first: varies with the reason, the same every replay
    for side, frames in (("agree", dialogue.ENGAGE_AGREE), ("differ", dialogue.ENGAGE_DIFFER)):
        start = turn % len(frames)
        for frame in frames[start:] + frames[:start]:
            if out[side]:
                break  # one checked sentence per side is enough
            text = frame.format(me=me, them=them, reason=reason)
            text = text[0].upper() + text[1:]
            # Read as the engine reads it (this seat speaking) and as a reader who does not know the speaker
            # (who may take the quoted delegation for the speaker): neither may find anything unintended.
            readings = [
                judge.shared_signals(scenario, text, speaker=role),
                judge.shared_signals(scenario, text),
            ]
            named = {_issue_of(scenario, o) for o in reading.named(scenario, text)[0]}
            backs = {o for r in readings for opts in r.support.values() for o in opts}
            clean = not any(r.oppose or r.conditional or r.offers or r.asks or r.trades for r in readings)
            if clean and named <= {issue} and backs <= (set(theirs) if side == "agree" else set()):
                out[side].append(text)
    memo[key] = out
    return {side: list(texts) for side, texts in out.items()}


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


REASONED = {
    "preferred": ["{me} supports {opt} because {reason}.", "{me} backs {opt}, since {reason}."],
    "concede": ["{me} can accept {opt}, since {reason}.", "{me} could live with {opt}, because {reason}."],
    "oppose": ["{me} cannot accept {opt}, because {reason}.", "{me} opposes {opt}, since {reason}."],
}
_OWN_VOICE = re.compile(r"^(our|we|us|i|the delegation|this delegation)\b", re.IGNORECASE)


def _reasoned(
    scenario: Scenario, role_id: str, issue_id: str, option: str, kind: str, lines: list[str]
) -> list[dict[str, str]]:
    """The seat's position on `option` (`kind`: preferred, concede or oppose) joined to one of its own reasons
    ("China backs voluntary measures (1.2), since ..."), one sentence per usable line, kept only when the judge
    reads it as taking exactly that position. `line` is the argument used, so the seat does not say it again on
    its own. Memoised per scenario: a seat's lines and stance change rarely, and each check is a judge read."""
    key = ("reasoned", role_id, option, kind, tuple(lines))
    memo = scenario.memo()
    if key in memo:
        return list(cast(list[dict[str, str]], memo[key]))
    me = scenario.role(role_id).name
    label = scenario.issue(issue_id).option(option).label
    ref = f"{label[0].lower()}{label[1:]} ({option})"
    frames = REASONED[kind]
    out = []
    for n, line in enumerate(lines):
        if _OWN_VOICE.match(line) or len(split_sentences(line)) != 1:
            continue
        reason = _lower_first(scenario, line.strip().rstrip(".!"))
        for frame in (
            frames[n % len(frames) :] + frames[: n % len(frames)]
        ):  # vary the frame from line to line
            text = frame.format(me=me, opt=ref, reason=reason)
            signals = judge.shared_signals(scenario, text, speaker=role_id)
            side, other = (
                (signals.oppose, signals.support) if kind == "oppose" else (signals.support, signals.oppose)
            )
            if side == {issue_id: [option]} and not (
                other or signals.conditional or signals.offers or signals.asks or signals.trades
            ):
                out.append({"text": text, "line": line, "kind": kind})
                break
    memo[key] = out
    return list(out)


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
    if issue_id is not None:  # debate: a position said together with its reason, one sentence of content
        stance = stances[issue_id]
        out_reasoned = {
            option: _reasoned(
                scenario, role_id, issue_id, option,
                "preferred" if option == stance.preferred else "concede" if option in support else "oppose",
                [u["text"] for u in usable],
            )
            for option, usable in (*support.items(), *oppose.items())
        }  # fmt: skip
    heard = set(state.offers_heard.get(role_id, []))
    open_needs = {o for s in stances.values() for c in s.conditions for o in c.if_offered if o not in heard}
    preferred = {s.preferred for s in stances.values()}
    out: dict[str, Any] = {"support": support, "oppose": oppose}
    if issue_id is not None:
        out["reasoned"] = out_reasoned
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
    stated = stated_positions(scenario, seen, state.humans)
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
        if purpose.startswith("talk"):
            facts.update(_talk_memory(scenario, seen, role_id, student, student in state.humans))
            facts["cooled"] = judge.cooled(state)
    facts["own_backed"] = _own_backed(scenario, seen, role_id)
    facts["accept_reasons"] = _accept_reasons(scenario, state, role_id)
    facts["withdrawn"] = {
        c.in_return: f"{scenario.display_name(c.by)} broke its promise to support the proposal"
        for c in state.commitments
        if c.to == role_id and c.status == "broken" and c.added_acceptable
    }
    return facts


def _accept_reasons(scenario: Scenario, state: GameState, role_id: str) -> dict[str, str]:
    """Why the seat accepts each option it accepts without preferring it, as a clause a concession can carry
    ("... since {reason}"): a trade struck for it, a condition met, arguments that moved it, or the room's
    support. Named neither delegations nor other issues' options, so it claims nothing about anyone else."""
    spec = scenario.role(role_id).stances
    out: dict[str, str] = {}
    for issue_id, stance in sorted(state.stances[role_id].items()):
        initial = spec[issue_id]
        for option in stance.acceptable:
            if option == stance.preferred:
                continue
            traded = any(
                c.to == role_id and c.in_return == option and c.status in ("open", "kept")
                for c in state.commitments
            )
            met = any(c.accept == option and c.if_offered for c in initial.conditions) and not any(
                c.accept == option for c in stance.conditions
            )
            backers = sum(
                1 for r, said in state.stated.items() if r != role_id and said.get(issue_id) == option
            )
            if traded:
                out[option] = "a trade agreed in the private talks gives us what we asked for in return"
            elif met and option not in initial.acceptable:
                out[option] = "what we asked for in return has now been put on the table"
            elif option not in initial.acceptable:
                out[option] = "the arguments heard in this committee have changed our assessment"
            elif backers >= 2:
                out[option] = f"{backers} delegations have spoken for it and a decision needs every country"
            else:
                out[option] = "a decision needs every country, and we would rather join one than block it"
    return out


def _own_backed(scenario: Scenario, seen: Sequence[Seen], role: str) -> dict[str, list[str]]:
    """issue -> the options this seat has said in its own words it backs or can accept, game-wide: a concession
    made stands, so the writer never contradicts it without giving the reason."""
    out: dict[str, set[str]] = {}
    for entry in seen:
        if entry.speaker == role and entry.kind in SPOKEN_KINDS:
            for issue_id, options in judge.shared_signals(scenario, entry.text, speaker=role).support.items():
                out.setdefault(issue_id, set()).update(options)
    return {i: sorted(o, key=rules.option_sort_key) for i, o in sorted(out.items())}


def _talk_memory(
    scenario: Scenario, seen: Sequence[Seen], role: str, partner: str, human: bool = False
) -> dict[str, Any]:
    """What this talk has already settled, so the seat neither asks twice nor greets twice: the partner's earlier
    greetings and thanks (returned once), what the seat already asked the partner to support, what the partner
    refused (opposed, or answered by backing another option of the issue after being asked) and the offers the
    partner made in so many words."""
    pair = sorted([role, partner])
    talk = [e for e in seen if e.kind == "message" and sorted(getattr(e, "audience", []) or []) == pair]
    last_own = max((n for n, e in enumerate(talk) if e.speaker == role), default=-1)
    earlier = [e for e in talk[: last_own + 1] if e.speaker == partner]
    asked: set[str] = set()
    refused: set[str] = set()
    conditioned: set[str] = set()  # options this seat already said, in this talk, it could accept "if ..."
    # Options the partner backed, backed on terms or promised in a trade in this talk; those this seat backed.
    granted: set[str] = set()
    said_here: set[str] = set()
    for entry in talk:
        if entry.speaker == role:
            asked |= {o["id"] for q in _questions(scenario, entry.text) for o in q["options"]}
            own = judge.shared_signals(scenario, entry.text, speaker=role)
            conditioned |= set(_flat(own.conditional))
            said_here |= set(_flat(own.support))
            continue
        signals = judge.shared_signals(scenario, entry.text, speaker=partner, meaning=human)
        refused |= set(_flat(signals.oppose))
        granted |= {
            *_flat(signals.support),
            *_flat(signals.conditional),
            *(t.promise for t in signals.trades),
        }
        for issue_id, options in signals.support.items():
            refused |= {o for o in asked if _issue_of(scenario, o) == issue_id and o not in options}
    acts = [dialogue.read_acts(scenario, e.text) for e in earlier]
    return {
        "greeted_before": any(a.greeting for a in acts),
        "thanked_before": any(a.thanks for a in acts),
        "hostile_before": any(a.hostile for a in acts),
        "asked_before": sorted(asked, key=rules.option_sort_key),
        "refused": sorted(refused, key=rules.option_sort_key),
        "conditioned": sorted(conditioned, key=rules.option_sort_key),
        "granted": sorted(granted - refused, key=rules.option_sort_key),
        "said_here": sorted(said_here, key=rules.option_sort_key),
    }


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
    "cooled": "they insulted you in this talk: you make no bargain with them for the rest of it",
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
        acts = heard.get("acts", {})
        off_topic = acts.get("off_topic_questions", 0)
        if len(heard["questions"]) > off_topic:
            said.append(f"asks {len(heard['questions']) - off_topic} question(s) you should answer")
        if off_topic:
            said.append(f"asks {off_topic} question(s) outside the negotiation: decline briefly, steer back")
        if acts.get("hostile"):
            said.append(
                "insults you ("
                + ", ".join(acts["hostile"])
                + "): say plainly that this does not help, and do "
                "not agree with, praise or thank them for it"
            )
        elif acts.get("greeting") and not facts.get("greeted_before"):
            said.append("greets you (return it once, briefly)")
        elif acts.get("thanks") and not facts.get("thanked_before"):
            said.append("thanks you (acknowledge it once, briefly)")
        for issue in heard.get("unclear_issues", []):
            said.append(f"names issue {issue} without saying where it stands: ask which way it leans")
        for offer in heard.get("unclear_offers", []):
            said.append(f"mentions {offer['label']} without clearly offering it: ask whether it does, and do not "
                        "ask for it again in this message")  # fmt: skip
        if said:
            lines.append(f"- {heard['name']} just said to you: " + "; ".join(said) + ".")
        elif not str(facts.get("purpose", "")).startswith("talk"):
            continue  # a debate speech with nothing to answer needs no comment
        elif not acts.get("on_topic", True):
            lines.append(
                f"- {heard['name']} just said something unrelated to the negotiation: say so in a sentence and "
                "steer back to the issues."
            )
        else:
            lines.append(
                f"- You could read no position or offer in what {heard['name']} just said: say so, and ask what "
                "they mean."
            )
    if facts.get("cooled"):
        lines.append("- Relations in this talk have cooled after an insult: stay correct, but make no trade.")
    settled = [*facts.get("asked_before", []), *facts.get("refused", [])]
    if settled:
        lines.append(
            "- Already asked of your partner in this talk, or refused by them (do not ask again): "
            + ", ".join(dict.fromkeys(settled))
            + "."
        )
    if facts.get("conditioned"):
        lines.append(
            "- You already said in this talk on what terms you could accept "
            + ", ".join(facts["conditioned"])
            + ": do not repeat it unless they raise it."
        )
    backed = [o for options in facts.get("own_backed", {}).values() for o in options]
    if backed:
        lines.append(
            "- You have said you support or can accept: "
            + ", ".join(backed)
            + ". A concession stands: never "
            "say the opposite without giving the reason."
        )
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
