"""The offline negotiator: writes an AI seat's talk message or debate speech from the facts block.

How it decides, in order:

1. **Answer what was just said.** A trade is accepted when the engine took it (and the seat says what it will now
   support), otherwise declined with the reason (a red line, a promise the seat does not need, a partner who cannot
   vote) and, where it can, countered. An offer that met a condition is acknowledged and the newly acceptable
   option named; a partial one gets "we would still need ...". A question gets yes, no or "if ..." per the seat's
   stance; a concession is acknowledged; support and objections are met with agreement or a reasoned no.
2. **Pursue its own goals.** It states one position per issue it touches (never two options of one issue), argues
   for it from its own scenario lines, says what would move it (its open conditions), and in debate it puts an
   offer on the table when another delegation has said publicly that this offer would let it accept the option
   this seat wants. Whether a seat is ready to pay is drawn once per (seed, seat, issue) with a chance that falls
   with its firmness on the issue, so passive games still differ by seed.
3. **Say it once.** The facts carry fingerprints of every sentence the seat has already said; a sentence already
   said is not said again (another wording, another argument, or nothing).
4. **Be a partner in a conversation** (dialogue acts, `dialogue.py`). A greeting or thanks is returned once a
   talk; an insult is named and cools the talk (no trade, no further asks, no warm close); an off-topic question
   or remark is declined and the talk steered back; what could not be read is asked about ("Which way does your
   delegation lean on ...?", "Do we understand that your delegation is offering ...?"); nothing already asked,
   refused or just offered is asked for again, and a condition is stated once a talk. A concession stands: an
   option the seat once accepted is opposed only with the reason it no longer holds.
5. **Content, not connectives** (debate). The previous speaker's reason is engaged, not only its option; the
   position is joined to one of the seat's own reasons in one sentence, and so is an objection; every
   concession carries its reason; courtesy is rare. Every such sentence was checked by the judge beforehand
   (`situation.py`), so it states exactly the position it means.

Other delegations are named only in forms that claim what they backed in their own words (agreement, "we see
this differently", their offer, their stated needs), and every position is one plain sentence with the option's
label and id, so any reasonable judge reads it right.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from simulations.kinds.negotiation.situation import fingerprint, split_sentences

Ref = dict[str, str]

POSITION = [
    "{me} supports {opt}.",
    "Our position is clear: {me} supports {opt}.",
    "On {title}, {me} supports {opt}.",
    "{me} continues to support {opt}.",
    "We support {opt}, and {me} will say so at every stage.",
    "Let me be direct: {me} supports {opt}.",
    "{me} will support {opt} in this committee.",
    "The delegation of {me} supports {opt}.",
]
CONCEDE = [
    "For the sake of agreement, {me} can accept {opt}.",
    "{me} can accept {opt}, even though it was not our first choice.",
    "{me} could live with {opt}.",
    "In a spirit of compromise, {me} can accept {opt}.",
    "To help the committee reach a decision, {me} can accept {opt}.",
]
NOT_FIRST = [
    "It is not the first preference of {me}, but agreement matters more.",
    "{me} would have preferred another course, yet a decision everyone can join is worth more.",
    "The first preference of {me} lies elsewhere, and we say so openly.",
    "{me} moves a long way here, and does so to let the committee decide.",
]
OPPOSE = [
    "{me} cannot accept {opt}.",
    "{me} cannot support {opt}.",
    "{me} must oppose {opt}.",
    "We cannot accept {opt}, and {me} will not pretend otherwise.",
    "{me} cannot agree to {opt}.",
]
OPPOSE_TOO = [
    "{me} cannot accept {opt} either.",
    "Like you, {me} cannot support {opt}.",
]
CONDITIONAL = [
    "{me} could accept {opt} if {needs} were offered.",
    "If {needs} were put on the table, {me} could accept {opt}.",
    "{me} would be able to accept {opt} if {needs} were offered.",
    "{me} could move to {opt} provided that {needs} is offered.",
]
CONDITIONAL_ON = [
    "On {title}, {me} could accept {opt} if {needs} were offered.",
    "{me} could accept {opt} on {title} if {needs} were offered.",
]
OPPOSE_ON = [
    "On {title}, {me} cannot accept {opt}.",
    "{me} cannot go along with {opt} on {title}.",
]
CONDITIONAL_MORE = [
    "{me} could accept {opt} if {needs} were also offered.",
    "If {needs} were offered as well, {me} could accept {opt}.",
]
AGREE = [
    "{me} agrees with {them}.",
    "{them} has made a strong case, and {me} agrees with it.",
    "{me} shares the view of {them}.",
    "{me} agrees with {them} on this point.",
    "On this point {me} agrees with {them}.",
]
DIFFER = [
    "{me} sees this differently from {them}.",
    "With respect, {me} does not share the view of {them}.",
    "{me} has listened to {them}, but is not persuaded.",
    "{me} takes a different view from {them}.",
    "On this point {me} sees things differently from {them}.",
]
OFFER_FROM = [
    "{me} welcomes the offer of {offer} from {them}.",
    "For {me}, the offer of {offer} from {them} is a real contribution.",
    "{me} thanks {them} for its offer of {offer}.",
]
MAKE_OFFER = [
    "{me} is ready to offer {offer}.",
    "To open the way to agreement, {me} is ready to offer {offer}.",
    "{me} is prepared to provide {offer}.",
]
NEEDS_HEARD = [
    "{them} has said what it needs to join a consensus on {title}, and {me} has listened.",
    "{them} has told {me} and the committee what it needs to join on {title}.",
    "{them} has been clear about what would bring it on board on {title}, and {me} wants it on board.",
]
COURTESY = [
    "{me} thanks the Chair.",
    "Chair, {me} takes the floor on {title}.",
    "Thank you, Chair, for giving {me} the floor.",
]
# A concession carries its reason in the same sentence (situation.accept_reasons): why the seat accepts it now.
CONCEDE_WHY = [
    "{me} can accept {opt}, since {why}.",
    "Because {why}, {me} can accept {opt}.",
    "{me} can accept {opt}: {why}.",
]
# Private talk: answers to the partner.
TRADE_YES = [
    "We accept your proposal.",
    "You have a deal.",
    "{me} accepts this trade.",
    "That is a fair exchange, and we accept it.",
]
TRADE_YES_TERMS = [
    "{me} will support {want}, and we count on your support for {promise}.",
    "{me} will back {want} and expects your support for {promise} in return.",
]
TRADE_NOT_VOTER = [
    "Your delegation does not vote, so a promise of support at the ballot cannot move {me}.",
    "As an observer you cannot vote, so that promise cannot decide anything for {me}.",
]
TRADE_RED_LINE = [
    "{me} cannot accept {want}, whatever is offered in return.",
    "No exchange can bring {me} to accept {want}.",
]
TRADE_NOT_WANTED = [
    "What you offer in return does not help {me}.",
    "Your promise in return is not what {me} needs from this talk.",
]
TRADE_OTHER = [
    "That exchange does not work for {me} as proposed.",
    "We cannot take that exchange as it stands.",
]
COUNTER = [
    "If you support {ours}, we will support {want}.",
    "Here is our counter-proposal: if you support {ours}, we will support {want}.",
]
OFFER_MET = [
    "Your offer meets our condition.",
    "That offer is what we were waiting for.",
    "With that offer, our condition is met.",
]
MEETS_CONDITION = [
    "That offer meets the condition {me} had set.",
    "With that offer, the condition {me} had set is met.",
]
OFFERS_ON_TABLE = [
    "The offers now on the table meet the condition {me} had set.",
    "What has been offered in this debate meets the condition {me} had set.",
]
NOW_ACCEPT = [
    "{me} can now accept {opt}.",
    "{me} is now able to accept {opt}.",
]
OFFER_PARTIAL = [
    "Your offer is welcome, and it goes part of the way.",
    "That offer helps, but it is not yet enough.",
]
OFFER_NOTED = [
    "Thank you for that offer; on its own it does not change our position.",
    "We take note of your offer.",
    "Your offer is appreciated, though it does not touch our main concerns.",
]
OFFER_DOUBTFUL = [
    "With respect, that offer is not one your delegation is in a position to deliver.",
    "We doubt that your delegation can deliver that offer.",
]
BEYOND = [
    "{Offer} is beyond what {me} can give; {who} may be better placed.",
    "{me} cannot be the one to provide {offer}; {who} may be better placed.",
]
ANSWER_YES = ["Yes: {me} supports {opt}.", "The answer is yes: {me} supports {opt}."]
ANSWER_CAN = ["Yes: {me} can accept {opt}.", "The answer is yes: {me} can accept {opt}."]
ANSWER_NO = ["No: {me} cannot accept {opt}.", "The answer is no: {me} cannot accept {opt}."]
ANSWER_OFFER = ["Yes: {me} is ready to offer {offer}.", "The answer is yes: {me} is ready to offer {offer}."]
# Asked what this seat wants in return: its concrete ask, or that it asks nothing beyond what was said.
PRICE = [
    "In return, {me} asks you to back {opt} in the public debate.",
    "What we would want in return is your support for {opt} when it comes to the vote.",
]
PRICE_NONE = [
    "{me} asks nothing more than what you have already said; we count on it in the public debate.",
    "You have already said what we hoped to hear; keep to it in the public debate and that is enough for {me}.",
]
# Asked what matters most: the issue this seat holds firmest.
PRIORITY = [
    "What matters most to {me} is {title}: we stand for {opt}.",
    "Above all, {me} cares about {title}, where we back {opt}.",
]
ANSWER_PLAIN = [
    "To answer your question plainly:",
    "Our answer to your question:",
    "In answer to your question:",
]
ANSWER_TO = [
    "{them} asked a direct question, and {me} will answer it.",
    "To the question from {them}, {me} gives a plain answer.",
]
AGREE_PARTNER = [
    "We agree with you: {me} supports {opt} too.",
    "On this we are of one mind: {me} supports {opt} as well.",
    "That is good news, since {me} supports {opt} too.",
]
REGRET = [
    "We regret your objection to {opt}.",
    "Your objection to {opt} troubles us.",
]
FLEXIBILITY = [
    "We appreciate your flexibility on {opt}.",
    "Thank you for your flexibility on {opt}.",
]
# The partner backs our option on terms: taken note of, so that nobody asks again for what was granted.
ON_TERMS = [
    "{me} takes note that you could back {opt} on those terms.",
    "So you could back {opt} if that is met: {me} will count on it in the public debate.",
]
ASK_SUPPORT = [
    "Will you support {opt}?",
    "Can your delegation support {opt}?",
    "Could you support {opt} in the public debate?",
]
# Dialogue acts (dialogue.py): courtesy returned once a talk, hostility named, what was not understood said.
GREET_BACK = [
    "Good to talk with you as well.",
    "Welcome, and thank you for making time for this talk.",
]
THANKS_BACK = ["You are welcome.", "Thank you in turn."]
HOSTILE_REPLY = [
    "Insults will not move {me}; they only make an agreement between us harder to reach.",
    "{me} will not answer in kind, but words like these make it much harder for us to find a bargain.",
    "That language does your delegation no credit, and {me} will remember it when you ask for our support.",
]
COOLED_TRADE = [
    "After what was said in this talk, {me} is not ready to strike a bargain with you.",
    "The tone of this talk does not leave {me} ready to trade support with you.",
]
COOL_CLOSE = [
    "{me} will weigh the substance of what you said; the tone of this talk it will also remember.",
    "We will report the substance of this talk to our capital, and the manner of it as well.",
]
OFF_TOPIC_Q = [
    "That question lies outside what this committee is here to settle, so {me} will leave it aside.",
    "That is not a question for this negotiation; {me} would rather use our time on the issues before us.",
    "{me} will not take up that question: it is outside the mandate of this talk.",
    "That question has nothing to do with mercury, and {me} will not spend our few messages on it.",
    "With respect, that question is outside what we came here to discuss.",
]
OFF_TOPIC = [
    "That is not something this committee is here to negotiate, so {me} has nothing to answer on it.",
    "{me} does not see what that has to do with the instrument we are negotiating.",
    "That remark is outside the subject of this talk, and {me} will not comment on it.",
    "{me} hears no proposal on mercury in that, so there is nothing for us to answer.",
    "That has nothing to do with the issues before the committee.",
]
NOTHING_READ = [
    "{me} could not find a position or a proposal in that message.",
    "We are not sure what you are proposing: {me} heard no position and no offer in that message.",
]
STEER_BACK = [
    "Let us come back to the issues before the committee.",
    "Let us return to what we are here to decide.",
]
LEAN_Q = [
    "Which way does your delegation lean on {title}?",
    "Where does your delegation stand on {title}?",
]
OFFER_Q = [
    "Are you offering {offer} of your own?",
    "Do we understand that your delegation is offering {offer}?",
]
OFFER_DOUBTFUL_WHY = [
    "With respect, your delegation cannot deliver {offer}, so that offer cannot count; {who} may be better placed "
    "to provide it.",
    "{Offer} is not something your delegation is in a position to provide, so it cannot count here; {who} may be "
    "better placed.",
]
ALREADY_ACCEPT = [
    "{me} already accepts {opt}; there is nothing to trade for there.",
    "There is no need to trade for {opt}: {me} already accepts it.",
]
WITHDRAWN = [
    "{me} had said it could accept {opt}, but {why}, so that no longer holds.",
    "Earlier {me} could accept {opt}; since {why}, it cannot any more.",
]
STILL_OPEN = [
    "We remain open to further ideas from your side.",
    "We are ready to keep talking if you have more to put forward.",
    "Our door stays open for the rest of the session.",
]


def _opt(ref: Ref) -> str:
    label = ref["label"]
    return f"{label[0].lower()}{label[1:]} ({ref['id']})"


def _needs(offers: list[dict[str, str]]) -> str:
    return " and ".join(o["label"] for o in offers)


def _draw(facts: dict[str, Any], *key: object) -> float:
    text = ":".join(str(k) for k in (facts.get("seed"), facts["role"]["id"], *key))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


class Composer:
    """Collects sentences: each said at most once per seat and game, at most one backed option per issue."""

    def __init__(self, facts: dict[str, Any], rng: random.Random) -> None:
        self.facts, self.rng = facts, rng
        self.used: set[str] = set(facts.get("used", []))
        self.parts: list[str] = []
        self.backs: dict[str, str] = {}
        self.conditions: set[str] = set()  # options this message already said it could accept "if ..."
        self.reserved: dict[str, str] = {}  # issue -> the one option this message may back there (debate)
        self.just_offered: set[str] = (
            set()
        )  # offers the partner has just put forward, in any words: never re-asked
        self.me = facts["role"]["name"]
        self.requested: set[str] = set()  # options this message already asked the partner to back

    def free(self, ref: Ref) -> bool:
        taken = self.backs.get(ref["issue"]) or self.reserved.get(ref["issue"])
        return taken in (None, ref["id"])

    def stated(self, ref: Ref) -> bool:
        """Whether this message already backs the option (it is not said twice)."""
        return self.backs.get(ref["issue"]) == ref["id"]

    def say(self, text: str, backs: list[Ref] | None = None) -> bool:
        text = text.strip()
        if not text:
            return False
        refs = backs or []
        if any(not self.free(r) for r in refs):
            return False
        prints = [fingerprint(s) for s in split_sentences(text)]
        if any(p in self.used for p in prints) or len(set(prints)) < len(prints):
            return False
        self.used.update(prints)
        self.parts.append(text)
        self.backs.update({r["issue"]: r["id"] for r in refs})
        return True

    def one(self, templates: list[str], backs: list[Ref] | None = None, **values: str) -> bool:
        order = list(templates)
        self.rng.shuffle(order)
        for template in order:
            text = template.format(me=self.me, **values)
            if self.say(text[0].upper() + text[1:], backs):
                return True
        return False

    def lines(self, lines: list[dict[str, Any]], limit: int = 1) -> int:
        order = list(lines)
        self.rng.shuffle(order)
        said = 0
        for line in order:
            if said >= limit:
                break
            refs = [self._ref(issue, option) for issue, option in sorted(line["backs"].items())]
            if self.say(line["text"], refs):
                said += 1
        return said

    def _ref(self, issue: str, option: str) -> Ref:
        """A reference good enough for bookkeeping what a scenario line backs (its label is never shown)."""
        return {"id": option, "issue": issue, "label": ""}

    def text(self) -> str:
        return " ".join(self.parts)


def _stance(facts: dict[str, Any], issue: str) -> dict[str, Any]:
    stance: dict[str, Any] = facts["stance"][issue]
    return stance


def _acceptable(facts: dict[str, Any], ref: Ref) -> bool:
    return any(o["id"] == ref["id"] for o in _stance(facts, ref["issue"])["acceptable"])


def _preferred(facts: dict[str, Any], issue: str) -> Ref:
    ref: Ref = _stance(facts, issue)["preferred"]
    return ref


def _condition_for(facts: dict[str, Any], ref: Ref) -> dict[str, Any] | None:
    for cond in _stance(facts, ref["issue"]).get("conditions_open", []):
        if cond["accept"]["id"] == ref["id"]:
            return dict(cond)
    return None


def _title(facts: dict[str, Any], issue: str) -> str:
    title: str = facts["stance"][issue]["title"]
    return title[0].lower() + title[1:]


def _argue_for(c: Composer, ref: Ref, limit: int = 1) -> int:
    return c.lines(c.facts["lines"]["support"].get(ref["id"], []), limit)


def _argue_against(c: Composer, ref: Ref, limit: int = 1) -> int:
    return c.lines(c.facts["lines"]["oppose"].get(ref["id"], []), limit)


def _state_position(c: Composer, ref: Ref, *, talk_first: bool = False) -> bool:
    """The seat's own position on an option it accepts: support if preferred, a concession otherwise."""
    facts = c.facts
    if c.stated(ref):
        return True
    if _preferred(facts, ref["issue"])["id"] == ref["id"]:
        if talk_first and c.say(
            f"On {_title(facts, ref['issue'])}, our delegation supports {_opt(ref)}.", [ref]
        ):
            return True
        return c.one(POSITION, [ref], opt=_opt(ref), title=_title(facts, ref["issue"]))
    why = facts.get("accept_reasons", {}).get(ref["id"])
    if why and c.one(CONCEDE_WHY, [ref], opt=_opt(ref), why=why):
        return True
    if c.one(CONCEDE, [ref], opt=_opt(ref)):
        c.one(NOT_FIRST)
        return True
    return False


def _reasoned_position(c: Composer, ref: Ref) -> bool:
    """The position and one of the seat's own reasons for it in one sentence (debate), when the judge reads the
    joined sentence right; the argument used is then not said again on its own."""
    if c.stated(ref):
        return True
    kind = (
        "preferred"
        if _preferred(c.facts, ref["issue"])["id"] == ref["id"]
        else "concede"
        if _acceptable(c.facts, ref)
        else "oppose"
    )
    if kind == "oppose" and ref["id"] in c.facts.get("own_backed", {}).get(ref["issue"], []):
        return False  # a concession withdrawn is said with its reason (`_withdrawal`), not with an argument
    found = c.facts["lines"].get("reasoned", {}).get(ref["id"], [])
    choices = [r for r in found if r["kind"] == kind and fingerprint(r["line"]) not in c.used]
    c.rng.shuffle(choices)
    for choice in choices:
        if c.say(choice["text"], [ref]):
            c.used.add(fingerprint(choice["line"]))
            return True
    return False


def _withdrawal(c: Composer, ref: Ref) -> None:
    """A concession stands unless its reason is given: before opposing an option it once said it could accept,
    the seat says why that no longer holds."""
    if ref["id"] not in c.facts.get("own_backed", {}).get(ref["issue"], []):
        return
    why = c.facts.get("withdrawn", {}).get(ref["id"]) or "what we were promised for it did not come"
    c.one(WITHDRAWN, opt=_opt(ref), why=why)


def _answer_option(c: Composer, ref: Ref, *, question: bool) -> None:
    """Where the seat stands on an option put to it: yes, yes-but, if, or no with a reason."""
    facts = c.facts
    if c.stated(ref):
        return
    if _acceptable(facts, ref) and not c.free(ref):
        return  # this message already backs another option of the issue: one position per issue
    if _preferred(facts, ref["issue"])["id"] == ref["id"]:
        c.one(ANSWER_YES if question else AGREE_PARTNER, [ref], opt=_opt(ref))
        _argue_for(c, ref)
    elif _acceptable(facts, ref):
        if not (question and c.one(ANSWER_CAN, [ref], opt=_opt(ref))):
            _state_position(c, ref)
    elif (cond := _condition_for(facts, ref)) is not None:
        _say_condition(c, ref, _missing(facts, cond))
    else:
        _withdrawal(c, ref)
        c.one(ANSWER_NO if question else OPPOSE, opt=_opt(ref))
        _argue_against(c, ref)


def _say_condition(
    c: Composer, ref: Ref, offers: list[dict[str, str]], *, more: bool = False, debate: bool = False
) -> bool:
    """What would move the seat on an option, said once per message (in debate, also in forms naming the issue,
    so a long debate does not repeat one sentence shape)."""
    if ref["id"] in c.conditions or c.stated(ref) or not offers:
        return False
    if {o["id"] for o in offers} & c.just_offered:
        return (
            False  # the partner has just offered it (perhaps in other words): asking again would not listen
        )
    forms = CONDITIONAL_MORE if more else CONDITIONAL + (CONDITIONAL_ON if debate else [])
    if c.one(forms, opt=_opt(ref), needs=_needs(offers), title=_title(c.facts, ref["issue"])):
        c.conditions.add(ref["id"])
        return True
    return False


def _missing(facts: dict[str, Any], cond: dict[str, Any]) -> list[dict[str, str]]:
    heard = set(facts["offers_heard"])
    return [o for o in cond["offers"] if o["id"] not in heard]


def _offer_or_refer(c: Composer, offer: dict[str, str]) -> None:
    facts = c.facts
    if any(o["id"] == offer["id"] for o in facts["can_offer"]):
        c.one(ANSWER_OFFER, offer=offer["label"])
        return
    who = facts["who_can_offer"].get(offer["id"], [])
    if who:
        shown = " or ".join(who[:2])
        c.one(BEYOND, offer=offer["label"], Offer=offer["label"][0].upper() + offer["label"][1:], who=shown)


def _answer_trade(c: Composer, trade: dict[str, Any]) -> None:
    facts = c.facts
    want, promise = trade["want"], trade["promise"]
    why = trade["why"]
    if trade["accepted"]:
        c.one(TRADE_YES)
        if c.free(want) and c.free(promise):
            c.one(TRADE_YES_TERMS, [want, promise], want=_opt(want), promise=_opt(promise))
        return
    if why == "cooled":
        c.one(COOLED_TRADE)
    elif why == "not_voter":
        c.one(TRADE_NOT_VOTER)
        _answer_option(c, want, question=False)
    elif why == "red_line":
        c.one(TRADE_RED_LINE, want=_opt(want))
        _argue_against(c, want)
        cond = _condition_for(facts, want)
        if cond:
            _say_condition(c, want, _missing(facts, cond))
    elif why == "not_wanted":
        c.one(TRADE_NOT_WANTED)
        ours = _preferred(facts, promise["issue"])
        _state_position(c, ours)
        if facts.get("partner_votes") and c.free(want) and _acceptable(facts, want):
            c.one(COUNTER, ours=_opt(ours), want=_opt(want))
    elif why == "already":
        c.one(ALREADY_ACCEPT, [want], opt=_opt(want))
    else:
        c.one(TRADE_OTHER)
        _answer_option(c, want, question=False)


def _acknowledge_offers(c: Composer, heard: dict[str, Any] | None, *, debate: bool) -> None:
    """An offer that met a condition is acknowledged with what it unlocks; a partial one with what is missing.

    `heard` is the message that made the offer (None in debate when the offer came earlier); in debate only the
    issue under discussion is mentioned."""
    facts = c.facts
    here = facts["issue"]["id"] if debate else None
    met = [ch for ch in facts["changes"] if ch["cause"] == "condition" and here in (None, ch["issue"])]
    if debate and heard is not None and (met or _partial(facts, heard, here)):
        c.one(OFFER_FROM, them=heard["name"], offer=_needs(heard["offers"]))  # thanked where it matters to us
    if met:
        c.one(OFFER_MET if not debate else MEETS_CONDITION if heard is not None else OFFERS_ON_TABLE)
        for change in met:
            if c.free(change["option"]):
                c.one(NOW_ACCEPT, [change["option"]], opt=_opt(change["option"]))
        return
    if heard is None:
        return
    partial = _partial(facts, heard, here)
    if partial:
        if not debate:
            c.one(OFFER_PARTIAL)
        cond, missing = partial[0]
        _say_condition(c, cond["accept"], missing, more=True)
    elif not debate:
        c.one(OFFER_NOTED)


def _social(c: Composer, heard: dict[str, Any]) -> None:
    """Hostility named; a greeting or thanks returned, once a talk and never to an insult."""
    acts, facts = heard.get("acts", {}), c.facts
    if acts.get("hostile"):
        c.one(HOSTILE_REPLY)
        return
    if acts.get("greeting") and not facts.get("greeted_before"):
        c.one(GREET_BACK)
    elif acts.get("thanks") and not facts.get("thanked_before") and not facts.get("cooled"):
        c.one(THANKS_BACK)


def _unclear(c: Composer, heard: dict[str, Any], answered: int) -> None:
    """Say what was not understood: an issue named with no position, an offer named but not made, or nothing at
    all that bears on the talks; an off-topic remark is declined and the talk steered back."""
    facts, acts = c.facts, heard.get("acts", {})
    for offer in heard.get("unclear_offers", [])[:1]:
        if offer["id"] in facts.get("partner_can_offer", []) and offer["id"] not in facts["offers_heard"]:
            c.one(OFFER_Q, offer=offer["label"])
    stated = facts.get("partner_stated", {})
    # Beside an offer made or asked for, an issue's words mostly say what the offer is for ("our cleaner industrial
    # processes"): no question about the issue then.
    about_offers = heard.get("offers") or heard.get("asks") or heard.get("offers_doubtful")
    for issue in [] if about_offers else heard.get("unclear_issues", [])[:1]:
        if issue not in stated:
            c.one(LEAN_Q, title=_title(facts, issue))
    if answered or heard.get("unclear_offers") or heard.get("unclear_issues") or acts.get("hostile"):
        return
    courtesy = any(acts.get(k) for k in ("greeting", "thanks", "farewell", "acknowledges"))
    if not acts.get("on_topic", True):
        if not courtesy:
            c.one(OFF_TOPIC) or c.one(OFF_TOPIC_Q)
            c.one(STEER_BACK)
    elif not (heard["questions"] or courtesy):
        c.one(NOTHING_READ)


def _partial(
    facts: dict[str, Any], heard: dict[str, Any], here: str | None
) -> list[tuple[dict[str, Any], Any]]:
    """This seat's open conditions the heard offers go part of the way to meeting, with what is still missing."""
    offered = {o["id"] for o in heard["offers"]}
    partial = []
    for issue, stance in sorted(facts["stance"].items()):
        if here not in (None, issue):
            continue
        for cond in stance.get("conditions_open", []):
            if {o["id"] for o in cond["offers"]} & offered:
                partial.append((cond, _missing(facts, cond)))
    return partial


def _reply_in_talk(c: Composer, heard: dict[str, Any]) -> int:
    """Answers the partner's last message; returns how many things it answered."""
    facts = c.facts
    before = len(c.parts)
    c.just_offered |= {o["id"] for o in heard["offers"] + heard.get("unclear_offers", [])}
    for trade in heard["trades"][:1]:
        _answer_trade(c, trade)
    if heard["offers"] or any(ch["cause"] == "condition" for ch in facts["changes"]):
        _acknowledge_offers(c, heard, debate=False)
    elif heard["offers_doubtful"]:
        offer = heard["offers_doubtful"][0]
        who = facts["who_can_offer"].get(offer["id"], [])
        shown = " or ".join(who[:2])
        label = offer["label"]
        if not (
            who and c.one(OFFER_DOUBTFUL_WHY, offer=label, Offer=label[0].upper() + label[1:], who=shown)
        ):
            c.one(OFFER_DOUBTFUL)
    for question in heard["questions"][:2]:
        if question["options"]:
            _answer_option(c, question["options"][0], question=True)
        elif question["offers"]:
            _offer_or_refer(c, question["offers"][0])
        elif question.get("price"):
            _name_price(c)
        elif question.get("priority"):
            _name_priority(c)
        elif not question.get("on_topic", True):
            c.one(OFF_TOPIC_Q) or c.one(OFF_TOPIC)
        elif question.get("issues"):
            ref = _preferred(facts, question["issues"][0])
            if c.free(ref) and c.one(ANSWER_PLAIN):
                _state_position(c, ref)
                _argue_for(c, ref)
        else:
            c.one(ANSWER_PLAIN)
            _focus_position(c)
    for ask in heard["asks"][:1]:
        if not any(ask["id"] in {o["id"] for o in q["offers"]} for q in heard["questions"]):
            _offer_or_refer(c, ask)
    conceded = {r["id"] for r in heard["concedes"]}
    for ref in heard["concedes"][:1]:
        if _acceptable(facts, ref) and c.free(ref):
            c.one(FLEXIBILITY, [ref], opt=_opt(ref))
    asked = {r["id"] for q in heard["questions"] for r in q["options"]}
    traded = {t["want"]["id"] for t in heard["trades"]} | {t["promise"]["id"] for t in heard["trades"]}
    for ref in heard["supports"]:
        if ref["id"] not in asked | traded | conceded and len(c.parts) - before < 5:
            _answer_option(c, ref, question=False)
    for ref in heard.get("conditional", [])[:1]:
        if ref["id"] not in traded and _preferred(facts, ref["issue"])["id"] == ref["id"] and c.free(ref):
            c.one(ON_TERMS, [ref], opt=_opt(ref))
    for ref in heard["opposes"][:1]:
        if _preferred(facts, ref["issue"])["id"] == ref["id"] and c.free(ref):
            if c.one(REGRET, [ref], opt=_opt(ref)):
                _argue_for(c, ref)
        elif not _acceptable(facts, ref):
            c.one(OPPOSE_TOO, opt=_opt(ref))
    _unclear(c, heard, len(c.parts) - before)
    return len(c.parts) - before


def _name_price(c: Composer) -> None:
    """What this seat wants in return: support for its preferred option where the partner has neither said it
    backs it nor granted it in this talk (one it differs on first), with a reason."""
    facts = c.facts
    stated = facts.get("partner_stated", {})
    have = {*facts.get("granted", []), *stated.values()}
    wanted = [_preferred(facts, i) for i in sorted(facts["stance"]) if _preferred(facts, i)["id"] not in have]
    wanted = [ref for ref in wanted if c.free(ref)]
    wanted.sort(key=lambda ref: not stated.get(ref["issue"]))  # where the partner said something else, first
    if not wanted or facts.get("cooled"):
        c.one(PRICE_NONE)
        return
    ref = wanted[0]
    if c.one(PRICE, [ref], opt=_opt(ref)):
        c.requested.add(ref["id"])
        _argue_for(c, ref)


def _name_priority(c: Composer) -> None:
    """What matters most to this seat: the issue it holds firmest, its option there and why (what any delegation
    says of itself in a corridor; the brief's own words stay confidential)."""
    facts = c.facts
    issue = max(sorted(facts["stance"]), key=lambda i: float(facts["firmness"][i]))
    ref = _preferred(facts, issue)
    if c.free(ref) and c.one(PRIORITY, [ref], opt=_opt(ref), title=_title(facts, issue)):
        _argue_for(c, ref)
    else:
        _focus_position(c)


def _focus_issue(c: Composer) -> str:
    """The issue to press next: one not yet touched in this message where the partner said something else."""
    facts = c.facts
    issues = sorted(facts["stance"])
    stated = facts.get("partner_stated", {})
    free = [i for i in issues if i not in c.backs]
    if not free:
        return issues[0]
    # A position already said in this talk is not said again while another is still unsaid.
    fresh = [i for i in free if _preferred(facts, i)["id"] not in facts.get("said_here", [])] or free
    differ = [i for i in fresh if stated.get(i) and stated[i] != _preferred(facts, i)["id"]]
    pool = differ or fresh
    return pool[(facts.get("messages_so_far", 0) + c.rng.randrange(len(pool))) % len(pool)]


def _focus_position(c: Composer) -> str:
    issue = _focus_issue(c)
    ref = _preferred(c.facts, issue)
    if c.free(ref):
        if ref["id"] not in c.facts.get("said_here", []):  # said once in this talk, the position stands
            _state_position(c, ref, talk_first=c.facts.get("spoken", 0) == 0)
        _argue_for(c, ref)
    return issue


def _own_ask(c: Composer, issue: str) -> None:
    """Something concrete to ask of the partner: what would unlock our condition, a trade, or support."""
    facts = c.facts
    partner_offers = set(facts.get("partner_can_offer", []))
    for cond in _stance(facts, issue).get("conditions_open", []):
        missing = [o for o in cond["offers"] if o["id"] not in set(facts["offers_heard"])]
        if (
            missing
            and cond["accept"]["id"] not in c.conditions
            and cond["accept"]["id"] not in facts.get("conditioned", [])  # said once in this talk is enough
            and {o["id"] for o in missing} <= partner_offers
            and not {o["id"] for o in missing} & c.just_offered
            and c.one(CONDITIONAL, opt=_opt(cond["accept"]), needs=_needs(missing))
        ):
            return
    if facts.get("cooled"):
        return  # an insulted seat asks for nothing more in this talk
    stated = facts.get("partner_stated", {})
    ours = _preferred(facts, issue)
    proposed = {t.split(">")[0] for t in facts.get("own_trades", [])}
    if (
        facts.get("partner_votes")
        and stated.get(issue)
        and stated[issue] != ours["id"]
        and ours["id"] not in proposed
    ):
        # A trade: our preferred option here for one the partner stated elsewhere that we could live with.
        for other, theirs in sorted(stated.items()):
            ref = next((o for o in _stance(facts, other)["acceptable"] if o["id"] == theirs), None)
            usable = other != issue and ref and ref["id"] != _preferred(facts, other)["id"] and c.free(ref)
            if usable and ref and c.one(COUNTER, ours=_opt(ours), want=_opt(ref)):
                return
    if c.lines(facts["lines"].get("asks", [])):
        return
    settled = {*facts.get("asked_before", []), *facts.get("refused", []), *facts.get("granted", [])}
    if stated.get(issue) != ours["id"] and ours["id"] not in settled | c.requested:
        c.one(ASK_SUPPORT, [ours], opt=_opt(ours))


def talk(facts: dict[str, Any], rng: random.Random) -> str:
    c = Composer(facts, rng)
    addressed = facts.get("addressed", [])
    if addressed:  # the student may have spoken first: the first message answers it too
        _social(c, addressed[-1])
        _reply_in_talk(c, addressed[-1])
    if facts["purpose"] == "talk_open" and not c.parts:
        c.lines(facts["lines"].get("openers", []))
    for change in facts["changes"]:
        if change["cause"] == "argument" and c.free(change["option"]):
            c.say(rng.choice(change["persuaded"]) if change["persuaded"] else "", [change["option"]])
    issue = _focus_position(c) if len(c.parts) < 5 else sorted(facts["stance"])[0]
    if facts["purpose"] == "talk_final":
        if facts.get("cooled"):
            c.one(COOL_CLOSE)  # no warm words about trust after an insult
        elif not c.lines(facts["lines"].get("closers", [])):
            c.one(STILL_OPEN)
    else:
        _own_ask(c, issue)
    return c.text() or "We have heard you, and we will reflect on what you said."


def _goal_offers(facts: dict[str, Any], position: Ref) -> tuple[list[dict[str, str]], str | None]:
    """Offers this seat will put on the table now: what another delegation said it needs to accept the option this
    seat prefers, that this seat can give and nobody has offered, if the seat is ready to pay on this issue."""
    issue = facts["issue"]["id"]
    mine = {o["id"]: o for o in facts["can_offer"]}
    wanted = _preferred(facts, issue)["id"]
    if position["id"] != wanted:
        return [], None
    for request in reversed(facts["requests"]):
        if request["option"]["id"] != wanted:
            continue
        give = [mine[o] for o in request["missing"] if o in mine]
        # A firm seat is slower to pay, and a bigger package is dearer: each offer halves the chance. An offer
        # this seat said yes to in a private talk when asked for it (`promised`), it makes when the need is stated.
        readiness = max(0.05, 0.6 - 0.6 * float(facts["firmness"][issue])) / len(give) if give else 0.0
        if give and set(facts.get("promised", [])) & {o["id"] for o in give}:
            readiness = 1.0
        if give and _draw(facts, "offer", issue) < readiness:
            return give, request["name"]
    return [], None


def speech(facts: dict[str, Any], rng: random.Random) -> str:
    issue = facts["issue"]["id"]
    preferred, leading = _preferred(facts, issue), facts["leading"]
    changes = [ch for ch in facts["changes"] if ch["issue"] == issue]
    # Round 2: a seat whose preference trails but which accepts the leading option says so.
    concede = (
        facts.get("debate_round") == 2 and leading["id"] != preferred["id"] and _acceptable(facts, leading)
    )
    position = leading if concede else preferred
    offers, requester = _goal_offers(facts, position)
    if not facts.get("has_new", True) and not changes and not offers:
        return "PASS"  # nothing new to add: the seat passes
    c = Composer(facts, rng)
    c.reserved[issue] = position["id"]
    if rng.random() < 0.1:  # courtesy is rare: the floor is for the argument
        c.one(COURTESY, title=_title(facts, issue))
    addressed = facts.get("addressed", [])
    # Agreement and difference only with a speech that itself backed an option here, and never with an insult
    # (the chair has called its speaker to order; nobody endorses it).
    civil = [h for h in addressed if not h.get("acts", {}).get("hostile")]
    heard = next(
        (
            h
            for h in reversed(civil)
            if any(r["issue"] == issue for r in h["supports"]) and h["stated"].get(issue)
        ),
        None,
    )
    offerer = next((h for h in reversed(civil) if h["offers"]), None)
    if heard is not None:
        # Engage the previous speaker's reason, not only its option; a bare "we agree" only now and then.
        theirs = heard["stated"].get(issue)
        side = "agree" if theirs == position["id"] else "differ" if theirs else None
        engage = list(heard.get("engage", {}).get(side or "", []))
        rng.shuffle(engage)
        if side and not any(c.say(text) for text in engage) and rng.random() < 0.15:
            c.one(AGREE if side == "agree" else DIFFER, them=heard["name"])
    if offerer is not None or any(ch["cause"] == "condition" for ch in changes):
        _acknowledge_offers(c, offerer, debate=True)
    for student in (h for h in addressed if h["speaker"] == facts.get("human")):
        for question in student["questions"][:1]:  # a student's question in debate gets its answer too
            answerable = [
                r
                for r in question["options"]
                if r["issue"] == issue and (r["id"] == position["id"] or not _acceptable(facts, r))
            ]
            if answerable and c.one(ANSWER_TO, them=student["name"]):
                _answer_option(c, answerable[0], question=True)
    for change in changes:
        if change["cause"] == "argument" and change["persuaded"] and change["option"]["id"] == position["id"]:
            c.say(rng.choice(change["persuaded"]), [change["option"]])
    if not _reasoned_position(c, position):
        _state_position(c, position)
    _argue_for(c, position, limit=1)
    contested = leading["id"] != position["id"] and not _acceptable(facts, leading)
    if contested and not _reasoned_position(c, leading):
        _withdrawal(c, leading)
        c.one(OPPOSE + OPPOSE_ON, opt=_opt(leading), title=_title(facts, issue))
        _argue_against(c, leading)
    if offers and requester:
        c.one(NEEDS_HEARD, them=requester, title=_title(facts, issue))
        c.one(MAKE_OFFER, offer=_needs(offers))
    for cond in _stance(facts, issue).get("conditions_open", []):
        if cond["accept"]["id"] != position["id"] and _say_condition(
            c, cond["accept"], _missing(facts, cond), debate=True
        ):
            break
    return c.text() or "PASS"
