"""Offline Message Lab personas: deterministic from the seed, no model. They write, judge and decide from the brief.

- A writer's method (offer, story, plain, wit, nudge, collective, visual, trust) is read from its persona's own
  words; each concept uses three of its signature moves. Copy is built from the brief's proof points, keywords,
  the audience's doubt and the goal; the format (subject line + email, or headline + poster copy) and the limits
  come from the brief's constraints.
- A first draft makes one slip typical of its method (runs long, asks twice, a claim the brief forbids...), so
  critique and scoring have something real to find; a direction that names the slip prevents it.
- Critics and the evaluator judge quality, not quantity: the evaluator's named criteria (the clarity of one single
  idea, fit to the audience, proof used well, tone, the call to action; `CRITERIA`) are read from the text, and a
  concept that piles up more proof points than one idea can carry (`FOCUS`), lists keywords or says a sentence
  twice loses marks. Constraints (words against the limit, the title, one ask, forbidden claims) are checked as
  pass or fail. The score is the criteria and the constraints alone, marked in half points from what any writer
  can do, never from one method's stock phrases; the verdict draws between finalists level on everything from the
  seed. A critic's lens decides what it leads with, and it quotes the line it means.
- Refinement says every sentence once, repairs what breaks the brief, then the two things the direction and the
  critics pressed hardest (cutting a pile down to the points the idea needs), so a concept improves in steps; a
  merge's line the moderator kept is folded in and kept.
Wording varies with the seed; the measurements never do.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from simulations.engine import rng

from .payloads import (
    MAX_DIRECTION,
    MAX_NAME,
    MAX_NOTE,
    MAX_PITCH,
    ConceptSubmitted,
    CritiqueNote,
    CritiqueSubmitted,
    Decision,
    EvaluationSubmitted,
    PresentationGiven,
    RefinementSubmitted,
    ScoreNote,
    SynthesisSubmitted,
    VerdictGiven,
)
from .scenario import Brief, Persona


@dataclass(frozen=True)
class Shown:
    """A concept as a critic sees it: an alias, never its author."""

    alias: str
    name: str
    text: str


# --- what the panel knows besides the brief --------------------------------------------------------------------

NAMES = (("Ros", "she"), ("Alan", "he"), ("Priya", "she"), ("Tomasz", "he"), ("Maggie", "she"), ("Dev", "he"),
         ("Hannah", "she"), ("Owen", "he"), ("Bea", "she"), ("Gareth", "he"), ("Nell", "she"), ("Kwame", "he"),
         ("Sian", "she"), ("Luis", "he"), ("Wendy", "she"), ("Callum", "he"), ("Aisha", "she"), ("Frank", "he"),
         ("Jo", "she"), ("Rhys", "he"), ("Mei", "she"), ("Ollie", "he"), ("Carys", "she"), ("Yusuf", "he"),
         ("Martha", "she"), ("Ian", "he"), ("Grace", "she"), ("Stan", "he"), ("Lena", "she"), ("Amir", "he"),
         ("Rose", "she"), ("Hugh", "he"), ("Zara", "she"), ("Ned", "he"), ("Iris", "she"))  # fmt: skip
LIVES = ("who works mornings at the garden centre", "who has just retired from the post office",
         "who teaches year six", "who does the school run twice a day", "who works three days a week at the library",
         "who keeps bees behind the church", "who runs the Saturday market stall", "who drives the mobile library",
         "who works nights at the bakery", "who coaches the under-tens on Sundays", "who has just moved back home",
         "who sings in the community choir", "who fixes bikes in the shed", "who works from the kitchen table",
         "who walks two spaniels before breakfast", "who serves at the café by the bridge",
         "who keeps the allotment by the railway", "who has two teenagers and a night shift",
         "who volunteers at the food bank on Fridays", "who has just started at the surgery's front desk",
         "who plays darts for the pub team", "who delivers the parish newsletter", "who repairs clocks for friends",
         "who works the early shift at the station", "who has just finished a nursing degree",
         "who looks after her grandson on Tuesdays", "who runs the quiz night at the village hall",
         "who grows far too many courgettes", "who restores old chairs in the garage",
         "who cycles to work whatever the weather", "who has lived on the same street for forty years",
         "who has just bought a first house", "who swims at the lido every morning",
         "who manages the corner shop", "who is learning Welsh in the evenings")  # fmt: skip


BLOCKS = 3  # the scenario's first two briefs have a third of the cast each (and half the last); any other, the last


def cast(seed: int, slot: int, seats: int, block: int = 0) -> list[tuple[str, str, str]]:
    """The invented people (name, pronoun, a detail of their life) panel seat `slot` of `seats` writes about in a
    run of brief `block`, its own first. Seats never share their own people, so no two concepts of a run invent the
    same one; and each brief's own third of the cast comes first, so two briefs played with one seed do not either."""
    r = rng.stream(seed, "message_lab:cast")
    names, lives = r.sample(NAMES, k=len(NAMES)), r.sample(LIVES, k=len(LIVES))
    people = [(n, pr, life) for (n, pr), life in zip(names, lives, strict=False)]
    b, last = min(block, BLOCKS - 1), people[BLOCKS - 1 :: BLOCKS]
    half = len(last) // 2  # the last third: half each to the first two briefs' runs that need more people
    ours = people[b::BLOCKS] + ({0: last[:half], 1: last[half:]}.get(b, []) if b < BLOCKS - 1 else [])
    seats, seat = max(1, seats), slot % max(1, seats)
    own = ours[seat::seats]
    return own + [x for x in people[::-1] if x not in own]


def _character(
    seed: int, slot: int | None, seats: int, block: int, people: Sequence[str]
) -> tuple[str, str, str] | None:
    """This seat's first character nobody in the run has written about yet (None: a free choice)."""
    if slot is None:
        return None
    mine = cast(seed, slot, seats, block)
    return next((c for c in mine if c[0] not in people), mine[0])


PLAIN = {"reimbursed": "paid back", "skeins": "bundles", "induction": "welcome session", "registered": "signed-up",
         "approximately": "about", "formally": "before"}  # fmt: skip
HYPE = re.compile(r"\b(best|perfect(ly)?|amazing|incredible|ultimate|unbeatable|guaranteed|revolutionary|"
                  r"effortless(ly)?|life-changing|world-class)\b", re.I)  # fmt: skip
CTA_VERBS = {"buy", "order", "book", "call", "ring", "phone", "click", "reply", "visit", "sign", "share", "pass",
             "forward", "join", "claim", "grab", "register", "follow", "tap", "scan", "donate"}  # fmt: skip
STOP = {"that", "this", "with", "your", "have", "from", "they", "their", "there", "about", "into", "them", "will",
        "what", "when", "which", "were", "been", "more", "just", "than", "then", "also", "only", "each", "very"}  # fmt: skip
TAGS = {  # what a proof point is good for, read from its wording
    "price": r"£|\$|€|\d+p\b|\bcosts?\b|reimburs", "cost": r"\bcosts?\b", "scale": r"\bsold\b|\bjourneys\b",
    "scarce": r"\bleft\b|\bneeds? \d+ more|could not be met|\bsells? out\b", "gap": r"could not|needs? \d+ more",
    "easy": r"\bminimum\b|\bminutes?\b|\bchosen by\b|\binduction\b|\blessons\b", "refund": r"\brefund|\breturned\b",
    "exit": r"\brefund|\breturned\b|\bletter\b|\binsurer\b|\bDBS\b", "local": r"\bmiles\b|\bgrown\b|\bvillages?\b",
    "stuff": r"\bcontains?\b|\bincludes?\b|\bcome with\b",
}  # fmt: skip
# Claims a constraint can forbid: (words in the constraint that switch it on, how copy breaks it, a careless line).
RULES = (
    (("money", "carbon"), r"\bsav(e|es|ing)\b[^.]*?[£$€\d]|\bcarbon\b|\bCO2\b", "Each repair saves you around £30."),
    (("invisible",), r"\binvisibl|\b(no one|nobody) will (ever )?(know|notice)", "Nobody will ever know it was mended."),
    (("guilt", "fast fashion"), r"\bguilt|fast.fashion|\blandfill", "No more fast-fashion guilt."),
    (("helpless", "pity"), r"\bhelpless|\bhousebound|\bstranded|\bvulnerable|\bpoor old",
     "Some of our passengers are housebound and stranded."),
    (("medical", "health"), r"\bhealth(ier|y)?\b|\bwell-?being\b|\bmedical\b", "Volunteering is proven to make you healthier."),
    (("insurance",), r"(won't|will not|doesn't|does not|never)\b[^.]{0,40}\b(affect|change|raise)[^.]{0,30}\binsurance"
     r"|\binsurance\b[^.]{0,20}(won't|will not|is not|isn't) (be )?(affected|changed)", "And no, it won't affect your insurance."),
)  # fmt: skip

# A persona's method is read from its own description, so an admin's new persona still writes in one.
METHODS = {
    "offer": ("offer", "price", "call to action", "spreadsheet", "subject line", "number"),
    "story": ("story", "scene", "character", "named person", "a name", "ending"),
    "plain": ("plain", "jargon", "reading", "everyday words", "clarity", "sentences under"),
    "wit": ("wit", "joke", "humour", "smile", "deadpan", "absurd"),
    "nudge": ("friction", "default", "social proof", "behavioural", "reversible", "first step"),
    "collective": ("neighbour", "'we'", "collective", "local", "group", "messengers"),
    "visual": ("headline", "image", "visual", "layout", "picture"),
    "trust": ("objection", "doubt", "trust", "credib", "honest", "guarantee"),
}  # fmt: skip
MOVES = (  # signature moves become devices by what they say
    (r"number the reader", "number"), (r"price", "price"), (r"time or money", "timesave"), (r"deadline", "deadline"),
    (r"ordinary moment", "scene"), (r"notices", "noticed"), (r"opening image", "bookend"),
    (r"abstract noun|insider terms", "plainwords"), (r"under twenty words", "short"), (r"first line", "first_fact"),
    (r"bulleted list", "bullets"), (r"annoyance|joke early", "annoyance"), (r"understatement", "deadpan"),
    (r"pattern of three", "triple"), (r"how many people", "social"), (r"first step", "small_step"),
    (r"reversible|trial", "trial"), (r"anchors the cost", "anchor"), (r"specific time|slot", "slot"),
    (r"names the place", "place"), (r"together", "together"), (r"unapologetic ask", "early_ask"),
    (r"line to share", "share"), (r"reports progress", "progress"), (r"image description|sideways|visual motif", "image"),
    (r"body copy removed", "standalone"), (r"subhead", "subhead"), (r"objection out loud", "objection"),
    (r"one fact the reader can check|superlatives", "checkable"), (r"limitation", "honest"), (r"exit route", "exit"),
)  # fmt: skip
OPENERS = {"offer": "number", "story": "scene", "plain": "first_fact", "wit": "annoyance", "nudge": "social",
           "collective": "place", "visual": "first_fact", "trust": "objection"}  # fmt: skip
# The proof points a method reaches for first, how many it uses, and the slips its first drafts make.
PLANS = {
    "offer": (("scarce", "price", "stuff", "exit"), 4, ("hype", "forbidden", "long_title")),
    "story": (("easy", "exit", "local"), 3, ("few_proofs", "long_sentence", "forbidden")),
    "plain": (("price", "easy", "stuff", "exit"), 4, ("", "long_title")),
    "wit": (("stuff", "easy", "price"), 3, ("over_limit", "forbidden", "hype")),
    "nudge": (("scale", "easy", "exit", "price"), 4, ("second_cta", "hype", "")),
    "collective": (("scarce", "scale", "local", "price"), 3, ("over_limit", "")),
    "visual": (("local", "price", "easy"), 2, ("few_proofs", "long_title")),
    "trust": (("easy", "exit", "price", "scale"), 4, ("over_limit", "long_sentence")),
}  # fmt: skip
CURES = {"trim": "over_limit", "more_facts": "few_proofs", "one_cta": "second_cta", "title": "long_title",
         "short": "long_sentence", "clean": "forbidden hype"}  # a direction asking for the key prevents these slips  # fmt: skip
TITLES = {
    "offer": ("{numkw}: {kw}", "{Numkw}. One link.", "{numkw}, {numkw2}"),
    "story": ("What {who} noticed", "{who} had never {never_3}", "{who}, one wet Sunday"),
    "plain": ("{Short}: {numkw}", "{Kw}: what you get, in one read"),
    "wit": ("Never {never_you}? Ideal.", "{Kw}. Not rocket science."),
    "nudge": ("Start small: {kw}", "{Kw}, in one small step"),
    "collective": ("{place}, we need a hand", "From {place}: {kw}"),
    "visual": ("Never {never_you}? Start here.", "{Numkw}. {Kw}.", "Every {obj} starts somewhere."),
    "trust": ("No superlatives, just {numkw}", "{Numkw}, and the catch"),
}  # fmt: skip
CONCEPT_NAMES = {
    "offer": ("{Numkw}, up front", "The {numkw} offer", "Price first"),
    "story": ("{who}'s kitchen table", "What {who} noticed", "{who}, before and after"),
    "plain": ("{Kw}, said plainly", "One read", "Plain {noun}"), "wit": ("Rumour has it", "Barely science", "The deadpan {noun}"),
    "nudge": ("Start small", "The one small step", "In good company"),
    "collective": ("{place} together", "All of us in {place}", "Us, not them"),

    "visual": ("One {obj}", "The {obj} picture", "From across the room"), "trust": ("Doubt first", "The honest {noun}", "No small print"),
}  # fmt: skip
SCENES = (  # (an ordinary moment, the same image at the end, changed)
    ("{who}, {life}, read this twice at the kitchen table before {pr} put the kettle on.",
     "By the time the kettle boiled, {pr} had {did}."),
    ("{who}, {life}, {kept} for a week.", "{gone}, because {pr} {did}."),
    ("On the bus home, {who}, {life}, read this {doc} between two stops.", "Two stops later, {pr} had {did}."),
)  # fmt: skip
PEOPLE = ("Picture {who}, {life}: {pr} has never {never_3}.", "{who}, {life}, had never {never_3} either.",
          "Take {who}, {life}; {pr} has never {never_3} and wonders where to start.")  # fmt: skip
RETORTS = ("Rumour, as usual, has not read the small print.", "Rumour needs to get out more.",
           "We have met Rumour. Rumour exaggerates.")  # fmt: skip
DEADPAN = ("It is not rocket science. It is barely science.", "We tried to make it sound difficult and failed.",
           "Nobody will be impressed by how hard it was. Sorry.")  # fmt: skip
HYPED = ("Honestly, it is the best {noun} you could ask for.", "It is the perfect {noun} for a first-timer.")
SECOND_ASKS = ("Reply to this {doc} with any questions.", "Follow us online for updates and tips.")
FROM_HERE = (
    "Here in {place} we have a favour to ask.",
    "We are writing from {place}, and this one is about all of us.",
)

# Devices that place a proof point: (device, the tags it wants, how the line reads; {f} the fact, {lf} lower-cased).
FACT_LINES = (
    ("price", ("price",), "{f}"), ("deadline", ("scarce",), "{f}"), ("progress", ("scale",), "So far, {lf}"),
    ("noticed", ("easy", "exit", "local"), "Then {seer} noticed that {lf}"),
    ("together", ("gap",), "{f} Between us, we can fix that."), ("small_step", ("easy",), "The first step is small. {f}"),
    ("anchor", ("cost",), "{f} That is about what a takeaway for two costs, for something you keep."),
    ("trial", ("exit",), "Think of it as a trial: {lf}"),
)  # fmt: skip
# Devices that add the author's own line; a line whose words this brief cannot supply is left out.
OWN_LINES = (
    ("person", "{person}"), ("deadpan", "{deadpan}"), ("timesave", "Time it takes to {task}: {minutes} minutes."),
    ("triple", "You will need three things: {a}, {b} and the patience it takes to find the TV remote."),
    ("standalone", "One {obj}. {Numkw}. {Kw}."), ("place", "This is {place}'s {noun}, and we would like you in it."),
)  # fmt: skip
CLOSING = (
    ("bookend", (), "{bookend}"), ("honest", (), "One honest note: {honest}."),
    ("exit", ("refund",), "And if it is not for you: {lf}"), ("exit", ("exit",), "One less thing to sort out: {lf}"),
    ("slot", (), "{slot}"),
)  # fmt: skip


# --- text helpers ----------------------------------------------------------------------------------------------


def _clip(text: str, limit: int = MAX_NOTE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _quote(text: str, words: int = 9) -> str:
    cut = text.split()
    return "‘" + " ".join(cut[:words]).rstrip(".,:;") + ("…’" if len(cut) > words else "’")


def _words(text: str) -> int:
    return len(re.findall(r"[\w£$€][\w'’£$€.,/-]*", text))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?\]])\s+(?=[\"'‘“(\[A-Z0-9£])", text) if s.strip()]


def _lc(text: str) -> str:  # lower-case a sentence start, but not "DBS" or "UK"
    return text[0].lower() + text[1:] if len(text) > 1 and text[1].islower() else text


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fill(template: str, values: dict[str, str]) -> str:
    """The template filled in, or "" when this brief cannot supply one of its words."""
    try:
        return template.format(**values)
    except KeyError:
        return ""


def _content(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z'-]{3,}", text.lower()) if w not in STOP}


def _plain(text: str) -> str:
    for hard, easy in PLAIN.items():
        text = re.sub(rf"\b{hard}\b", easy, text)
    return text


def _person(text: str, who: str, past: bool = False) -> str:
    """Re-voice the brief's 'they' for 'you' or a character, optionally in the past tense."""
    self_ = {"you": "yourself", "she": "herself", "he": "himself", "they": "themselves"}[who]
    text = re.sub(r"\bthemselves\b", self_, re.sub(r"\bthey\b", who, text))
    tenses = ((" is ", " was "), (" are ", " were "), (" needs ", " needed "), (" means ", " meant "),
              (" do not ", " did not "), (" has ", " had "), (" have ", " had "))  # fmt: skip
    for now, then in tenses if past else ():
        text = text.replace(now, then)
    return text


PERSON = r"\b(%s)\b|\b([A-Z][a-z]+), who\b" % "|".join(n for n, _ in NAMES)  # noqa: UP031


def _named(text: str) -> str:
    """The character a concept names, if any: one of ours, or anyone introduced as "Name, who…"."""
    m = re.search(PERSON, text)
    return (m.group(1) or m.group(2)) if m else ""


def people_in(texts: Sequence[str]) -> list[str]:
    """Every invented person the texts name, in order, once each."""
    found = [m.group(1) or m.group(2) for t in texts for m in re.finditer(PERSON, t)]
    return list(dict.fromkeys(found))


def _is_cta(unit: str) -> bool:
    first = re.sub(r"^[^A-Za-z]*", "", unit).split(" ", 1)[0].lower().strip(",:")
    return first in CTA_VERBS or bool(re.search(r"\[[^\]]*(link|phone|number)[^\]]*\]|https?://", unit, re.I))


# --- the brief, read once --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fact:
    text: str  # a reader-facing sentence without its full stop
    tags: frozenset[str]
    marks: tuple[str, ...]  # what shows the fact is in a text: its figures, else its rarest words
    need: int

    def used_in(self, text: str) -> bool:
        """Its marks are in `text`, also after the panel swapped an insider word for an everyday one."""
        low = text.lower()
        found = [m for m in self.marks if any(_has(w, low) for w in (m, PLAIN.get(m, m)))]
        return len(found) >= self.need


def _has(mark: str, low: str) -> bool:
    return bool(re.search(rf"(?<![\w,.]){re.escape(mark)}(?!\d|,\d)", low))


LEADS_IN = r"^(?:It|The \w+|We|Then \w+ noticed that|So far,|Think of it as a trial:|The first step is small\.|" \
    r"And if it is not for you:|One less thing to sort out:|And|Also:|\w+ read on:|Fair\. But)\s+"  # fmt: skip


def _norm(unit: str) -> str:
    """A sentence as a reader hears it: without a lead-in, its case, its closing stop or a swapped word."""
    text = _plain(unit.strip())
    while (cut := re.sub(LEADS_IN, "", text, flags=re.I)) != text:
        text = cut
    return " ".join(re.findall(r"[\w£$€']+", text.lower()))


def _repeats(units: Sequence[str]) -> list[str]:
    """The sentences that say again what an earlier one said (the same words, give or take a lead-in)."""
    seen: list[tuple[str, set[str]]] = []
    again = []
    for u in units:
        n, words = _norm(u), _content(_plain(u))
        if n and any(n == m or (len(words) >= 4 and len(words & w) / len(words | w) >= 0.8) for m, w in seen):
            again.append(u)
        else:
            seen.append((n, words))
    return again


@dataclass(frozen=True)
class Kit:
    """What every writer and judge takes from the brief."""

    label: str  # "Subject" for an email, "Headline" for print
    word_limit: int | None
    title_limit: int | None
    product: str  # "the Mend & Make Darning Kit"
    noun: str  # "kit"
    org: bool  # the product can say "we" (a charity, a scheme), not an object
    place: str
    cta: str
    did: str  # "bought the kit"
    audience: str
    goal: str
    doubt: str  # "mending is fiddly and needs a skill they do not have"
    never: str  # "repaired a garment themselves"
    facts: tuple[Fact, ...]
    honest: tuple[str, ...]  # truths a constraint insists on, for a writer who admits a limitation
    rules: tuple[tuple[str, str, str], ...]  # (pattern, temptation, the constraint that forbids it)
    keywords: tuple[str, ...]
    vocab: frozenset[str]  # the brief's own words: two concepts quoting the same fact are not twins


def _fact(point: str, points: Sequence[str], noun: str) -> Fact:
    text = re.sub(r"^It ", f"The {noun} ", point.rstrip("."))
    figures = tuple(dict.fromkeys(re.findall(r"\d[\d,]*\d|\d", point)))
    own = _content(point) - _content(" ".join(p for p in points if p != point))
    rare = sorted(own, key=lambda w: (-len(w), w))
    marks = figures or tuple(rare[:3])
    need = 1 if figures and len(figures) < 3 else min(2, len(marks))
    tags = frozenset(t for t, rx in TAGS.items() if re.search(rx, point))
    return Fact(text.replace("when this brief was written", "at the time of writing"), tags, marks, need)


def _kit(brief: Brief) -> Kit:
    cons = " ".join(brief.constraints).lower()
    limit = re.search(r"no more than (\d+) words", cons)
    chars = re.search(r"(?:subject line|headline)[^.;]*?no more than (\d+) characters", cons)
    name = brief.product.split(",")[0].strip()
    place = next((k for k in brief.keywords if re.fullmatch(r"(?:[A-Z][a-z]+ ?)+", k)), "")
    goal = re.sub(r"^(get|encourage|persuade) (readers|people|them) to ", "", brief.goal, flags=re.I)
    act = goal.split(" before ")[0]
    verb, _, rest = act.partition(" ")
    did = {"buy": "bought", "get": "got", "make": "made"}.get(verb.lower(), verb.lower() + "ed")
    text = " ".join(brief.text.split())
    doubt = re.search(r"\bMany (?:\w+ )?(?:assume|think|believe|worry|expect)s? (?:that )?([^.]+)\.", text)
    never = re.search(r"\bnever ([^,.;]+)", brief.audience)
    noun = name.split()[-1].lower()
    org = r"\b(charity|scheme|club|trust|society|campaign|council|organi[sz]ation)\b"
    shared = [*brief.proof_points, *brief.keywords, brief.goal, brief.product, brief.audience]
    truth, cons_ = r"do not (suggest|promise|claim)[^;]*;", brief.constraints
    return Kit(
        label="Subject" if "email" in cons or "subject line" in cons else "Headline",
        word_limit=int(limit.group(1)) if limit else None,
        title_limit=int(chars.group(1)) if chars else None,
        product=name[0].lower() + name[1:] if name.startswith("The ") else name,
        noun=noun,
        org=bool(re.search(org, brief.product)),
        place=place or (re.findall(r"\bin ([A-Z][a-z]+)", brief.product) or ["town"])[0],
        cta=f"{_cap(goal)}: " + ("[phone number]" if " call " in f" {act} " else "[link]"),
        did=f"{did} {re.split(r' (?:from|with|on|at|for|to) ', rest)[0]}",
        audience=_lc(brief.audience.split(" who ")[0]),
        goal=_lc(goal),
        doubt=doubt.group(1) if doubt else f"{act.lower()} is not really for them",
        never=never.group(1).strip() if never else "done this before",
        facts=tuple(_fact(p, brief.proof_points, noun) for p in brief.proof_points),
        honest=tuple(c.split(";", 1)[1].strip(" .") for c in brief.constraints if re.match(truth, c, re.I)),
        rules=tuple(
            (rx, line, c) for words, rx, line in RULES for c in cons_ if any(w in c.lower() for w in words)
        ),
        keywords=tuple(brief.keywords),
        vocab=frozenset(_content(" ".join(shared))),
    )


def _overlap(kit: Kit, a: str, b: str) -> float:
    """Shared wording beyond the brief's own."""
    x, y = _content(a) - kit.vocab, _content(b) - kit.vocab
    return len(x & y) / max(1, len(x | y))


FOCUS = 4  # proof points one idea can carry; a concept with more piles them up


# --- a concept as text: a title, maybe a picture, paragraphs of sentences or list items -------------------------


@dataclass
class Para:
    items: list[str]
    kind: str = "prose"  # or "dash", "num"


@dataclass
class Draft:
    title: str = ""
    image: str = ""
    paras: list[Para] = field(default_factory=list)

    def render(self, label: str) -> str:
        body = [f"{label}: {self.title}"] + ([f"Image: {self.image}"] if self.image else [])
        for p in self.paras:
            if p.kind != "prose":
                body.append(
                    "\n".join(f"{i}. {x}" if p.kind == "num" else f"- {x}" for i, x in enumerate(p.items, 1))
                )
                continue
            items = list(p.items)  # "The kit… The kit…" reads like a list: the second becomes "It"
            for i in range(1, len(items)):
                if items[i].startswith("The ") and items[i].split()[:2] == p.items[i - 1].split()[:2]:
                    items[i] = re.sub(r"^The \w+ ", "It ", items[i])
            body.append(" ".join(items))
        head = 2 if self.image else 1
        return "\n".join(body[:head]) + "\n\n" + "\n\n".join(body[head:])

    def units(self) -> list[str]:
        return [u for p in self.paras for u in p.items]

    def drop(self, unit: str) -> None:
        for p in self.paras:
            p.items = [x for x in p.items if x != unit]
        self.paras = [p for p in self.paras if p.items]

    def drop_repeat(self, unit: str) -> None:
        """Drop the last copy of a sentence said twice; the first stays."""
        for p in reversed(self.paras):
            if unit in p.items:
                del p.items[len(p.items) - 1 - p.items[::-1].index(unit)]
                break
        self.paras = [p for p in self.paras if p.items]

    def tidy(self) -> None:
        """A list's lead line ("What you get:") goes when its list has gone; a list of one is a sentence again."""
        for i, p in enumerate(self.paras):
            if p.kind != "prose" and len(p.items) == 1:
                p.kind, p.items = "prose", [p.items[0].rstrip(".") + "."]
                if i and self.paras[i - 1].items[-1].endswith(":"):
                    self.paras[i - 1].items.pop()
        self.paras = [p for p in self.paras if p.items]
        keep = []
        for i, p in enumerate(self.paras):
            after = self.paras[i + 1] if i + 1 < len(self.paras) else None
            if p.items == [p.items[0]] and p.items[0].endswith(":") and (not after or after.kind == "prose"):
                continue
            keep.append(p)
        self.paras = keep

    def add_before_cta(self, unit: str) -> None:
        at = next((i for i, p in enumerate(self.paras) if any(_is_cta(u) for u in p.items)), len(self.paras))
        self.paras.insert(at, Para([unit]))


def _parse(text: str) -> Draft:
    draft, body = Draft(), []
    for line in text.splitlines():
        m = re.match(r"^\W*(subject(?: line)?|headline|image|visual)\W*:\s*(.+)$", line, re.I)
        if m and m.group(1).lower() in ("image", "visual"):
            draft.image = m.group(2).strip()
        elif m:
            draft.title = m.group(2).strip()
        else:
            body.append(line)
    for chunk in re.split(r"\n\s*\n", "\n".join(body).strip()):
        lines = [x.strip() for x in chunk.splitlines() if x.strip()]
        items = [m.group(1) for x in lines if (m := re.match(r"(?:[-•*]|\d+[.)])\s+(.+)$", x))]
        if lines and len(items) == len(lines):
            draft.paras.append(Para(items, "num" if lines[0][0].isdigit() else "dash"))
        elif lines:
            draft.paras.append(Para(_sentences(" ".join(lines))))
    return draft


@dataclass
class Reading:
    """A concept measured against the brief."""

    draft: Draft
    words: int
    over: int  # words over the limit
    title_over: int  # characters over the limit (words over ten, when the brief sets no limit)
    used: list[Fact]
    missing: list[Fact]
    keywords: list[str]
    ctas: list[str]
    broken: list[tuple[str, str]]  # (constraint, offending sentence)
    hype: list[str]
    longest: str
    person: str
    jargon: list[str]
    unsupported: list[str]  # figures the brief never gives
    sameness: float  # overlap with the most similar other concept
    twin: str
    repeats: list[str]  # sentences that say again what an earlier one said
    stuffed: list[str]  # lines that only list the brief's keywords

    @property
    def crowd(self) -> int:
        """Proof points past the four one idea can carry: the rest are a pile, not an argument."""
        return max(0, len(self.used) - FOCUS)

    @property
    def fails(self) -> list[str]:
        fails = ["word limit"] * bool(self.over) + ["title length"] * bool(self.title_over)
        return fails + ["one call to action"] * (len(self.ctas) != 1) + [c for c, _ in self.broken]


def _read(kit: Kit, brief: Brief, text: str, others: Sequence[Shown] = ()) -> Reading:
    draft = _parse(text)
    units = draft.units()
    body = " ".join(units)
    known = re.findall(r"\d[\d,]*\d|\d", " ".join([brief.text, *brief.proof_points, *brief.keywords]))
    lines = [u for u in units if not _is_cta(u)] or units or [""]
    # a line that only lists the brief's keywords earns none of them
    counted = " ".join(u for u in units if sum(k.lower() in u.lower() for k in kit.keywords) < 4).lower()
    twin = max(others, key=lambda o: _overlap(kit, text, o.text), default=None)
    title_over = len(draft.title) - kit.title_limit if kit.title_limit else len(draft.title.split()) - 10
    return Reading(
        draft=draft,
        words=_words(body),
        over=max(0, _words(body) - kit.word_limit) if kit.word_limit else 0,
        title_over=max(0, title_over),
        used=[f for f in kit.facts if f.used_in(text)],
        missing=[f for f in kit.facts if not f.used_in(text)],
        keywords=[k for k in kit.keywords if k.lower() in counted],
        ctas=[u for u in units if _is_cta(u)],
        broken=[(c, u) for rx, _, c in kit.rules for u in units if re.search(rx, u, re.I)],
        hype=[m.group(0) for m in HYPE.finditer(body)],
        longest=max(lines, key=_words),
        person=_named(body),
        jargon=sorted(w for w in PLAIN if re.search(rf"\b{w}\b", body, re.I)),
        unsupported=[n for n in re.findall(r"\d[\d,]*\d|\d", body) if n not in known],
        sameness=_overlap(kit, text, twin.text) if twin else 0.0,
        twin=twin.alias if twin else "",
        repeats=_repeats(units),
        stuffed=[u for u in units if sum(k.lower() in u.lower() for k in kit.keywords) >= 4],
    )


# --- writing ---------------------------------------------------------------------------------------------------

ASKS = (  # what a direction or a critic's note asks for, by the words it uses
    ("trim", r"word limit|limit of \d+|\d+ words or fewer|shorter|\bcut\b"), ("one_cta", r"call to action|one ask|asks for"),
    ("more_facts", r"proof point|\bfacts?\b|evidence"), ("person", r"\bperson\b|\bname\b|character|human|story"),
    ("short", r"sentence"), ("plainwords", r"jargon|decod|plain words|everyday words|words readers use"),
    ("clean", r"superlative|claim|breaks the brief|figure"), ("honest", r"doubt|objection|honest"),
    ("price", r"\bprice\b"), ("deadline", r"urgen|deadline|sells? out|scarc"), ("title", r"subject|headline"),
    ("deadpan", r"funn|humou?r|\bwit\b|smile|lighter|playful"), ("place", r"\blocal\b|neighbour|speak as"),
    ("same", r"same ground|much like"), ("image", r"picture|image"), ("ending", r"ends on|landing"),
    ("step", r"first step|reversible"), ("focus", r"one idea|piles? up|serve the idea"), ("repeat", r"twice|say each thing once"),
)  # fmt: skip


def _asks(kit: Kit, text: str) -> tuple[set[str], list[Fact]]:
    """The flags a text raises, and the proof points it names (words inside a quotation raise no flag)."""
    said = re.sub(r"‘[^’]*’", "", text)
    flags = {flag for flag, rx in ASKS if re.search(rx, said, re.I)}
    return (flags - {"more_facts"} if "focus" in flags else flags), [f for f in kit.facts if f.used_in(text)]


def _method(persona: Persona) -> str:
    blob = " ".join([persona.voice, persona.pushes_for, persona.critique_style, *persona.strengths])
    blob = " ".join([blob, *persona.signature_moves]).lower()
    return max(METHODS, key=lambda m: sum(blob.count(w) for w in METHODS[m]))


def _values(kit: Kit, r: random.Random, character: tuple[str, str, str] | None = None) -> dict[str, str]:
    """The words a title, a name or a line is filled with, drawn for one draft (its person: `character`)."""
    who, pr = r.choice(NAMES)
    life = r.choice(LIVES)
    if character:
        who, pr, life = character
    nums = [k for k in kit.keywords if re.search(r"[\d£$€]", k) and kit.place not in k] or list(kit.keywords)
    words = [k for k in kit.keywords if k not in nums and kit.place not in k] or list(kit.keywords)
    things = [k for k in words if not re.search(r"made|your|journeys|first|paid|batch|ing$|\b(two|six)\b", k)]
    things.sort(key=lambda k: k.endswith("s"))  # a picture of one thing reads better than of "a cards"
    email = kit.label == "Subject"
    v = {"numkw": nums[0], "numkw2": nums[-1], "kw": r.choice(words), "who": who, "pr": pr, "place": kit.place,
         "obj": things[0] if things else kit.noun, "noun": kit.noun, "did": kit.did,

         "never_3": _plain(_person(kit.never, pr)), "never_you": _plain(_person(kit.never, "you")),
         "Short": " ".join(kit.product.removeprefix("the ").split()[-2:]), "life": life,
         "doc": "email" if email else "leaflet", "deadpan": r.choice(DEADPAN),
         "kept": "starred this email and left it" if email else "kept this leaflet under a magnet on the fridge",
         "gone": "The star is gone now" if email else "The magnet is still there; the leaflet is not",
         "slot": "Pick a morning or an evening this week." if "call" in kit.cta else "Put an hour in your diary for it."}  # fmt: skip
    if len(nums) > 1:
        v["numkw"], v["numkw2"] = r.sample(nums, 2)
    if len(things) >= 2:
        v["a"], v["b"] = (("the " if k.endswith("s") else "a ") + k for k in r.sample(things[:5], 2))
    if kit.honest:
        v["honest"] = r.choice(kit.honest)
    v["person"] = r.choice(PEOPLE).format(**v)
    return v | {k[0].upper() + k[1:]: _cap(x) for k, x in v.items() if k[0].islower()}


def _title(kit: Kit, method: str, v: dict[str, str], r: random.Random, long: bool = False) -> str:
    options = [_fill(t, v) for t in r.sample(TITLES[method], k=len(TITLES[method]))]
    if long:  # the slip: a subject line that tries to say everything
        head = options[0].rstrip(".?!")
        extra = ", ".join([k for k in kit.keywords if k.lower() not in head.lower()][:2])
        return f"{head}{' —' if ':' in head else ':'} {extra} and everything else inside"
    fits = [t for t in options if len(t) <= (kit.title_limit or 60) and len(t.split()) <= 8]
    return fits[0] if fits else options[0][: kit.title_limit or 60].rsplit(" ", 1)[0]


def _split_long(unit: str, limit: int = 20) -> list[str]:
    for cut in ("; ", ", but ", ", and ", " — "):
        head, sep, tail = unit.partition(cut)
        if _words(unit) > limit and sep and _words(head) >= 5 and _words(tail) >= 5:
            return [head.rstrip(",;") + ".", "But " + tail if "but" in sep else _cap(tail)]
    return [unit]


def _value(kit: Kit, unit: str, others: str) -> float:
    """What a line carries: proof points nothing else carries, the brief's words, or the author's own voice."""
    facts = [f for f in kit.facts if f.used_in(unit)]
    own = 3 * sum(1 for f in facts if not f.used_in(others)) + (0 if facts else 2)
    keywords = sum(k.lower() in unit.lower() for k in kit.keywords)
    return own + keywords + 2 * bool(_named(unit)) + (9 if unit.endswith(":") else 0)


def _trim(kit: Kit, draft: Draft, budget: int, keep: Sequence[str] = ()) -> list[str]:
    """Drop the lines that carry least until the body fits; never the ask, the opening line or `keep`."""
    dropped: list[str] = []
    while _words(" ".join(units := draft.units())) > budget:
        free = [u for u in units[1:] if not _is_cta(u)]
        free = [u for u in free if u not in keep] or free
        if not free:
            break
        dropped.append(
            min(free, key=lambda u: (_value(kit, u, " ".join(x for x in units if x != u)), -_words(u)))
        )
        draft.drop(dropped[-1])
    return dropped


@dataclass
class Writer:
    """One draft in progress: the brief's kit, the author's devices, the proof points not yet placed."""

    kit: Kit
    method: str
    d: set[str]
    r: random.Random
    v: dict[str, str]
    pool: list[Fact]

    def take(self, *tags: str) -> Fact | None:
        f = next((f for f in self.pool if f.tags & set(tags) or not tags), None)
        if f:
            self.pool.remove(f)
        return f

    def say(self, f: Fact) -> str:
        text = (_plain(f.text) if "plainwords" in self.d else f.text) + "."
        m = re.match(rf"The {self.kit.noun} (\w+)(.*)$", text)
        if self.method == "collective" and self.kit.org and m:  # the charity speaks as "we"
            verb = {"has": "have", "is": "are", "was": "were"}.get(
                m.group(1), re.sub(r"(?<=[^s])s$", "", m.group(1))
            )
            text = "We " + verb + re.sub(r" and (\w+[^s])s\b", r" and \1", m.group(2))
        return text

    def opener(self, kind: str) -> list[str]:
        kit, v, pr = self.kit, self.v, self.v["pr"]
        if kind == "scene":
            first, bookend = self.r.choice(SCENES)
            v["bookend"] = _fill(bookend, v)
            assumed = f"{_cap(pr)} had never {v['never_3']}, and {pr} assumed {_person(kit.doubt, pr, True)}."
            return [_fill(first, v), assumed]
        if kind == "objection":
            f = self.take("easy", "exit")
            answer = [f"Fair. But {_lc(self.say(f))}"] if f else []
            return [f"You might think {_person(kit.doubt, 'you')}.", *answer]
        if kind == "annoyance":
            return [f"Rumour has it that {_person(kit.doubt, 'you')}.", self.r.choice(RETORTS)]
        if kind == "social" and (f := self.take("scale")):
            return [self.say(f), "You would be in good company."]
        if kind == "place":
            return [_fill(self.r.choice(FROM_HERE), v)]
        f = self.take("scarce", "scale") if kind == "number" else self.take("price", "easy") or self.take()
        return [self.say(f) if f else f"This is {kit.product}."]  # fmt: skip

    def lines(self, table: Sequence[tuple[str, tuple[str, ...], str]]) -> list[str]:
        """The author's devices from `table`, in its order, so a draft reads as an argument, not a shuffle."""
        out: dict[str, str] = {}
        for device, tags, template in table:
            wanted = device in self.d and device not in out
            if not wanted or (tags and not any(f.tags & set(tags) for f in self.pool)):
                continue
            f = self.take(*tags) if tags else None
            if line := _fill(template, self.v | ({"f": self.say(f), "lf": _lc(self.say(f))} if f else {})):
                out[device] = line
        return list(out.values())


def _facts_for(
    kit: Kit, method: str, r: random.Random, named: list[Fact], more: bool, slip: str
) -> list[Fact]:
    """The proof points a draft will carry: the ones the direction named, then the method's favourites."""
    order, count, _ = PLANS[method]
    rank = sorted(
        r.sample(kit.facts, k=len(kit.facts)),
        key=lambda f: min(map(order.index, f.tags & {*order}), default=9),
    )
    count = {"few_proofs": 1, "over_limit": len(rank)}.get(slip, min(FOCUS, count + more))
    return list(dict.fromkeys([*named, *rank]))[: max(count, len(named))]


def _compose(kit: Kit, method: str, devices: list[str], r: random.Random, direction: str, slip: str,
             character: tuple[str, str, str] | None = None) -> Draft:  # fmt: skip
    """A concept in `method`: an opener, the lines its devices ask for, a close, one ask, and the slip if any."""
    flags, named = _asks(kit, direction)
    v = _values(kit, r, character)
    pool = _facts_for(kit, method, r, named, "more_facts" in flags, slip)
    w = Writer(kit, method, set(devices) | flags, r, v, pool)
    opened = next((x for x in devices if x in OPENERS.values()), OPENERS[method])
    w.d -= {"place"} if opened == "place" else set()
    v["seer"] = v["pr"] if opened == "scene" else "you"
    if minutes := re.search(r"(\d+)[- ]minute", " ".join([kit.goal, *(f.text for f in w.pool)])):
        v |= {
            "minutes": minutes.group(1),
            "task": "find out more" if minutes.group(0) in kit.goal else "learn",
        }
    opener = w.opener(opened)
    if opened != "scene" or ("bookend" not in w.d and r.random() < 0.5):
        v.pop("bookend", None)
    else:
        w.d.add("bookend")
    w.d -= {"person"} if opened == "scene" else set()
    middle = w.lines(FACT_LINES) + w.lines([(d, (), t) for d, t in OWN_LINES])
    close = w.lines(CLOSING)
    rest = [w.say(f) for f in w.pool]
    if opened == "scene":  # in a story the facts are things the character reads
        leads = (f"{_cap(v['pr'])} read on: ", "And ", "Also: ")
        rest = [lead + _lc(x) for lead, x in zip(leads, rest, strict=False)]
    listing = []
    if len(rest) > 1 and ({"bullets", "checkable", "subhead"} & w.d or method == "offer"):
        heads = {
            "checkable": "The facts, so you can check them:",
            "subhead": "How it works:",
            "": "What you get:",
        }
        lead = heads[next((k for k in heads if k in w.d), "")] if method != "offer" else "The numbers:"
        listing = [Para([lead]), Para([x.rstrip(".") for x in rest], "num" if method == "offer" else "dash")]
    else:
        middle += rest
    _slip(kit, r, v, slip, opener, middle)
    share = "share" in w.d and "one_cta" not in w.d
    after = [f"Pass this on to one person in {kit.place} who should see it."] if share else []
    if slip == "second_cta":
        after.append(_fill(r.choice(SECOND_ASKS), v))
    ask = Para([("Your turn: " + _lc(kit.cta)) if opened == "scene" else kit.cta, *after])
    body = [Para(opener), Para(middle), *listing, Para(close)]
    draft = Draft(_title(kit, method, v, r, long=slip == "long_title"), paras=[p for p in body if p.items])
    draft.paras.insert(1 if "early_ask" in w.d else len(draft.paras), ask)
    if "image" in w.d or method == "visual":
        draft.image = r.choice([f"a {v['obj']} in close-up, shot from above on a plain background, nothing else in frame",
                                f"a wide, quiet shot of {kit.place} with a {v['obj']} small in one corner"])  # fmt: skip
    for p in draft.paras if "short" in w.d else []:
        p.items = [s for u in p.items for s in _split_long(u)]
    if kit.word_limit and slip == "over_limit":  # the slip: it keeps going after it should have stopped
        extra = iter([f"P.S. In case you skimmed: {', '.join(kit.keywords)}.", *DEADPAN, *RETORTS])
        while _words(" ".join(draft.units())) <= kit.word_limit + 8:
            draft.paras.append(Para([next(extra, "P.S. That really is everything.")]))
    elif kit.word_limit:
        _trim(kit, draft, kit.word_limit - (12 if "trim" in w.d else r.randint(0, 10)))
    return draft


def _slip(
    kit: Kit, r: random.Random, v: dict[str, str], slip: str, opener: list[str], middle: list[str]
) -> None:
    """The first draft's human mistake: a claim the brief forbids, a superlative, or two lines run together."""
    if slip in ("forbidden", "hype"):
        line = r.choice(kit.rules)[1] if slip == "forbidden" and kit.rules else _fill(r.choice(HYPED), v)
        (middle or opener).insert(max(1, len(middle) // 2), line)
    host = middle if len(middle) >= 2 else opener
    if slip == "long_sentence" and len(host) >= 2:
        second = re.sub(r"^(Fair\. )?But ", "", host[1])
        host[:2] = [host[0].rstrip(".") + (", but " if second != host[1] else ", and ") + _lc(second)]


def concept(
    brief: Brief,
    persona: Persona,
    *,
    seed: int,
    round_number: int,
    direction: str,
    taken_names: Sequence[str],
    slot: int | None = None,
    seats: int = 1,
    block: int = 0,
    people: Sequence[str] = (),
) -> ConceptSubmitted:
    """A new concept in the persona's method; a direction shapes it and keeps it from the slip it names. Its
    invented person is its seat's (`slot`) first character not in `people`, those the run has written about."""
    kit, method = _kit(brief), _method(persona)
    r = rng.stream(seed, "message_lab:concept", round_number, persona.id, brief.id)
    moves = r.sample(persona.signature_moves, k=min(3, len(persona.signature_moves)))
    devices = [d for m in moves for rx, d in MOVES if re.search(rx, m, re.I)]
    slip = r.choice(PLANS[method][2])
    slip = "" if any(slip in CURES.get(flag, "").split() for flag in _asks(kit, direction)[0]) else slip
    character = _character(seed, slot, seats, block, people)
    text = _compose(kit, method, devices, r, direction, slip, character).render(kit.label)
    v = _values(kit, r, character) | ({"who": who} if (who := _named(text)) else {})
    gone = {t.strip().lower() for t in taken_names}
    names = [_fill(t, v) for t in r.sample(CONCEPT_NAMES[method], k=len(CONCEPT_NAMES[method]))]
    names += [f"{names[0]}: {k}" for k in kit.keywords] + [f"{names[0]} {n}" for n in range(2, len(gone) + 3)]
    name = next(_clip(n, MAX_NAME) for n in names if _clip(n, MAX_NAME).lower() not in gone)
    return ConceptSubmitted(persona=persona.id, name=name, text=text)


# --- judging ---------------------------------------------------------------------------------------------------

HARD = {"limit", "title", "broken", "cta", "proof", "long", "hype", "unsupported", "crowd", "repeat",
        "stuffed"}  # every critic sees these  # fmt: skip
LENSES: dict[str, dict[str, float]] = {  # what each method's critic cares about, and how much
    "offer": {"cta": 3, "price": 3, "limit": 2, "proof": 1.5, "hype": 1.5},
    "story": {"person": 3, "ending": 2.5, "proof": 1, "long": 1},
    "plain": {"long": 3, "jargon": 3, "limit": 2, "title": 2},
    "wit": {"same": 3, "flat": 2.5, "cta": 1.5, "limit": 1.5},
    "nudge": {"cta": 3, "step": 2.5, "unsupported": 2, "hype": 1.5},
    "collective": {"voice": 3, "cta": 2.5, "person": 1.5},
    "visual": {"headline": 3, "image": 2, "limit": 1.5, "title": 2},
    "trust": {"broken": 3, "hype": 3, "unsupported": 3, "proof": 2},
}  # fmt: skip
LEADS = {  # how each critic opens a weakness, and a strength
    "offer": (("Where a reader would stop: {}.", "What costs replies: {}."), ("What earns its place: {}.", "It works on the spreadsheet: {}.")),
    "story": (("What keeps me outside it: {}.", "Where it goes cold: {}."), ("What feels lived-in: {}.", "I could see it: {}.")),
    "plain": (("Read aloud, it trips: {}.", "A tired reader on a phone stalls here: {}."), ("It reads in one pass: {}.", "Clear: {}.")),
    "wit": (("Where it goes forgettable: {}.", "What I'd fix before anyone forwards it: {}."), ("It has a pulse: {}.", "The bit people would repeat: {}.")),
    "nudge": (("The friction: {}.", "What makes the next step feel bigger than it is: {}."), ("It lowers the bar: {}.", "Good choice architecture: {}.")),
    "collective": (("Who is speaking, and to whom? {}.", "What keeps the reader a target: {}."), ("It speaks with people: {}.", "I'd pass this on: {}.")),
    "visual": (("From across the room: {}.", "In three seconds: {}."), ("It holds up at a glance: {}.", "The idea survives a skim: {}.")),
    "trust": (("The least convinced reader would say: {}.", "This would not survive a complaint: {}."), ("It earns trust: {}.", "Checkable: {}.")),
}  # fmt: skip
Finding = tuple[str, float, str]  # (what, how much, the words that say exactly what)


def _important(facts: Sequence[Fact], method: str) -> Fact:
    order = PLANS[method][0]
    return min(facts, key=lambda f: min(map(order.index, f.tags & {*order}), default=9))


def _faults(kit: Kit, rd: Reading, method: str = "offer") -> list[Finding]:
    """What is wrong with a concept, measured: the hard faults every reader sees, then the ones a lens looks for."""
    units, body, label, n, title = (
        rd.draft.units(),
        " ".join(rd.draft.units()),
        kit.label.lower(),
        _words(rd.longest),
        rd.draft.title,
    )
    rule, line = rd.broken[0] if rd.broken else ("", "")
    lack = _important(rd.missing, method).text if rd.missing else ""
    more = f" and {len(rd.missing) - 1} more" if len(rd.missing) > 1 else ""
    allowed = (
        f"the brief allows {kit.title_limit}" if kit.title_limit else "nobody reads that much of a headline"
    )
    price = next((f for f in kit.facts if "cost" in f.tags), None)
    buried = price and not any(price.used_in(u) for u in units[:3])
    last = ([u for u in units if not _is_cta(u)] or [""])[-1]
    spare = next((u for u in reversed(units) if any(f.used_in(u) for f in kit.facts)), "")
    priced = next((u for u in units if price and price.used_in(u)), "")
    opening = _quote(units[0] if units else title, 8)
    found = (
        ("limit", 3, rd.over, f"it runs to {rd.words} words against a limit of {kit.word_limit}"),
        ("title", 2, rd.title_over, f"the {label} {_quote(title, 8)} is {len(title)} characters; {allowed}"),
        ("broken", 3, rd.broken, f"{_quote(line)} breaks the brief's rule: {_lc(rule)}"),
        ("cta", 3, not rd.ctas, "it never asks the reader to do anything"),
        ("cta", 2, len(rd.ctas) > 1, f"it asks for {len(rd.ctas)} things, " + " and ".join(_quote(c, 6) for c in rd.ctas[:2])),
        ("proof", 2.5 - len(rd.used), len(rd.used) < 2, f"it leaves out the proof point {_quote(lack, 14)}{more}"),
        ("crowd", 2 + rd.crowd / 2, rd.crowd, f"it piles up {len(rd.used)} proof points, so no one idea leads; "
         f"{_quote(spare, 8)} is one too many"),
        ("repeat", 3, rd.repeats, f"it says {_quote((rd.repeats or [''])[0], 10)} twice"),
        ("stuffed", 2, rd.stuffed, f"{_quote((rd.stuffed or [''])[0], 8)} only lists the brief's words"),
        ("long", 1 + (n > 28) / 2, n > 22, f"one sentence runs to {n} words ({_quote(rd.longest, 6)})"),
        ("hype", 2, rd.hype, f"'{(rd.hype or [''])[0]}' is a superlative nobody can check"),
        ("unsupported", 2, rd.unsupported, f"the figure {(rd.unsupported or [''])[0]} is not in the brief's proof points"),
        ("jargon", 1, rd.jargon, f"{', '.join(map(repr, rd.jargon[:3]))} would need decoding"),
        ("same", 1 + rd.sameness, rd.sameness > 0.3, f"it covers much the same ground as {rd.twin}"),
        ("price", 1, buried, "the price is " + (f"buried below the fold, in {_quote(priced, 8)}" if priced else f"missing: {opening} and on, no cost")),
        ("person", 1, not rd.person, f"there is no person in it, only features: it opens on {opening}"),
        ("step", 1, not any(f.tags & {"easy", "exit"} for f in rd.used), f"nothing makes the first step small or reversible, from {opening} to the ask"),
        ("voice", 1, not re.search(r"\b(we|us|our|neighbours?)\b", body, re.I), f"nobody is speaking: no 'we', no neighbour, from {opening} on"),
        ("flat", 1, not (rd.person or re.search(r"[?!]|Rumour|Picture|science", body + title)),
         f"it is correct but forgettable: {opening}, then no question, no turn, nothing to smile at"),
        ("headline", 1, len(title.split()) > 8, f"the {label} runs to {len(title.split())} words"),
        ("image", 1, not rd.draft.image, "there is no picture in it"),
        ("ending", 1, not rd.person and any(f.used_in(last) for f in kit.facts), f"it ends on a bare fact ({_quote(last, 6)})"),
    )  # fmt: skip
    return [(topic, severity, words) for topic, severity, present, words in found if present]


def _merits(kit: Kit, rd: Reading) -> list[Finding]:
    units = rd.draft.units()
    honest = next((u for u in units if re.search(r"honest|refund|letter|insurer|You might think", u)), "")
    we = next((u for u in units if re.search(r"\b(we|us)\b", u, re.I)), "")
    best = max(rd.used, key=lambda f: len(f.marks), default=None)
    focused = rd.used and not (rd.crowd or rd.repeats or rd.stuffed or rd.title_over)
    found = (
        ("proof", 2, best and not rd.crowd and f"it puts {len(rd.used)} proof points to work, {_quote(best.text, 8)} among them"),
        ("idea", 2.5, focused and f"one idea carries it from the {kit.label.lower()}, '{rd.draft.title}', to the ask"),
        ("cta", 2, len(rd.ctas) == 1 and f"one clear ask: {_quote(rd.ctas[0], 8)}"),
        ("limit", 1.5, kit.word_limit and not rd.over and f"it stays inside the limit at {rd.words} words"),
        ("person", 3, rd.person and f"{rd.person} makes it feel lived-in"),
        ("long", 2, _words(rd.longest) <= 18 and f"no sentence runs past {_words(rd.longest)} words"),
        ("fit", len(rd.keywords) / 2, rd.keywords and "it uses the brief's own words ('" + "', '".join(rd.keywords[:3]) + "')"),
        ("flat", 1.5, units and f"the opening line {_quote(units[0], 8)} earns the next one"),
        ("broken", 2.5, honest and f"{_quote(honest, 9)} answers the doubt plainly"),
        ("same", 2, rd.sameness < 0.2 and "it sounds like nobody else in the room"),
        ("image", 2.5, rd.draft.image and f"the picture carries it: {_quote(rd.draft.image, 8)}"),
        ("voice", 2, we and f"it speaks as one of us: {_quote(we, 8)}"),
    )  # fmt: skip
    return [(topic, weight, str(words)) for topic, weight, words in found if words]


def _note(kit: Kit, rd: Reading, method: str, r: random.Random) -> tuple[str, str, float]:
    """One critic's strength, weakness and score for one concept."""
    lens, (weak_leads, strong_leads) = LENSES[method], LEADS[method]
    faults = [x for x in _faults(kit, rd, method) if x[0] in HARD or x[0] in lens]
    # a critic leads with what its lens cares about; a serious fault outside the lens still gets a mention
    worst = max(faults, key=lambda x: x[1] * lens.get(x[0], 0.6), default=None)
    serious = [x for x in sorted(faults, key=lambda x: -x[1]) if x[0] in HARD and x != worst and x[1] >= 2]
    best = max(
        _merits(kit, rd) or [("fit", 1, "it stays on the brief")], key=lambda x: x[1] * lens.get(x[0], 1)
    )
    weak = worst[2] if worst else f"little to fix; I would still tighten {_quote(rd.longest, 6)}"
    weak += "".join(f"; and {x[2]}" for x in serious[:1])
    penalty = sum(sev * lens.get(topic, 1.0) for topic, sev, _ in faults)
    merit = _total(_criteria(kit, rd))
    score = min(10.0, max(1.0, 0.5 * merit + 0.5 * (9.4 - 0.45 * penalty) + r.uniform(-0.3, 0.3)))
    return r.choice(strong_leads).format(best[2]), r.choice(weak_leads).format(weak), round(score, 1)


def critique(
    brief: Brief, persona: Persona, *, seed: int, round_number: int, concepts: Sequence[Shown]
) -> CritiqueSubmitted:
    """One note per concept, in the critic's style: the strength and the weakness its lens weighs most."""
    kit, method, notes = _kit(brief), _method(persona), []
    for c in concepts:
        r = rng.stream(seed, "message_lab:critique", round_number, persona.id, c.alias, c.name)
        rd = _read(kit, brief, c.text, [o for o in concepts if o.alias != c.alias])
        strength, weakness, score = _note(kit, rd, method, r)
        notes.append(
            CritiqueNote(alias=c.alias, strength=_clip(strength), weakness=_clip(weakness), score=score)
        )
    return CritiqueSubmitted(persona=persona.id, notes=notes)


# The evaluator's criteria, each marked 1 to 5 from the text. Every mark is read from what any writer could do
# (speak to the reader, name their doubt, put a person or a picture in it, let the sender speak), never from one
# method's stock phrases: a panel whose judge rewards one writer's habits crowns that writer every time.
CRITERIA = ("single idea", "audience fit", "proof used well", "tone", "call to action")
VOICE = r"\b(we|us|our)\b|\?"  # the sender speaks, or asks the reader something
LONG_SENTENCE = (
    25  # words past which a reader loses the thread (19 against 21 words is no difference one sees)
)


def _answers_doubt(kit: Kit, rd: Reading) -> bool:
    """The audience's doubt named in the copy (two of its words), or a proof point that makes trying it easy or
    reversible."""
    named = len(_content(" ".join(rd.draft.units())) & _content(kit.doubt)) >= 2
    return named or any(f.tags & {"easy", "exit"} for f in rd.used)


def _touches(rd: Reading) -> dict[str, bool]:
    """What makes copy sound like someone wrote it, whatever the method: a person or a picture, and a voice."""
    units = [u for u in rd.draft.units() if not _is_cta(u)]
    return {
        "a person or a picture": bool(rd.person or rd.draft.image),
        "a voice": bool(re.search(VOICE, " ".join(units), re.I)),
    }


def _in_prose(kit: Kit, rd: Reading) -> list[Fact]:
    """Proof points placed in a sentence of the argument, not left bare in a list."""
    prose = " ".join(u for p in rd.draft.paras if p.kind == "prose" for u in p.items)
    return [f for f in rd.used if f.used_in(prose)]


def _criteria(kit: Kit, rd: Reading) -> dict[str, float]:
    """The evaluator's criteria, 1 to 5 each, read from the text: what it says, not how much of it there is."""
    body = " ".join(rd.draft.units())
    you = bool(re.search(r"\byou(r)?\b", body, re.I))
    touches = sum(_touches(rd).values())
    crit = {
        "single idea": 5 - 0.8 * rd.crowd - bool(rd.stuffed) - 1.5 * len(rd.repeats) - bool(rd.title_over)
        - 0.5 * (_words(rd.longest) > LONG_SENTENCE) - 0.5 * (_words(rd.longest) > 32) - 0.5 * (len(rd.ctas) > 1),
        "audience fit": 2 + you + _answers_doubt(kit, rd) + 0.35 * min(3, len(rd.keywords)) - 0.5 * len(rd.jargon)
        - 2 * bool(rd.broken),
        "proof used well": (2.5 + 0.5 * min(3, len(rd.used)) + 0.5 * (len(_in_prose(kit, rd)) >= len(rd.used) / 2)
                            - 0.7 * rd.crowd - 1.5 * bool(rd.unsupported) - bool(rd.hype)) if rd.used else 1.0,
        "tone": 3.5 + 0.5 * touches - 1.5 * bool(rd.hype) - 2 * bool(rd.broken) - bool(rd.repeats) - bool(rd.stuffed)
        - 0.5 * (rd.sameness > 0.3),
        "call to action": {0: 1.0, 1: 5.0}.get(len(rd.ctas), 2.0),
    }  # fmt: skip
    # Marked in half points, as a reader marks: a sentence of 19 words against one of 21 is no difference a
    # reader sees, and a finer scale would let such noise (which tracks a writer's habits) pick the winner.
    return {k: max(1.0, min(5.0, round(v * 2) / 2)) for k, v in crit.items()}


def _total(crit: dict[str, float]) -> float:
    """The criteria on the 1-10 scale."""
    return 1 + 9 * (sum(crit.values()) / len(crit) - 1) / 4


def _score(crit: dict[str, float], rd: Reading) -> float:
    """The evaluator's score: its criteria on the 1-10 scale, a point off for each broken constraint, and more the
    longer a draft runs over. Nothing else: the critics' marks inform the writers, not the score."""
    return _total(crit) - len(rd.fails) - min(1.5, 0.04 * rd.over)


def _evaluate(kit: Kit, brief: Brief, c: Shown, concepts: Sequence[Shown]) -> ScoreNote:
    rd = _read(kit, brief, c.text, [o for o in concepts if o.alias != c.alias])
    crit = _criteria(kit, rd)
    # a broken constraint costs a point, and running long costs more the longer it runs
    raw = _score(crit, rd)
    body = " ".join(rd.draft.units())
    placed = len(_in_prose(kit, rd))
    why = {
        "single idea": f"{len(rd.used)} proof points" + " (a pile, not an argument)" * bool(rd.crowd)
        + "".join(f", {_quote(x, 6)} said twice" for x in rd.repeats[:1])
        + "".join(f", {_quote(x, 5)} only lists keywords" for x in rd.stuffed[:1])
        + f", longest sentence {_words(rd.longest)} words",
        "audience fit": ("speaks to 'you'" if re.search(r"\byou\b", body, re.I) else "never says 'you'")
        + "".join(f", '{k}'" for k in rd.keywords[:2]) + "".join(f", breaks '{r[0][:40]}'" for r in rd.broken[:1]),
        "proof used well": f"{len(rd.used)} of {len(kit.facts)}, {placed} placed in sentences"
        + "".join(f", '{h}' unsupported" for h in rd.hype[:1]) + "".join(f", {n} not in the brief" for n in rd.unsupported[:1]),
        "tone": ", ".join([f"'{h}'" for h in rd.hype[:1]] + [k for k, v in _touches(rd).items() if v]) or "flat",
        "call to action": {0: "no ask", 1: "one ask"}.get(len(rd.ctas), f"{len(rd.ctas)} asks"),
    }  # fmt: skip
    checks = [f"{kit.word_limit} words {'FAIL' if rd.over else 'pass'} ({rd.words})"] * bool(kit.word_limit)
    checks += [f"{kit.label.lower()} {'FAIL' if rd.title_over else 'pass'}"]
    checks += [f"one call to action {'pass' if len(rd.ctas) == 1 else 'FAIL'}"]
    checks += [f"{_quote(rule, 6)} FAIL" for rule, _ in rd.broken[:1]]
    faults = sorted(_faults(kit, rd), key=lambda x: -x[1] * (2 if x[0] in HARD else 1))
    lift = faults[0][2] if faults else "nothing left to fix"

    reason = "; ".join(f"{k} {v:g}/5 ({why[k]})" for k, v in crit.items())
    reason = f"Constraints: {', '.join(checks)}. Biggest lift: {lift}. {reason}"
    return ScoreNote(alias=c.alias, score=round(min(10.0, max(1.0, raw)), 1), reason=_clip(reason))


def evaluation(brief: Brief, evaluator: Persona, *, seed: int, round_number: int, concepts: Sequence[Shown],
               critiques: Sequence[CritiqueSubmitted]) -> EvaluationSubmitted:  # fmt: skip
    """Scores on the brief's criteria read from each text (the critiques shape the refinements, not the score)."""
    kit = _kit(brief)
    return EvaluationSubmitted(scores=[_evaluate(kit, brief, c, concepts) for c in concepts])


# --- the moderator ---------------------------------------------------------------------------------------------

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
MERGE_OVERLAP = 0.25  # share of own words above which two concepts are one idea told twice
INSTRUCTIONS = (  # (what is wrong with a concept, the instruction that fixes it), in the order a moderator raises them
    (lambda k, rd: bool(rd.broken), lambda k, rd: f"Drop anything that breaks the brief: {rd.broken[0][0].rstrip('.')}."),
    (lambda k, rd: rd.over > 0, lambda k, rd: f"Cut every draft to {k.word_limit} words or fewer, and count them."),
    (lambda k, rd: len(rd.ctas) != 1, lambda k, rd: f"One call to action only: {k.cta.split(':')[0].lower()}."),
    (lambda k, rd: bool(rd.repeats), lambda k, rd: "Say each thing once: no sentence twice."),
    (lambda k, rd: rd.crowd > 0, lambda k, rd: f"One idea each: keep the {FOCUS - 1} or {FOCUS} proof points that serve the idea and leave out the rest."),
    (lambda k, rd: bool(rd.hype or rd.unsupported), lambda k, rd: "Replace every superlative with a proof point from the brief."),
    (lambda k, rd: rd.title_over > 0, lambda k, rd: f"Keep the {k.label.lower()} under {k.title_limit or 60} characters."),
    (lambda k, rd: _words(rd.longest) > 22, lambda k, rd: "Keep every sentence under 20 words."),
    (lambda k, rd: not rd.person, lambda k, rd: "Put a person in it: a name, a place, one detail."),
    (lambda k, rd: bool(rd.jargon), lambda k, rd: f"Swap {', '.join(rd.jargon[:2])} for the words readers use."),
)  # fmt: skip


def _best_line(kit: Kit, text: str, into: str) -> str:
    """The line of `text` most worth carrying into `into`: a proof point or the brief's words that `into` lacks."""
    context = (
        r"(He|She|They|It|Then|That|This|Two|The star|The magnet)\b"  # lines that lean on what came before
    )
    lines = [u for u in _parse(text).units() if not _is_cta(u) and 4 <= _words(u) <= 20 and u.endswith(".")]
    lines = [
        u
        for u in lines
        if u not in into and not HYPE.search(u) and not _named(u) and not re.match(context, u)
    ]
    lines = [u for u in lines if not any(re.search(rx, u, re.I) for rx, _, _ in kit.rules)]
    gain = {u: _value(kit, u, into) - 2 * (not any(f.used_in(u) for f in kit.facts)) for u in lines}
    return max(lines, key=lambda u: (gain[u], -_words(u))) if any(g > 0 for g in gain.values()) else ""


def _direction(kit: Kit, reads: list[Reading], user: str, round_number: int, last: bool) -> str:
    """Two to four instructions from what the survivors still get wrong; the player's comes first."""
    items = [f"From the player: {user.strip().rstrip('.')}."] if user.strip() else []
    count = [(-sum(1 for rd in reads if test(kit, rd)), i) for i, (test, _) in enumerate(INSTRUCTIONS)]
    for _, i in sorted(x for x in count if x[0])[: 3 - len(items)]:
        test, say = INSTRUCTIONS[i]
        items.append(say(kit, next(rd for rd in reads if test(kit, rd))))
    if any(len(rd.used) < 2 for rd in reads):  # a thin survivor needs a fact; a full one needs none more
        gap = min(kit.facts, key=lambda f: sum(f in rd.used for rd in reads))
        items.append(f"Put this proof point to work: {gap.text}.")
    if len(items) < 2 or last:
        items.append(f"Sharpen the {kit.label.lower()}: one idea, in eight words or fewer.")
    head = "Final polish, nothing new:" if last else f"Round {round_number + 1} focus:"
    return _clip(f"{head} " + " ".join(f"({n}) {x}" for n, x in enumerate(items[:4], 1)), MAX_DIRECTION)


def _decide(
    kit: Kit, c: Shown, place: str, score: float, kept: list[Shown], rd: Reading, r: random.Random
) -> Decision:
    """One concept's fate, with the reason that decided it."""
    if c in kept:
        merit = max(_merits(kit, rd), key=lambda m: m[1], default=("", 0, "it holds the brief"))[2]
        said = r.choice(["{s:.1f}, {p}: {m}.", "Stays ({s:.1f}, {p}) because {m}."])
        reason = said.format(s=score, p=place, m=merit)
        return Decision(alias=c.alias, verdict="survive", reason=_clip(reason))
    twin = max(kept, key=lambda k: _overlap(kit, c.text, k.text))
    near, line = _overlap(kit, c.text, twin.text), _best_line(kit, c.text, twin.text)
    if near >= MERGE_OVERLAP and line:  # the same idea told twice: its best line lives on in the survivor
        reason = (
            f"{score:.1f}, below the line, but it tells {twin.alias}'s idea again ({near:.0%} shared words)"
        )
        reason += f"; its line {_quote(line, 12)} goes on in {twin.alias}."

        return Decision(alias=c.alias, verdict="merge", into=twin.alias, reason=_clip(reason))
    worst = max(_faults(kit, rd), key=lambda f: f[1] * (f[0] in HARD), default=("", 0, "it was outscored"))
    return Decision(alias=c.alias, verdict="eliminate", reason=_clip(f"{score:.1f}, out: {worst[2]}."))


def synthesis(brief: Brief, moderator: Persona, *, seed: int, round_number: int, rounds: int, concepts: Sequence[Shown],
              scores: EvaluationSubmitted, keep: int, direction_from_user: str) -> SynthesisSubmitted:  # fmt: skip
    """Keep the best `keep`, fold a weak concept into a survivor it repeats, eliminate the rest, set the focus."""
    kit = _kit(brief)
    r = rng.stream(seed, "message_lab:synthesis", round_number, moderator.id)
    score = {s.alias: s.score for s in scores.scores}
    ranked = sorted(concepts, key=lambda c: (-score.get(c.alias, 0.0), c.alias))
    kept = ranked[: max(1, min(keep, len(ranked)))]
    reads = {
        c.alias: _read(kit, brief, c.text, [o for o in concepts if o.alias != c.alias]) for c in concepts
    }
    decided = {}
    for i, c in enumerate(ranked):
        place = f"{ORDINALS[min(i, 7)]} of {len(ranked)}"
        decided[c.alias] = _decide(kit, c, place, score.get(c.alias, 0.0), kept, reads[c.alias], r)
    last = round_number >= rounds
    direction = _direction(kit, [reads[k.alias] for k in kept], direction_from_user, round_number, last)
    return SynthesisSubmitted(decisions=[decided[c.alias] for c in concepts], direction=direction)


# --- refining, pitching, placing -------------------------------------------------------------------------------

ADDS = {  # flag: (already there if, the line, where it goes: 1 after the opening or -1 before the ask, what changed)
    "person": (PERSON, "{person}", 1, "gave it a person, {who}"),
    "deadpan": ("|".join(map(re.escape, DEADPAN)), "{deadpan}", 1, "added one dry line"),
    "place": (r"(?i)\b(we|us)\b", "This is {place}'s {noun}, and we would like you in it.", -1, "spoke as {place}"),
    "honest": (r"honest", "One honest note: {honest}.", -1, "admitted the limitation"),
    "ending": (r"That can change", "Never {never_you}? That can change this week.", -1, "gave it an ending that lands"),
}  # fmt: skip
OWN_FIX = {"story": "ending", "wit": "deadpan", "trust": "honest", "collective": "place", "visual": "image"}


@dataclass
class Fixer:
    """An author revising one concept: what the notes and the direction asked, each change made and why."""

    kit: Kit
    method: str
    r: random.Random
    rd: Reading
    notes: Sequence[CritiqueNote]
    direction: str
    character: tuple[str, str, str] | None = None  # the person it may add: its seat's, nobody else's
    done: list[tuple[str, str]] = field(default_factory=list)  # (what changed, what it answers)
    added: list[str] = field(default_factory=list)  # lines this revision added: trimming leaves them be

    def because(self, flag: str) -> str:
        rx = dict(ASKS).get(flag, "^$")
        asked = [x for x in re.split(r"\(\d\)\s*", self.direction) if re.search(rx, x, re.I)]
        note = next((n.weakness for n in self.notes if re.search(rx, n.weakness, re.I)), "")
        return (
            f"the direction: {_quote(asked[-1], 10)}"
            if asked
            else f"a critic: {_quote(note, 12)}"
            if note
            else "my read"
        )

    def pressed(self) -> list[str]:
        """Flags in order of pressure: the direction counts double, then one for each critic who raised it."""
        weight: dict[str, int] = {}
        for text, w in [(self.direction, 2)] + [(n.weakness, 1) for n in self.notes]:
            for flag in _asks(self.kit, text)[0]:
                weight[flag] = weight.get(flag, 0) + w
        return sorted(weight, key=lambda f: (-weight[f], [a for a, _ in ASKS].index(f)))

    def repair(self) -> None:
        """What no author keeps: a forbidden claim, a superlative, an unsupported figure, a second ask, a long title."""
        kit, draft, rd = self.kit, self.rd.draft, self.rd
        for rule, line in rd.broken:
            draft.drop(line)
            self.done.append((f"cut {_quote(line, 8)}", f"the brief: {rule}"))
        for unit in [u for u in draft.units() if HYPE.search(u) or any(n in u for n in rd.unsupported)]:
            fixed = re.sub(r"\s+", " ", HYPE.sub("", unit)) if any(f.used_in(unit) for f in kit.facts) else ""
            for p in draft.paras:
                p.items = [fixed if x == unit else x for x in p.items if x != unit or fixed]
            self.done.append((f"took out {_quote(unit, 8)}", self.because("clean")))
        ctas = [u for u in draft.units() if _is_cta(u)]
        for extra in ctas[1:]:
            draft.drop(extra)
            self.done.append((f"dropped the second ask {_quote(extra, 6)}", self.because("one_cta")))
        if not ctas:
            draft.paras.append(Para([kit.cta]))
            self.done.append(("ended on one ask", self.because("one_cta")))
        if rd.title_over:
            draft.title = _title(kit, self.method, _values(kit, self.r), self.r)
            self.done.append((f"new {kit.label.lower()}: '{draft.title}'", self.because("title")))

    def improve(self, flag: str) -> bool:
        before = set(self.rd.draft.units())
        change = self._improve(flag, self.rd.draft, _values(self.kit, self.r, self.character))
        if change:
            new = [u for u in self.rd.draft.units() if u not in before]
            self.added += [
                u for u in new if any(f.used_in(u) for f in self.kit.facts)
            ]  # trimming spares new facts
            self.done.append((change, self.because(flag)))
        return bool(change)

    def _once(self, draft: Draft) -> str:
        """Every sentence said once: a later copy goes, whatever the notes asked."""
        again = _repeats(draft.units())
        for unit in again:
            draft.drop_repeat(unit)
        return f"said {_quote(again[0], 8)} once, not twice" if again else ""

    def _focus(self, draft: Draft) -> str:
        """Down to the proof points the idea needs: the ones that carry least go, the direction's own stay."""
        kit = self.kit
        named = {f for f in _asks(kit, self.direction)[1]}
        cut: list[str] = []
        while sum(f.used_in(draft.render(kit.label)) for f in kit.facts) > FOCUS:
            units = draft.units()
            free = [u for u in units[1:] if not _is_cta(u) and u not in self.added
                    and any(f.used_in(u) for f in kit.facts) and not any(f.used_in(u) for f in named)]  # fmt: skip
            if not free:
                break
            cut.append(
                min(free, key=lambda u: (_value(kit, u, " ".join(x for x in units if x != u)), -_words(u)))
            )
            draft.drop(cut[-1])
        draft.tidy()
        return (
            f"cut {len(cut)} proof point(s) the idea did not need, {_quote(cut[0], 6)} first" if cut else ""
        )

    def _fact(self, flag: str, draft: Draft, text: str) -> str:
        """The proof point the notes ask for: added while the idea has room, else in place of the weakest one; a
        price that is there but buried is moved up under the opening."""
        kit = self.kit
        units = draft.units()
        priced = [u for u in units if any(f.used_in(u) for f in kit.facts if "price" in f.tags)]
        if flag == "price" and priced and priced[0] not in units[:3] and not _is_cta(priced[0]):
            line = priced[0] if priced[0].endswith((".", "!", "?")) else priced[0] + "."
            draft.drop(priced[0])
            draft.paras.insert(min(1, len(draft.paras)), Para([line]))  # right after the opening
            draft.tidy()
            return f"moved the price up: {_quote(line, 8)}"
        named = [f for t in [self.direction, *(n.weakness for n in self.notes)] for f in _asks(kit, t)[1]]
        fits = {"step": {"easy", "exit"}, "price": {"price"}}.get(flag)
        pool = [f for f in named if not f.used_in(text)] or [
            f for f in kit.facts if not f.used_in(text) and (not fits or f.tags & fits)
        ]
        if not pool:
            return ""
        f = (
            pool[0]
            if pool[0] in named
            else _important(pool, {"step": "trust", "price": "offer"}.get(flag, self.method))
        )
        out = ""
        if (
            sum(g.used_in(text) for g in kit.facts) >= FOCUS
        ):  # one more would make a pile: it takes a weaker one's place
            spare = [u for u in units[1:] if not _is_cta(u) and u not in self.added and not any(g.used_in(u) for g in named)
                     and any(g.used_in(u) for g in kit.facts) and not (fits and any(g.used_in(u) and g.tags & fits for g in kit.facts))]  # fmt: skip
            if flag == "more_facts" or not spare:
                return ""
            out = min(spare, key=lambda u: (_value(kit, u, " ".join(x for x in units if x != u)), -_words(u)))
            draft.drop(out)
            draft.tidy()
        lists = [p for p in draft.paras if p.kind != "prose"]
        lists[-1].items.append(f.text) if lists else draft.add_before_cta(f.text + ".")
        self.added.append(f.text if lists else f.text + ".")
        said = f"the proof point {_quote(f.text, 8)}"
        return f"put {said} in place of {_quote(out, 6)}" if out else f"added {said}"

    def _improve(self, flag: str, draft: Draft, v: dict[str, str]) -> str:
        kit, text = self.kit, draft.render(self.kit.label)
        if flag == "focus":
            return self._focus(draft)
        if flag == "repeat":
            return self._once(draft)
        if flag in ("more_facts", "step", "price"):
            return self._fact(flag, draft, text)
        if flag == "same":  # sound less like the others: lean on the author's own method
            return self._improve(OWN_FIX.get(self.method, "person"), draft, v)
        if flag == "image" and not draft.image:
            draft.image = f"a {v['obj']} in close-up, shot from above on a plain background"
            return "added a picture"
        if flag == "title" and len(draft.title.split()) > 6:
            draft.title = _title(kit, self.method, v, self.r)
            return f"sharpened the {kit.label.lower()}: '{draft.title}'"
        if flag == "short" and not any(_split_long(u) != [u] for u in draft.units()):
            aside = r"\b([A-Z][a-z]+), who [^,.]+, "  # "Dev, who has just started at the surgery, read…"
            long = [u for u in draft.units() if _words(u) > 20 and re.search(aside, u)]
            for p in draft.paras:
                p.items = [re.sub(aside, r"\1 ", u, count=1) if u in long else u for u in p.items]
            return f"cut the aside in {_quote(long[0], 6)}" if long else ""
        if flag in ("short", "plainwords"):
            for p in draft.paras:
                p.items = (
                    [s for u in p.items for s in _split_long(u)]
                    if flag == "short"
                    else list(map(_plain, p.items))
                )
            return (
                ""
                if draft.render(kit.label) == text
                else {
                    "short": "split the long sentences",
                    "plainwords": "swapped insider words for everyday ones",
                }[flag]
            )
        there, template, where, change = ADDS.get(flag, ("", "", 0, ""))
        if not template or re.search(there, text) or not (line := _fill(template, v)):
            return ""
        draft.paras.insert(1, Para([line])) if where == 1 else draft.add_before_cta(line)
        return change.format(**v)  # fmt: skip


def refinement(brief: Brief, persona: Persona, *, seed: int, round_number: int, concept_id: str, current: Shown,
               notes: Sequence[CritiqueNote], direction: str, merged: Sequence[Shown], slot: int | None = None,
               seats: int = 1, block: int = 0, people: Sequence[str] = ()) -> RefinementSubmitted:  # fmt: skip
    """The next version: repair what breaks the brief, then the two things pressed hardest, fold in merged lines.
    A person it adds is its seat's (`slot`) first character not in `people`, those the other concepts name."""
    kit = _kit(brief)
    r = rng.stream(seed, "message_lab:refine", round_number, persona.id, concept_id)
    fix = Fixer(kit, _method(persona), r, _read(kit, brief, current.text), notes, direction)
    fix.character = _character(seed, slot, seats, block, people)
    draft = fix.rd.draft
    # what the moderator kept from a merged concept: its best line against this one, chosen before any change
    kept = [(m, line) for m in merged if (line := _best_line(kit, m.text, current.text))]
    fix.improve("repeat")
    fix.repair()
    improved = 0
    for flag in fix.pressed():  # two improvements a round: a concept gets better in steps, not all at once
        improved += improved < 2 and flag != "repeat" and fix.improve(flag)
    for m, line in kept:
        if not any(_norm(line) == _norm(u) for u in draft.units()):
            draft.add_before_cta(line)
            fix.added.append(line)
            fix.done.append(
                (f"folded in {_quote(line, 8)} from {m.alias}", f"{m.alias} was merged into this concept")
            )
    if fix.rd.crowd == 0 and (used := _read(kit, brief, draft.render(kit.label)).used) and len(used) > FOCUS:
        fix.improve("focus")  # a merge that tipped it into a pile: the idea still leads
    if not fix.done and len(fix.rd.used) < 2 and fix.rd.words + 25 < (kit.word_limit or 999):
        fix.improve("more_facts")  # nothing was asked: add the proof point it lacks, since it fits
    if kit.word_limit and (
        cut := _trim(kit, draft, kit.word_limit - 8 * ("trim" in fix.pressed()), fix.added)
    ):
        fix.done.append((f"cut {len(cut)} weaker line(s) to fit {kit.word_limit} words", fix.because("trim")))
    draft.tidy()
    fix.improve("repeat")  # whatever was added, nothing is said twice
    top = next((n.weakness for n in notes if "little to fix" not in n.weakness), "")
    nothing = (
        f"no change I could make answers {_quote(top, 10)}"
        if top
        else "the notes found little to fix"
        if notes
        else "the notes found nothing to fix"
    )
    done = fix.done or [("kept the copy as it stands", nothing)]
    changes, why = "; ".join(c for c, _ in done), "; ".join(dict.fromkeys(w for _, w in done))
    text = draft.render(kit.label)
    return RefinementSubmitted(
        concept=concept_id, name=current.name, text=text, changes=_clip(_cap(changes)), why=_clip(_cap(why))
    )


PITCHES = {  # (what the concept does, the author's closing line)
    "offer": ("'{name}' does one job in {words} words: it tells {aud} what they get and what it costs, then gives one link.",
              "Numbers first, one ask, nothing else."),
    "story": ("'{name}' is a small story about {person}, who has never {never}, until this {doc} arrives.",
              "Readers see themselves in it before they notice the ask."),
    "plain": ("'{name}' reads in one pass on a phone: the most important fact first, {n} proof points, one ask.",
              "Nothing in it needs decoding."),
    "wit": ("'{name}' gets a smile in the first line and then lets {n} facts do the selling.",
            "It is the one people forward, and the ask is dead straight."),
    "nudge": ("'{name}' makes the next step feel small, normal and easy to undo for {aud}.",
              "By the time they reach the ask, saying yes is the normal thing to do."),
    "collective": ("'{name}' speaks as us, not at them: {aud} are treated as part of this, not as a target.",
                   "It asks plainly, once."),
    "visual": ("'{name}' pairs one picture with a {title} headline, and it works from across a room.",
               "The body copy only confirms what the picture already said."),
    "trust": ("'{name}' says the doubt out loud first, then answers it with {n} facts anyone can check.",
              "It admits what it cannot promise, which is why the rest is believed."),
}  # fmt: skip


def presentation(
    brief: Brief,
    persona: Persona,
    *,
    seed: int,
    round_number: int,
    concept_id: str,
    current: Shown,
    score: float | None,
) -> PresentationGiven:
    """A short pitch in the author's voice: what the concept does for the audience and the goal."""
    kit, method = _kit(brief), _method(persona)
    r = rng.stream(seed, "message_lab:pitch", round_number, persona.id, concept_id)
    rd = _read(kit, brief, current.text)
    does, tail = PITCHES[method]
    never = _plain(_person(kit.never, "they"))
    title = f"{len(rd.draft.title.split())}-word"
    lines = [does.format(name=current.name, words=rd.words, aud=kit.audience, n=len(rd.used), title=title,
                         person=rd.person or "a reader like them", never=never, doc=_values(kit, r)["doc"])]  # fmt: skip
    lines += [
        r.choice(
            [f"Everything in it points one way: {kit.goal}.", f"It is built for one outcome: {kit.goal}."]
        ),
        tail,
    ]
    if score is not None:
        lines.append(
            r.choice(
                [
                    f"It stood at {score:.1f}; this version answers the notes.",
                    f"From {score:.1f}, it now fixes what the room flagged.",
                ]
            )
        )
    return PresentationGiven(concept=concept_id, text=_clip(" ".join(lines), MAX_PITCH))


def verdict(
    brief: Brief, moderator: Persona, *, seed: int, finalists: Sequence[tuple[str, Shown, float]]
) -> VerdictGiven:
    """The best score wins, up to two runners-up; the reasoning says what separated them. Level scores are
    separated by the evaluator's criteria read from the text as it now stands; concepts level on both are equally
    good by every measure the panel has, and the moderator's pick among them is drawn from the seed (an order by
    id or by persona would hand every tie to the same writer)."""
    kit = _kit(brief)
    read = {cid: _read(kit, brief, s.text) for cid, s, _ in finalists}
    r = rng.stream(seed, "message_lab:verdict", moderator.id)
    draw = {cid: r.random() for cid in sorted(read)}
    merit = {cid: round(_total(_criteria(kit, rd)), 2) for cid, rd in read.items()}
    ranked = sorted(finalists, key=lambda f: (-f[2], -merit[f[0]], draw[f[0]]))
    reads = [read[cid] for cid, _, _ in ranked]
    (win_id, win, win_score), merits = ranked[0], sorted(_merits(kit, reads[0]), key=lambda m: -m[1])[:2]
    text = (
        f"'{win.name}' wins at {win_score:.1f}: {' and '.join(m[2] for m in merits) or 'it met the brief'}."
    )
    level = [f for f in ranked[1:] if (f[2], merit[f[0]]) == (win_score, merit[win_id])]
    if level:
        text += f" '{level[0][1].name}' stood level with it on every criterion; the moderator's call went this way."
    for (_, s, sc), rd in zip(ranked[1:3], reads[1:3], strict=False):
        fault = max(_faults(kit, rd), key=lambda f: f[1] * (1 if f[0] in HARD else 0.5), default=None)
        text += f" '{s.name}' ({sc:.1f}) came close, but {fault[2] if fault else 'it said less with more'}."
    text += " It was the last concept standing, and it earned it." * (len(ranked) == 1)
    return VerdictGiven(
        winner=win_id, runners_up=[f[0] for f in ranked[1:3]], reasoning=_clip(text, MAX_DIRECTION)
    )
