"""Dialogue acts: what a message does besides taking positions — greets, thanks, asks, insults, or wanders off.

The judge (`reading.py`) reads what a message backs, opposes, offers and trades; this module reads the rest, so an
AI delegation can answer a question that names no option, return a greeting once, decline an off-topic question
and steer back to the issues, and name hostility instead of answering it warmly. Hostility also has effects the
engine applies (a partner insulted in a private talk cools for the rest of it, `judge.apply_message`; the chair
calls an insulting speaker to order in public debate, `machine._speech`), so the rules here are plain word lists,
deterministic and pure: the same message always reads the same way, whatever model wrote the replies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from simulations.kinds.negotiation import reading
from simulations.kinds.negotiation.scenario import Scenario

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# Words that call a person or a delegation names, or swear at the room: hostile whatever they are said of.
_INSULTS = (
    r"liars?", r"lying", r"fools", r"idiots?", r"morons?", r"imbeciles?", r"clowns?", r"hypocrites?",
    r"crooks?", r"cowards?", r"scum", r"losers?", r"shame on you", r"shut up", r"get lost", r"go to hell",
    r"damn you", r"ridiculous people", r"nobody trusts you", r"you people", r"bullshit", r"crap",
)  # fmt: skip
# Judgements that insult a person but only criticise a thing: "you are pathetic" is hostile, "this proposal is
# pathetic" is harsh disagreement, which a delegation answers on the substance.
_JUDGEMENTS = (
    r"stupid", r"idiotic", r"fool", r"foolish", r"pathetic", r"disgraceful", r"a disgrace", r"incompetent",
    r"dishonest", r"ignorant", r"shameless", r"corrupt", r"cowardly", r"hypocritical", r"damned",
)  # fmt: skip
_HOSTILE = re.compile(r"\b(?:" + "|".join(_INSULTS) + r")\b", re.IGNORECASE)
_JUDGING = re.compile(r"\b(?:" + "|".join(_JUDGEMENTS) + r")\b", re.IGNORECASE)
# What a judgement is said of: the nearest of these before it in its clause (or the noun right after it).
_PERSON = (
    r"you", r"your (?:delegation|government|country|side|team|people|minister|negotiators?)", r"yourselves?",
    r"they", r"them", r"he", r"she", r"him", r"her", r"people", r"persons?", r"delegat\w*", r"governments?",
    r"ministers?", r"negotiators?", r"representatives?", r"colleagues?", r"chair(?:man|woman|person)?", r"officials?",
    r"leaders?", r"whoever", r"anyone", r"everyone", r"those who", r"men", r"women", r"guys?",
)  # fmt: skip
_THING = (
    r"it", r"this", r"that", r"these", r"those", r"what", r"proposals?", r"ideas?", r"texts?", r"drafts?",
    r"plans?", r"options?", r"offers?", r"deadlines?", r"treat(?:y|ies)", r"instruments?", r"conventions?",
    r"arguments?", r"positions?", r"approach(?:es)?", r"suggestions?", r"compromises?", r"figures?",
    r"numbers?", r"clauses?", r"lists?", r"terms?", r"deals?", r"packages?", r"measures?", r"rules?", r"limits?",
    r"targets?", r"funds?", r"money", r"sums?", r"amounts?", r"excuses?", r"claims?", r"reasoning", r"logic",
    r"policy", r"policies", r"answers?", r"replies", r"reply", r"speech(?:es)?", r"statements?", r"words?",
    r"things?", r"mistakes?", r"ways?", r"say", r"do",
)  # fmt: skip
_PERSON_RE = re.compile(r"\b(?:" + "|".join(_PERSON) + r")\b", re.IGNORECASE)
_THING_RE = re.compile(r"\b(?:" + "|".join(_THING) + r")\b", re.IGNORECASE)
_GLUE = re.compile(
    r"and|or|but|to|of|for|in|on|at|with|by|as|is|are|was|were|be|that|which|who|if|so|than|because",
    re.IGNORECASE,
)
_CLAUSE_BREAK = re.compile(r"[.;:!?]|,\s+(?:and|but|so|because|while|which)\b|\b(?:because|although|but)\b")
_GREETING = re.compile(
    r"^\s*(?:hello|hi|hey|good (?:morning|afternoon|evening|day)|greetings|dear (?:colleagues?|friends?)|"
    r"(?:it is|it's) (?:a pleasure|good) to (?:meet|see|talk))\b",
    re.IGNORECASE,
)
_THANKS = re.compile(r"\b(?:thank you|thanks|many thanks|we are grateful|we appreciate)\b", re.IGNORECASE)
_FAREWELL = re.compile(r"\b(?:goodbye|good-bye|bye|farewell|see you|until next time)\b", re.IGNORECASE)
# A question that asks what the listener wants in return, or what it would take: answered with a concrete ask.
_PRICE = re.compile(
    r"\b(?:what (?:would|do|does|will|could|should) (?:you|your \w+|the \w+|\w+) (?:want|need|ask|expect|require)|"
    r"in return|in exchange|what would it take|what (?:can|could|should) we (?:do|offer|give)|"
    r"how (?:can|could) we (?:help|win|earn|get|convince))\b",
    re.IGNORECASE,
)


def asks_price(question: str) -> bool:
    """Whether a question asks what the listener wants in return ("what would the Union want from us?")."""
    return bool(_PRICE.search(question))


# A question that asks what matters most to the listener: answered with the issue it holds firmest.
_PRIORITY = re.compile(
    r"\b(?:what (?:matters|counts) (?:most|the most)|(?:your|the) (?:main |biggest |top |first |chief )?"
    r"(?:priority|priorities|concern|concerns|red lines?)|what (?:do|does) (?:you|your \w+|\w+) care about|"
    r"what is (?:most|the most) important|what (?:do|does) (?:you|your \w+|\w+) (?:most )?(?:want|need) (?:most|above all))",
    re.IGNORECASE,
)


def asks_priority(question: str) -> bool:
    """Whether a question asks what matters most to the listener ("what is your main concern here?")."""
    return bool(_PRIORITY.search(question)) and not asks_price(question)


# Taking note, promising to reflect, keeping the door open: courtesy that proposes nothing and needs no reading.
_ACKNOWLEDGES = re.compile(
    r"\b(?:we hear you|we (?:have )?noted?\b|we understand (?:you|your|that|this)|"
    r"(?:take|bring|carry) (?:\w+ ){0,2}(?:points?|views?|proposals?|ideas?|this|that|it) back|"
    r"(?:consider|reflect on|think about|weigh) (?:them|it|this|that|these|what you)|"
    r"keep (?:this|the|our) (?:channel|door|line|dialogue) open|stay in touch|(?:talk|speak) again|"
    r"think (?:it|this|that) over|(?:report|relay) (?:\w+ ){0,2}to our (?:capital|government|team))",
    re.IGNORECASE,
)
# Words that belong to any negotiation on this committee's work, whatever the scenario: a message using them is
# about the talks even when it names no option ("what is your view on the treaty?").
_NEGOTIATION_WORDS = (
    "treaty", "convention", "instrument", "negotiat", "agreement", "agree", "compromis", "position", "support",
    "propos", "vote", "deal", "committee", "issue", "option", "offer", "delegation", "oppose", "accept", "trade",
    "consensus", "plenary", "debate", "priorit", "concern", "red line", "condition", "in return", "exchange",
    "view", "stance", "lean", "flexib", "fund", "financ", "money",
)  # fmt: skip
_NEGOTIATION = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in _NEGOTIATION_WORDS) + ")", re.IGNORECASE)
_STOP = {
    "about", "after", "their", "there", "these", "those", "which", "within", "other", "under", "every",
    # Words of option labels too common in any sentence to name their issue on their own.
    "national", "action", "plans", "measures", "nature", "added", "agreed", "small", "scale",
}  # fmt: skip


@dataclass(frozen=True)
class Acts:
    """What one message does, beyond what it backs."""

    greeting: bool = False
    thanks: bool = False
    farewell: bool = False
    acknowledges: bool = False  # takes note, promises to reflect, keeps the door open
    hostile: list[str] = field(default_factory=list)  # the insulting words, as written
    questions: list[str] = field(default_factory=list)  # every question sentence
    off_topic_questions: list[str] = field(default_factory=list)  # questions that touch nothing negotiated
    on_topic: bool = False  # the message touches the negotiation at all (an option, an offer or its subject)
    options_named: list[str] = field(default_factory=list)
    offers_named: list[str] = field(default_factory=list)
    issues_named: list[str] = field(default_factory=list)  # issues named by their subject, not by an option

    @property
    def social_only(self) -> bool:
        """A greeting, thanks or goodbye and nothing else to answer."""
        return (self.greeting or self.thanks or self.farewell) and not self.on_topic and not self.questions


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def hostile_words(text: str, names: re.Pattern[str] | None = None) -> list[str]:
    """The hostile words of a text, as written (lower case): insults and swearing wherever they stand, and
    judgements ("pathetic", "stupid") only when said of a person or a delegation (`names`, the scenario's seats)."""
    found = [(m.start(), m.group(0).lower()) for m in _HOSTILE.finditer(text)]
    found += [(m.start(), m.group(0).lower()) for m in _JUDGING.finditer(text) if _of_person(text, m, names)]
    return list(dict.fromkeys(word for _, word in sorted(found)))


def is_hostile(text: str, names: re.Pattern[str] | None = None) -> bool:
    return bool(hostile_words(text, names))


def _of_person(text: str, judgement: re.Match[str], names: re.Pattern[str] | None) -> bool:
    """Whether a judgement is said of a person: the nearest subject before it in its clause is one ("the
    delegates of China are stupid", "you are pathetic"), or the noun right after it is ("a pathetic delegation").
    Said of nothing named ("Pathetic!"), it is taken as said to the listener."""
    for noun in re.findall(r"\w+", text[judgement.end() :])[:2]:  # "a pathetic (little) delegation"
        if _PERSON_RE.fullmatch(noun) or (names is not None and names.fullmatch(noun.lower())):
            return True
        if _THING_RE.fullmatch(noun) or _GLUE.fullmatch(noun):
            break
    before = text[: judgement.start()]
    breaks = list(_CLAUSE_BREAK.finditer(before))
    clause_start = breaks[-1].end() if breaks else 0
    clause = before[clause_start:]
    nearest: tuple[int, bool] | None = None
    patterns = [(_PERSON_RE, True), (_THING_RE, False)] + ([(names, True)] if names is not None else [])
    for pattern, person in patterns:
        for m in pattern.finditer(clause.lower()):  # the names' patterns are lower case
            if nearest is None or m.end() > nearest[0]:
                nearest = (m.end(), person)
    return True if nearest is None else nearest[1]


def names_pattern(scenario: Scenario) -> re.Pattern[str]:
    """Any seat of the scenario named, in lower-case text: its name, what it is also called, or its id where that
    is an acronym."""
    return reading.lexicon(scenario).any_name


def _subject_words(scenario: Scenario) -> dict[str, str]:
    """Word stems that name an issue's subject (from its title and its options' labels) -> the issue id."""
    memo = scenario.memo()
    key = ("dialogue-subjects",)
    found = memo.get(key)
    if found is None:
        # A stem shared by two issues, or by the whole scenario's title ("mercury"), names no one issue.
        common = {w[:7] for w in re.findall(r"[a-z][a-z]+", scenario.title.lower())}
        issues: dict[str, set[str]] = {}
        for issue in scenario.issues:
            texts = [issue.title, *(o.label for o in issue.options)]
            for text in texts:
                for word in re.findall(r"[a-z][a-z]+", text.lower()):
                    if len(word) >= 5 and word not in _STOP and word[:7] not in common:
                        issues.setdefault(word[:7], set()).add(issue.id)
        found = {stem: next(iter(ids)) for stem, ids in issues.items() if len(ids) == 1}
        memo[key] = found
    assert isinstance(found, dict)
    return found


def issues_named(scenario: Scenario, text: str) -> list[str]:
    subjects = _subject_words(scenario)
    out: list[str] = []
    for word in re.findall(r"[a-z][a-z]+", text.lower()):
        issue = subjects.get(word[:7]) if len(word) >= 5 else None
        if issue and issue not in out:
            out.append(issue)
    return out


def _offer_words(scenario: Scenario) -> dict[str, str]:
    """Content words of each offer's label and keywords (7-letter stems) -> the offer id: "technology" alludes to
    the transfer of technology even when the judge, rightly strict, reads no offer in the sentence."""
    memo = scenario.memo()
    key = ("dialogue-offer-words",)
    found = memo.get(key)
    if found is None:
        found = {}
        counts: dict[str, set[str]] = {}
        for offer in scenario.offers:
            for text in (offer.label, *offer.keywords):
                for word in re.findall(r"[a-z][a-z-]+", text.lower()):
                    if len(word) >= 6 and word not in _STOP:
                        counts.setdefault(word[:7], set()).add(offer.id)
        found = {w: next(iter(ids)) for w, ids in counts.items() if len(ids) == 1}  # shared words name none
        memo[key] = found
    assert isinstance(found, dict)
    return found


def offers_alluded(scenario: Scenario, text: str) -> list[str]:
    """Offers a text names or alludes to by one of their own words, in order of appearance."""
    words = _offer_words(scenario)
    out = list(reading.named(scenario, text)[1])
    for word in re.findall(r"[a-z][a-z-]+", text.lower()):
        offer = words.get(word[:7]) if len(word) >= 6 else None
        if offer and offer not in out:
            out.append(offer)
    return out


def touches(scenario: Scenario, text: str) -> bool:
    """Whether a text is about the negotiation at all: it names an option, an offer, an issue's subject, a
    delegation or the committee's work."""
    lowered = text.lower()
    options, _ = reading.named(scenario, text)
    if options or offers_alluded(scenario, text) or issues_named(scenario, text):
        return True
    if "mercury" in lowered or _NEGOTIATION.search(text):
        return True
    return any(scenario.display_name(r).lower() in lowered for r in scenario.role_ids)


def read_acts(scenario: Scenario, text: str) -> Acts:
    """The dialogue acts of a message (memoised per scenario: prompts read older entries again)."""
    memo = scenario.memo()
    key = ("acts", text)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _read(scenario, text)
    assert isinstance(found, Acts)
    return found


def _read(scenario: Scenario, text: str) -> Acts:
    said = sentences(text)
    questions = [s for s in said if s.endswith("?")]
    options, _ = reading.named(scenario, text)
    offers = offers_alluded(scenario, text)
    return Acts(
        greeting=bool(said) and bool(_GREETING.search(said[0])),
        thanks=bool(_THANKS.search(text)),
        farewell=bool(_FAREWELL.search(text)),
        acknowledges=bool(_ACKNOWLEDGES.search(text)),
        hostile=hostile_words(text, names_pattern(scenario)),
        questions=questions,
        off_topic_questions=[q for q in questions if not touches(scenario, q)],
        on_topic=touches(scenario, text),
        options_named=options,
        offers_named=offers,
        issues_named=issues_named(scenario, text),
    )


# The chair's call to order after an insulting speech: its own voice, public, naming the speaker.
CALL_TO_ORDER = [
    "Order, please. I remind the delegation of {speaker} that this committee addresses positions, not persons; "
    "personal attacks have no place in this room.",
    "I must call the delegation of {speaker} to order. Delegations will treat one another with respect; we debate "
    "proposals here, not the character of colleagues.",
    "The Chair calls {speaker} to order. Insults do not advance the work of this committee, and I ask all "
    "delegations to keep to the substance.",
]


# Engaging the previous speaker's argument in debate: its reason quoted, then agreement or difference. Each frame
# is checked by the judge before a seat may use it (situation.py), so the quoted reason never reads as the
# seat's own stance on anything else.
ENGAGE_AGREE = [
    "{them} argues that {reason}, and {me} agrees.",
    "{me} agrees with {them} that {reason}.",
]
ENGAGE_DIFFER = [
    "{them} argues that {reason}; {me} is not persuaded.",
    "{me} has heard {them} argue that {reason}, but sees it differently.",
    "{me} takes a different view from {them}, who argues that {reason}.",
]
# Where a reason clause is cut: what follows these is a second thought, not the reason.
_CUTS = ("; ", " but ", ", so ", ", and ", ", because ", ", which ", ", while ", ", whereas ", " - ", ": ")


def reason_clause(sentence: str) -> str:
    """The first clause of an argument, without its final stop, ready to follow "argues that"."""
    text = sentence.strip().rstrip(".!")
    for cut in _CUTS:
        at = text.find(cut)
        if at >= 25:
            text = text[:at]
    return text.strip()
