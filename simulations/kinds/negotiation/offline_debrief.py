"""The offline model's debrief: a teacher's handout written from the game's facts (`DebriefFacts`).

Short sections with `### ` headings — one per issue, then the student's influence, their trades and what to try
next time — so the review page and the Markdown export show sections rather than one long paragraph. The same
text is the facts a real model is given in prose. Deterministic: the same facts always give the same words.
"""

from __future__ import annotations

from typing import Any

from simulations.kinds.negotiation.debrief_facts import (
    DebriefFacts,
    Holdout,
    IssueFacts,
    OfferNeed,
    OptionFact,
    Unlock,
)

MAX_BULLETS = 6
MAX_HOLDOUTS = 4
PERSUADED = {
    "far": "were far from winning it over",
    "partway": "went part of the way to winning it over",
    "close": "came close to winning it over, but not close enough",
}
WHY = {"offer": " because your offer met its condition", "trade": " thanks to your trade", "arguments": ""}


def write(facts: dict[str, Any]) -> str:
    return render(DebriefFacts.model_validate(facts))


# --- wording helpers ----------------------------------------------------------------------------------------


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 time`, `2 times`, `0 issues`."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def the(name: str) -> str:
    """A seat's name inside a sentence ("the European Union", "Canada")."""
    return f"the {name}" if name.split()[-1] in ("Union", "States", "Programme", "Association") else name


def listing(items: list[str], conj: str = "and") -> str:
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {conj} {items[-1]}"


def lower_first(label: str) -> str:
    # "A legally binding instrument" -> "a legally binding instrument"; a leading acronym keeps its capitals.
    first = label.split(" ", 1)[0]
    return label if len(first) > 1 and first.isupper() else label[0].lower() + label[1:]


def quoted(text: str) -> str:
    """A quotation closing a sentence: “…”. without doubling its own final stop."""
    return f"“{text}”" + ("" if text.endswith((".", "!", "?", "…")) else ".")


def opt(option: OptionFact) -> str:
    return f"{option.id} ({lower_first(option.label)})"


def _seat(name: str, student: str) -> str:
    return "you" if name == student else the(name)


# --- sections -----------------------------------------------------------------------------------------------


def render(facts: DebriefFacts) -> str:
    parts = [_overview(facts)]
    for issue in facts.issues:
        parts.append(_issue(facts, issue))
    parts.append(_influence(facts))
    parts.append(_trades(facts))
    parts.append(_next_time(facts))
    return "\n\n".join(p for p in parts if p)


def _overview(facts: DebriefFacts) -> str:
    total = len(facts.issues)
    met = [i for i in facts.issues if i.result == "met"]
    assert len(met) == facts.aims_met  # one count of aims met, here and on the review's summary card
    if not met:
        got = f"None of your aims was adopted on the {plural(total, 'issue')}."
    else:
        which = listing([f"issue {i.number}" for i in met])
        got = f"Your aim was adopted on {len(met)} of {plural(total, 'issue')} ({which})."
    adopted = sum(1 for i in facts.issues if i.adopted)
    decisions = f"The committee adopted {adopted} of {plural(total, 'proposal')}."
    return f"Debrief for {facts.student}, played as {facts.persona}. {got} {decisions}"


def _aim_sentence(issue: IssueFacts) -> str:
    aim = issue.aim
    if aim.source == "said":
        return f"You wanted {opt(aim.option)}; you said so: {quoted(aim.quote)}"
    return (
        f"You wanted {opt(aim.option)}: your brief's preference (you stated no position on this issue in your "
        "messages or speeches)."
    )


def _vote_sentence(facts: DebriefFacts, issue: IssueFacts) -> str:
    backers = listing([the(s) if s != facts.student else "you" for s in issue.supporters]) or "no country"
    proposed = f"The chair proposed {opt(issue.proposal)}, backed by {backers}"
    if issue.adopted:
        return f"{proposed}; it was adopted unanimously."
    against = [_seat(h.seat, facts.student) for h in issue.against]
    return f"{proposed}; it was rejected: {listing(against)} voted no."


def _tabling_sentence(facts: DebriefFacts, issue: IssueFacts) -> str:
    """Why the chair tabled what it tabled, when the room had said something against the option with most support."""
    if not issue.blockers:
        return ""
    who = listing([_seat(b, facts.student) for b in issue.blockers])
    could = "you" in who.split() and len(issue.blockers) == 1
    said = f"{who} had said in public {'you' if could else ('it' if len(issue.blockers) == 1 else 'they')}"
    if issue.set_aside is not None:
        return (
            f"The chair set aside {opt(issue.set_aside)}, which had the most support, because {said} could not "
            "accept it."
        )
    return f"{said[:1].upper()}{said[1:]} could not accept it, but no other option had been accepted by both sides."


def _outcome_sentence(issue: IssueFacts) -> str:
    aim = issue.aim.option.id
    if issue.result == "met":
        return "Your aim was met."
    if issue.result == "failed":
        return "Your aim was not met: it came to the vote and was blocked."
    if issue.result == "missed":
        yours = " with your vote" if issue.student_vote == "yes" else ""
        return f"Your aim was not met: {issue.proposal.id} was adopted instead{yours}."
    return f"Your aim was not met: no decision was taken, and {aim} never came to the vote."


def _offer_need(need: OfferNeed) -> str:
    who = [*(["you"] if need.student_can else []), *(the(b) for b in need.by)]
    if not who:
        return f"{need.label} (which no delegation here can offer)"
    return f"{need.label} ({listing(who, 'or')} could offer it)"


def _unlock(unlock: Unlock) -> str:
    if unlock.kind == "offer":
        missing = [n for n in unlock.offers if not n.heard]
        text = f"if offered {listing([_offer_need(n) for n in missing or unlock.offers])}"
        heard = [n.label for n in unlock.offers if n.heard]
        return text + (f"; it had already heard {listing(heard)}" if heard else "")
    if unlock.kind == "adoption":
        assert unlock.after is not None
        return f"once {opt(unlock.after)} was adopted on issue {unlock.after_issue}"
    assert unlock.in_return is not None
    return f"in a trade: your support for {opt(unlock.in_return)} on issue {unlock.in_return_issue}, which it preferred"


def _holdout(held: Holdout, option: OptionFact) -> str:
    ways = [_unlock(u) for u in held.unlocks]
    if held.red_line:
        reason = f"{option.id} is a red line for it"
        if ways:
            return f"- {held.seat}: {reason}, but it would have accepted it {listing(ways, 'or')}."
        return f"- {held.seat}: {reason}, and nothing in the talks could have changed that."
    reason = f"the arguments it heard for {option.id} {PERSUADED[held.persuaded or 'far']}"
    if ways:
        return f"- {held.seat}: {reason}; it would also have accepted it {listing(ways, 'or')}."
    return f"- {held.seat}: {reason}."


def _issue(facts: DebriefFacts, issue: IssueFacts) -> str:
    lines = [f"### Issue {issue.number}: {issue.title}", ""]
    tabling = _tabling_sentence(facts, issue)
    said = [
        _aim_sentence(issue),
        _vote_sentence(facts, issue),
        *([tabling] if tabling else []),
        _outcome_sentence(issue),
    ]
    lines.append(" ".join(said))
    if issue.result == "failed":
        holdouts, option = [h for h in issue.against if not h.student], issue.aim.option
        if holdouts:
            lines += ["", f"Why {option.id} fell:"]
    elif issue.result in ("blocked", "missed"):
        holdouts, option = issue.aim_holdouts, issue.aim.option
        if holdouts:
            lines += ["", f"Who could not accept {option.id}, and what would have moved them:"]
    else:
        holdouts, option = [], issue.aim.option
    lines += [_holdout(h, option) for h in holdouts[:MAX_HOLDOUTS]]
    if issue.own_unlocks:
        ways = listing([_unlock(u) for u in issue.own_unlocks], "or")
        lines += ["", f"Your own brief let you accept {issue.proposal.id} {ways}."]
    if len(holdouts) > MAX_HOLDOUTS:
        lines.append(f"- and {plural(len(holdouts) - MAX_HOLDOUTS, 'more country', 'more countries')}.")
    return "\n".join(lines)


def _influence(facts: DebriefFacts) -> str:
    lines = ["### Your influence", ""]
    if not facts.influence:
        lines.append("None of your messages changed a delegation's position.")
        return "\n".join(lines)
    changes = [c for i in facts.influence for c in i.changes]
    seats = sorted({c.seat for c in changes})
    lines.append(
        f"Your words moved {plural(len(seats), 'delegation')} ({listing([the(s) for s in seats])}): "
        f"{plural(len(changes), 'change')} of position, from {plural(len(facts.influence), 'message')}."
    )
    for item in facts.influence[:MAX_BULLETS]:
        moved = []
        for c in item.changes:
            verb = "now prefers" if c.field == "preferred" else "can now accept"
            why = WHY[c.cause]
            moved.append(f"{the(c.seat)} {verb} {opt(c.option)}{why}")
        lines.append(f"- “{item.quote}” ({item.where}): {listing(moved)}.")
    if len(facts.influence) > MAX_BULLETS:
        lines.append(f"- and {plural(len(facts.influence) - MAX_BULLETS, 'more message')}.")
    return "\n".join(lines)


def _trades(facts: DebriefFacts) -> str:
    lines = ["### Trades", ""]
    if not facts.trades:
        if facts.votes:
            lines.append("You made no trade in your private talks.")
        else:
            lines.append("Your delegation does not vote, so it could not promise a vote in return for one.")
        return "\n".join(lines)
    for t in facts.trades:
        deal = (
            f"- With {the(t.partner)}: your support for {opt(t.promise)} in return for its acceptance of "
            f"{opt(t.in_return)}."
        )
        if t.status == "kept":
            status = f" Kept: you voted yes on {t.promise.id}."
        elif t.status == "broken":
            status = f" Broken: you voted no on {t.promise.id}, so {the(t.partner)} withdrew its acceptance."
        elif t.status == "lapsed":
            status = f" Lapsed: {t.promise.id} never came to the vote."
        else:
            status = " Still open at the end of the session."
        if t.partner_vote:
            status += f" {the(t.partner)[0].upper()}{the(t.partner)[1:]} voted {t.partner_vote} on {t.in_return.id}."
        lines.append(deal + status)
    return "\n".join(lines)


def _next_time(facts: DebriefFacts) -> str:
    tips: list[str] = []
    for unused in facts.unused_offers:
        also = f" (it also needed {listing(unused.also_needs)})" if unused.also_needs else ""
        tip = (
            f"- Offer {unused.offer} to {the(unused.seat)}: it needed it to accept {opt(unused.option)} "
            f"on issue {unused.issue}{also}."
        )
        if tip not in tips:
            tips.append(tip)
    for issue in facts.issues:
        if issue.result == "met":
            continue
        holdouts = issue.against if issue.result == "failed" else issue.aim_holdouts
        for held in holdouts:
            for unlock in held.unlocks:
                if unlock.kind == "trade" and unlock.in_return is not None:
                    tips.append(
                        f"- In a private talk, offer {the(held.seat)} your support for {opt(unlock.in_return)} "
                        f"in return for its support for {opt(issue.aim.option)}."
                    )
                elif unlock.kind == "offer" and not any(n.student_can for n in unlock.offers):
                    missing = [n for n in unlock.offers if not n.heard] or unlock.offers
                    if all(n.by for n in missing):
                        them = "it" if len(missing) == 1 else "them"
                        tips.append(
                            f"- Ask for {listing([_offer_need(n) for n in missing])}: {the(held.seat)} needed "
                            f"{them} to accept {opt(issue.aim.option)}."
                        )
                elif unlock.kind == "adoption" and unlock.after is not None:
                    tips.append(
                        f"- Work for {opt(unlock.after)} on issue {unlock.after_issue} first: {the(held.seat)} "
                        f"would then accept {opt(issue.aim.option)}."
                    )
        for unlock in issue.own_unlocks:
            if unlock.kind == "offer" and all(n.by for n in unlock.offers):
                tips.append(
                    f"- Ask for {listing([_offer_need(n) for n in unlock.offers])}: your brief then lets you "
                    f"accept {opt(issue.proposal)} instead of leaving issue {issue.number} undecided."
                )
        if not issue.spoke and issue.result != "met":
            tips.append(f"- Take the floor on issue {issue.number}: you did not speak in its debate.")
    if facts.talks_declined and len(facts.talks_held) < 2:
        asked = listing([the(s) for s in facts.talks_declined])
        tips.append(
            f"- Meet {asked}: {'it' if len(facts.talks_declined) == 1 else 'they'} asked to talk with you."
        )
    unique = list(dict.fromkeys(tips)) or _nothing_left_to_try(facts)
    return "\n".join(["### What to try next time", "", *unique[:MAX_BULLETS]])


def _nothing_left_to_try(facts: DebriefFacts) -> list[str]:
    """The last section when no offer, trade, talk or speech was left undone: praise only when every aim was met
    (never beside an aim that was not), else what stood in the way on each issue lost."""
    unmet = [i for i in facts.issues if i.result != "met"]
    if not unmet:
        return ["- Every aim was met. Next time, try a seat whose brief is harder to satisfy."]
    tips = []
    for issue in unmet:
        held = issue.against if issue.result == "failed" else issue.aim_holdouts
        red = [the(h.seat) for h in held if not h.student and h.red_line and not h.unlocks]
        if red:
            tips.append(
                f"- Issue {issue.number}: {opt(issue.aim.option)} is a red line for {listing(red)}, and nothing on "
                "offer here moves it: look early for an option they can accept, and spend your effort where it can pay."
            )
        elif facts.votes:
            tips.append(
                f"- Issue {issue.number}: say in the debate which option you back and which you cannot accept: the "
                "chair counts what you say, and tables an option no voting country has refused."
            )
        else:
            tips.append(
                f"- Issue {issue.number}: argue for {opt(issue.aim.option)} early, in your talks and in the debate: "
                "your words move the countries that vote."
            )
    return tips
