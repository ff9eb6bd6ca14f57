"""The rule-based reader behind the stance judge: what one message says, clause by clause, for its speaker.

Pure and deterministic. A message is cut into sentences and each sentence into clauses (on ";", "but", "while",
"whereas" and on "and" where a new verb starts), and each clause is read on its own:

- **whose words**: a clause that reports someone else ("Canada supports 2.1", "we have heard Brazil on 2.2",
  "as China argued", "some delegations want ...") says nothing about the speaker; a question asks the listener and
  states nothing either (offers and asks in it still count);
- **which options**: by id ("4.1"), label and the scenario's keywords (word stems, so "controlling emissions"
  matches the keyword "control emissions"); a mention inside a condition ("if emissions come into scope") is
  not a stance on that option;
- **which way**: an explicit stance verb ("support", "back", "can accept", "could live with", "oppose",
  "reject"), turned round by a negation before it ("cannot accept", "will not support"; "will not oppose" and
  "will not stand in the way of" are concessions, read as support); without one, the clause's evaluation of the
  option ("is a sensible and proven obligation" / "would weaken the treaty"); nothing when neither is there;
- **on what terms**: support in a clause with a condition ("if", "provided", "as long as", "with ... guaranteed")
  is conditional; offers named in the condition are asks;
- **offers and asks**: an offer the speaker commits to ("we are ready to provide financing") is an offer; one it
  asks for, needs, or makes a condition ("without a dedicated fund we cannot ...") is an ask;
- **trades**: "if you support X, we will support Y" (and its reorderings) is a trade, nothing else.

Within one issue, explicit stances outrank evaluations, and a clause after "but" outranks the clause it answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .scenario import Scenario

# --- lexicon --------------------------------------------------------------------------------------------------

# Verbs by which a speaker takes a side. Order matters only for readability; matching is by regex alternation.
SUPPORT_VERBS = (
    r"support\w*", r"back(?:s|ed|ing)?", r"favou?r(?:s|ed)?", r"prefer(?:s|red)?", r"endorse[sd]?",
    r"accept(?:s|ed)?", r"want(?:s|ed)?", r"call(?:s|ed)? for", r"champion(?:s|ed)?", r"advocate[sd]?",
    r"insist(?:s|ed)? on", r"push(?:es)? for", r"vote (?:for|yes)", r"agree(?:s|d)? (?:to|with|on)",
    r"join(?:s|ed)?", r"go along with", r"live with", r"stand behind", r"speak for", r"argue for",
    r"defend(?:s|ed)?", r"seek(?:s)?", r"ask(?:s|ed)? for", r"embrace[sd]?", r"stand by", r"welcome[sd]?",
    r"recommend(?:s|ed)?", r"tolerate[sd]?", r"be open to", r"are open to", r"is open to", r"remain open to",
)  # fmt: skip
OPPOSE_VERBS = (
    r"oppose[sd]?", r"reject(?:s|ed)?", r"resist(?:s|ed)?", r"object(?:s|ed)? to", r"refuse[sd]? to accept",
    r"block(?:s|ed)?", r"vote against", r"vote no on", r"stand (?:firmly )?against", r"are against",
    r"is against", r"argue against", r"rule out", r"rules out", r"veto(?:es|ed)?", r"fight(?:s)? against",
)  # fmt: skip
# "will not stand in the way of X": a negated obstruction, i.e. a concession.
CONCESSIONS = (
    r"(?:will|would|shall|do|does|did) not (?:stand in the way of|block|oppose|object to|resist|fight)",
    r"(?:won't|wouldn't|don't|doesn't) (?:stand in the way of|block|oppose|object to|resist)",
    r"no (?:longer )?(?:objection|opposition) to", r"not (?:be )?(?:an )?obstacle to",
)  # fmt: skip
NEGATIONS = (
    r"not", r"never", r"cannot", r"can't", r"won't", r"wouldn't", r"don't", r"doesn't", r"couldn't",
    r"no longer", r"unable to", r"neither", r"nor", r"hardly",
)  # fmt: skip
CONDITIONS = (
    r"if", r"provided", r"providing", r"as long as", r"so long as", r"on condition", r"only when", r"unless",
    r"once", r"on the understanding", r"in return for", r"subject to", r"assuming",
)  # fmt: skip
# Words that introduce someone else's position, not the speaker's.
REPORT_VERBS = (
    r"said", r"says", r"say", r"argued", r"argues", r"argue", r"stated", r"states", r"suggested", r"suggests",
    r"claimed", r"claims", r"proposed", r"proposes", r"told", r"tells", r"mentioned", r"noted", r"insisted",
    r"made the case", r"spoke", r"speaks", r"called for", r"calls for", r"asked for", r"asks for", r"pressed",
    r"wants", r"want", r"prefer", r"prefers", r"support", r"supports", r"supported", r"favour", r"favours",
    r"back", r"backs", r"backed", r"oppose", r"opposes", r"opposed", r"reject", r"rejects", r"rejected",
    r"accept", r"accepts", r"accepted", r"defended", r"defends", r"put forward", r"is pushing", r"are pushing",
    r"has argued", r"have argued", r"has said", r"have said", r"has called", r"have called", r"is for",
    r"are for", r"would like", r"seems to", r"seem to", r"appears to", r"will support", r"will oppose",
    r"can accept", r"could accept", r"cannot accept", r"can support", r"could support", r"hope[sd]? for",
)  # fmt: skip
OTHERS = (
    r"you", r"your delegation", r"your government", r"your side", r"they", r"some delegations",
    r"some countries", r"other delegations", r"others", r"many delegations", r"several delegations",
    r"those who", r"those delegations", r"some", r"a few delegations", r"the chair", r"some members",
    r"other countries", r"many countries", r"some parties", r"several countries", r"the other side",
    r"both", r"everyone", r"the room",
)  # fmt: skip
# Frames by which the speaker acknowledges what it heard without taking it on.
HEARD_FRAMES = (
    r"we have heard", r"we heard", r"we hear", r"we take (?:careful |good )?note", r"we note", r"we have noted",
    r"we noted", r"we listened to", r"we have listened to", r"we understand why", r"we understand those",
    r"understands why", r"understand why", r"recognises that some", r"recognizes that some",
    r"recognise that some", r"we would listen to", r"we are aware that", r"we thank", r"thank you",
    r"we acknowledge (?:the|what)", r"we welcome what", r"we respect the views", r"understands those",
    r"as (?:\w+ ){0,3}(?:said|argued|put it|noted|suggested)", r"according to",
)  # fmt: skip
OWN_SUBJECTS = (
    r"we", r"our delegation", r"our coalition", r"our members", r"our industry", r"our association",
    r"our government", r"my delegation", r"i", r"our country", r"our side", r"my government", r"us",
    r"our organisation", r"our organization", r"our programme", r"our network", r"our scientists",
)  # fmt: skip
# Commitment to provide something (for offers).
COMMIT = (
    r"offer\w*", r"provid\w*", r"commit\w*", r"pledg\w*", r"will", r"ready to", r"prepared to", r"guarante\w*",
    r"contribut\w*", r"put\w* (?:\w+ )?on the table", r"fund\w*", r"financ\w*", r"support\w*", r"back\w*",
    r"propos\w*", r"establish\w*", r"make available", r"give", r"bring", r"secure", r"deliver", r"help pay",
    r"pay for", r"willing to", r"can", r"shall", r"are putting", r"is putting", r"put forward",
)  # fmt: skip
# Needing something (for asks).
NEED = (
    r"need\w*", r"require\w*", r"ask\w*", r"request\w*", r"call\w* for", r"expect\w*", r"insist\w*", r"must",
    r"depend\w* on", r"without", r"unless", r"only with", r"looking for", r"demand\w*", r"urge\w*",
    r"essential", r"cannot do without", r"rel(?:y|ies) on",
)  # fmt: skip
# Evaluations: what a clause says about the option it names (when it takes no explicit side).
POSITIVE = (
    r"sensible", r"proven", r"reasonable", r"practical", r"essential", r"only way", r"only answer",
    r"only treaty", r"only common", r"fairest", r"fair", r"workable", r"feasible", r"affordable", r"certainty",
    r"clarity", r"solid", r"sound", r"strong (?:market )?signal", r"clearest signal", r"clear signal",
    r"one clear signal", r"achievable", r"valuable", r"value", r"useful", r"deserve\w*", r"belong\w*",
    r"levels? the playing field", r"is how", r"benefit\w*", r"protect\w*", r"respect\w*", r"allow\w*",
    r"\blet\b", r"\blets\b", r"deliver\w*", r"enforceable", r"measurable", r"quick\w*", r"most direct",
    r"do more", r"target\w*", r"match\w*", r"guarantee\w*", r"right", r"best", r"better", r"surest",
    r"real results", r"results", r"progress", r"works?\b", r"can work", r"help\w*", r"strong", r"effective",
    r"pragmatic", r"first step", r"good", r"gives", r"give", r"give us", r"turns?", r"ensures?", r"needed",
    r"necessary", r"urgent\w*", r"predictable", r"easy to implement", r"easier to", r"more honest",
    r"solid foundation", r"foundation", r"compromise", r"realistic", r"duty", r"responsib\w*", r"worth",
    r"tool", r"support", r"obvious candidates", r"cut\w*", r"reduc\w*", r"responsible", r"careful",
    r"acceptable", r"tolerable", r"should", r"must", r"show\w*", r"room", r"moves? quickly", r"faster",
    r"make sure", r"prepare", r"basis", r"evidence base", r"scientifically", r"makes? sense",
)  # fmt: skip
NEGATIVE = (
    r"fail\w*", r"weaken\w*", r"undermin\w*", r"ignor\w*", r"miss\w*", r"not enough", r"never", r"little",
    r"nothing", r"burden\w*", r"harm\w*", r"risk\w*", r"delay\w*", r"excuse", r"hollow", r"empty", r"weak\b",
    r"unfair\w*", r"impossible", r"difficult", r"struggl\w*", r"disrupt\w*", r"destroy\w*", r"close factories",
    r"slow\w*", r"freez\w*", r"frozen", r"outdated", r"lose\w*", r"loses", r"poison\w*", r"unchecked",
    r"leak", r"shield\w*", r"betray\w*", r"upside down", r"punish\w*", r"constrain\w*", r"worr\w*",
    r"concern\w*", r"wary", r"cautious", r"object\w*", r"hard to", r"only as good as", r"mean\w* little",
    r"appearance of action", r"paper", r"not reduced", r"not fallen", r"has not", r"have not", r"had their",
    r"more of the same", r"shortcoming", r"weakness", r"no way", r"no guaranteed", r"no common",
    r"oblige nobody", r"nobody", r"would not", r"will not", r"cannot", r"should not", r"must not", r"not\b",
    r"costs?", r"cost billions", r"raise\w*", r"force\w*", r"push\w*", r"drive\w*", r"dump\w*", r"menu",
    r"riddled", r"lowest common denominator", r"too few", r"too quickly", r"distant dates", r"excluding",
    r"stripped", r"in name only", r"empty shell", r"vague", r"open-ended", r"sweeping", r"loaded",
    r"rigid\w*", r"overnight", r"underground", r"unlimited", r"indefinite\w*", r"postpon\w*", r"waiting",
    r"wait", r"without", r"busy", r"unprotected", r"betray", r"insufficient", r"fell short", r"falls short",
    r"too slow", r"moved slowly", r"still rising", r"keeps? rising", r"trend", r"carry on", r"at a disadvantage",
    r"unacceptable", r"impose\w*", r"offenders", r"informality", r"interference", r"neglect\w*", r"outrun",
    r"doing nothing", r"do nothing", r"inaction", r"exposed", r"unaddressed", r"upset", r"heavy costs",
    r"consequences", r"closures", r"only obliges", r"in haste", r"catch", r"pull apart", r"reward",
    r"lowest", r"short list", r"no alternative", r"no affordable", r"no proven", r"escape\w*", r"paperwork",
    r"hard questions", r"avoid\w*", r"invite", r"exclude\w*",
)  # fmt: skip

_WORD = re.compile(r"[a-z0-9][a-z0-9.'-]*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _alt(words: tuple[str, ...]) -> str:
    return "(?:" + "|".join(words) + ")"


_SUPPORT_RE = re.compile(rf"\b{_alt(SUPPORT_VERBS)}\b")
_OPPOSE_RE = re.compile(rf"\b{_alt(OPPOSE_VERBS)}\b")
_CONCESSION_RE = re.compile(rf"\b{_alt(CONCESSIONS)}\b")
_NEGATION_RE = re.compile(rf"\b{_alt(NEGATIONS)}\b|n't\b")
_CONDITION_RE = re.compile(rf"\b{_alt(CONDITIONS)}\b")
_HEARD_RE = re.compile(rf"\b{_alt(HEARD_FRAMES)}\b")
_COMMIT_RE = re.compile(rf"\b{_alt(COMMIT)}")
_NEED_RE = re.compile(rf"\b{_alt(NEED)}")
_POSITIVE_RE = re.compile(rf"\b{_alt(POSITIVE)}")
_NEGATIVE_RE = re.compile(rf"\b{_alt(NEGATIVE)}")
_OWN_RE = re.compile(rf"^\W*(?:\w+ ){{0,4}}?{_alt(OWN_SUBJECTS)}\b")
_CLAUSE_SPLIT = re.compile(
    r"\s*;\s*|,?\s+\bbut\b\s+|,\s+(?:while|whereas|although|though|yet)\s+|\s+\bwhereas\b\s+"
)
# "and" starts a new clause when a verb or a subject of its own follows it.
_AND_SPLIT = re.compile(
    r",?\s+and\s+(?=(?:(?:we|our delegation|i|they|it|this|that)\b|(?:also\s+)?(?:will|would|can|could|cannot|do|does|must|shall|remain|"
    r"strongly\s+|firmly\s+|fully\s+)?(?:not\s+)?(?:support|oppose|reject|back|favou?r|accept|resist|object|prefer|"
    r"welcome|want|call|insist|endorse|refuse|block|live|agree|join|stand|go)\b))"
)
_CONDITION_LEAD = re.compile(
    r"^\s*(?:if|provided(?: that)?|as long as|so long as|only if|unless|once|assuming|on condition that)\b[^,]*,\s*"
)
_CONDITION_TAIL = re.compile(
    r",?\s*\b(?:if|provided(?: that)?|providing|as long as|so long as|only if|unless|once|on condition that|"
    r"on the understanding that|assuming)\b.*$"
)
_WITH_LEAD = re.compile(r"^\s*(?:only )?with\b[^,]*,\s*")
_TRADE_VERB = r"(?:support|back|vote for|vote yes on|accept|agree to|join us on|go along with)"


@dataclass
class Reading:
    """Sets keyed by issue id, for one message."""

    support: dict[str, set[str]] = field(default_factory=dict)
    oppose: dict[str, set[str]] = field(default_factory=dict)
    conditional: dict[str, set[str]] = field(default_factory=dict)
    offers: set[str] = field(default_factory=set)
    asks: set[str] = field(default_factory=set)
    trades: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class _Pattern:
    issue: str
    option: str
    regex: re.Pattern[str]
    named: bool  # by id or label (a keyword is only an allusion)
    allusion: bool = False  # counts only while the option's issue is under discussion


@dataclass(frozen=True)
class Lexicon:
    options: tuple[_Pattern, ...]
    offers: tuple[tuple[str, re.Pattern[str]], ...]
    names: dict[str, re.Pattern[str]]  # role id -> how it is named
    issue_of: dict[str, str]


def _stem(word: str) -> str:
    if re.fullmatch(r"[\d.]+", word):
        return re.escape(word) + r"(?!\d)"
    stem = word
    for suffix in ("ing", "ies", "ed", "es", "s", "e", "y"):
        if len(stem) > 4 and stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    return re.escape(stem) + r"[\w-]*"


# Small words a phrase may carry between its keywords ("leave air emissions" for "leave emissions").
_FILLER = (
    r"(?:(?:a|an|the|of|on|for|to|from|air|all|its|their|our|new|mercury|its|any|every|out|these|this)\s+)?"
)


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    words = _WORD.findall(phrase.lower())
    body = (r"\s+" + _FILLER).join(_stem(w) for w in words)
    return re.compile(rf"(?<![\w.]){body}")


def lexicon(scenario: Scenario) -> Lexicon:
    memo = scenario.memo()
    found = memo.get(("reading-lexicon",))
    if isinstance(found, Lexicon):
        return found
    options: list[_Pattern] = []
    issue_of: dict[str, str] = {}
    for issue in scenario.issues:
        for option in issue.options:
            issue_of[option.id] = issue.id
            id_re = re.compile(rf"(?<![\d.]){re.escape(option.id)}(?![\d])")
            options.append(_Pattern(issue.id, option.id, id_re, True))
            options.append(_Pattern(issue.id, option.id, phrase_pattern(option.label), True))
            for keyword in option.keywords:
                options.append(_Pattern(issue.id, option.id, phrase_pattern(keyword), False))
            for allusion in option.allusions:
                options.append(_Pattern(issue.id, option.id, phrase_pattern(allusion), False, True))
    offers = tuple(
        (offer.id, re.compile("|".join(phrase_pattern(k).pattern for k in [offer.label, *offer.keywords])))
        for offer in scenario.offers
    )
    names: dict[str, re.Pattern[str]] = {}
    for role in [*scenario.roles]:
        spellings = {role.name.lower(), role.id.lower()}
        spellings |= {s for s in (role.name.lower().removeprefix("the ").split(" (")[0],) if s}
        names[role.id] = re.compile(
            r"\b(?:the )?(?:" + "|".join(re.escape(s) for s in sorted(spellings)) + r")\b"
        )
    names[scenario.chair.id] = re.compile(
        r"\b(?:the chair|"
        + re.escape(scenario.chair.name.lower())
        + "|"
        + re.escape(scenario.chair.id.lower())
        + r")\b"
    )
    found = Lexicon(tuple(options), offers, names, issue_of)
    memo[("reading-lexicon",)] = found
    return found


# --- reading --------------------------------------------------------------------------------------------------


@dataclass
class _Mention:
    issue: str
    option: str
    start: int
    end: int
    named: bool


def _mentions(lex: Lexicon, text: str, issue: str | None) -> list[_Mention]:
    found: list[_Mention] = []
    for pattern in lex.options:
        if pattern.allusion and pattern.issue != issue:
            continue
        for m in pattern.regex.finditer(text):
            found.append(_Mention(pattern.issue, pattern.option, m.start(), m.end(), pattern.named))
    # A mention inside a longer mention of another option is part of that one.
    kept = [
        m
        for m in found
        if not any(
            o is not m
            and o.option != m.option
            and o.start <= m.start
            and m.end <= o.end
            and (o.end - o.start) > (m.end - m.start)
            for o in found
        )
    ]
    return kept


def _offers_in(lex: Lexicon, text: str) -> list[tuple[str, int]]:
    out = []
    for offer_id, regex in lex.offers:
        m = regex.search(text)
        if m:
            out.append((offer_id, m.start()))
    return out


def read(scenario: Scenario, text: str, *, speaker: str | None = None, issue: str | None = None) -> Reading:
    lex = lexicon(scenario)
    reading = Reading()
    explicit: dict[tuple[str, str, str], int] = {}  # (kind, issue, option) -> rank: 2 explicit, 1 evaluation
    for raw in _SENTENCE.split(text):
        sentence = _normalise(raw)
        if not sentence:
            continue
        trade = _trade(lex, sentence)
        if trade:
            reading.trades.append(trade)
            continue
        question = sentence.endswith("?")
        for clause, after_but in _clauses(sentence):
            _read_clause(lex, clause, speaker, issue, question, reading, explicit, after_but)
    if issue is not None:
        for bucket in (reading.support, reading.oppose, reading.conditional):
            for other in [i for i in bucket if i != issue]:
                del bucket[other]
    _settle(reading, explicit)
    reading.asks -= reading.offers
    return reading


def _normalise(raw: str) -> str:
    text = raw.lower().strip()
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    text = re.sub(r"[–—]", ",", text)
    text = re.sub(r"\s+", " ", text)
    return text


def _clauses(sentence: str) -> list[tuple[str, bool]]:
    """The clauses of a sentence, each with whether it answers the one before ("..., but ...")."""
    body = sentence.rstrip(".!?")
    pieces: list[tuple[str, bool]] = []
    pos, contrast = 0, False
    for m in _CLAUSE_SPLIT.finditer(body):
        pieces.append((body[pos : m.start()], contrast))
        contrast = bool(re.search(r"\b(?:but|yet)\b", m.group(0)))
        pos = m.end()
    pieces.append((body[pos:], contrast))
    out: list[tuple[str, bool]] = []
    for text, after_but in pieces:
        for n, piece in enumerate(_AND_SPLIT.split(text)):
            if piece.strip(" ,"):
                out.append((piece.strip(" ,"), after_but and n == 0))
    return out


def _is_reported(lex: Lexicon, clause: str, speaker: str | None) -> bool:
    """Whether the clause states someone else's position (or the speaker only acknowledges one)."""
    if _HEARD_RE.search(clause):
        return True
    head = clause[:90]
    for role_id, regex in lex.names.items():
        m = regex.search(head)
        if not m:
            continue
        if speaker is None or role_id == speaker:
            continue  # the speaker naming itself ("The United States supports ...")
        rest = head[m.end() :]
        if re.match(rf"\W*(?:\w+ ){{0,3}}?{_alt(REPORT_VERBS)}\b", rest) or re.match(r"'s\b", rest):
            return True
    others = re.search(
        rf"^\W*(?:\w+ ){{0,2}}?{_alt(OTHERS)}\b\W*(?:\w+ ){{0,3}}?{_alt(REPORT_VERBS)}\b", head
    )
    return bool(others and not _OWN_RE.match(head))


def _subject_is_other(lex: Lexicon, clause: str, speaker: str | None) -> bool:
    """A clause whose subject is another delegation or the listener ("you support 4.1")."""
    if _OWN_RE.match(clause):
        return False
    return bool(re.match(rf"^\W*(?:\w+ ){{0,2}}?{_alt(OTHERS)}\b", clause))


def _read_clause(
    lex: Lexicon,
    clause: str,
    speaker: str | None,
    issue: str | None,
    question: bool,
    reading: Reading,
    ranks: dict[tuple[str, str, str], int],
    after_but: bool,
) -> None:
    reported = _is_reported(lex, clause, speaker)
    # Condition parts: a leading "if ..., " or "with ..., " and a trailing "..., provided ...".
    condition = ""
    main = clause
    lead = _CONDITION_LEAD.match(main)
    if lead:
        condition += lead.group(0)
        main = main[lead.end() :]
    with_lead = _WITH_LEAD.match(main)
    if with_lead and _offers_in(lex, with_lead.group(0)):
        condition += with_lead.group(0)
        main = main[with_lead.end() :]
    tail = _CONDITION_TAIL.search(main)
    if tail and tail.start() > 0:
        condition += tail.group(0)
        main = main[: tail.start()]
    elif tail and tail.start() == 0 and not lead:
        condition += main
        main = ""
    guaranteed = bool(
        re.search(
            r"\bwith (?:\w+ ){0,8}(?:guaranteed|in place|assured|on the table|secured|provided)\b", main
        )
    )
    conditional = bool(condition.strip()) or guaranteed
    if reported:
        return
    own_condition = bool(
        re.match(r"^\W*(?:if|once|provided(?: that)?|as long as)\s+(?:we|our delegation|i)\b", condition)
    )
    # Offers and asks.
    for offer_id, _pos in _offers_in(lex, condition):
        if own_condition:
            reading.offers.add(offer_id)
        else:
            reading.asks.add(offer_id)
    main_offers = _offers_in(lex, main)
    if main_offers:
        other_subject = _subject_is_other(lex, main, speaker)
        for offer_id, pos in main_offers:
            before = main[:pos]
            if question:
                if re.search(r"\b(?:we|us|our)\b", before) and not re.search(r"\byou", before):
                    reading.offers.add(offer_id)
                else:
                    reading.asks.add(offer_id)
            elif other_subject or _NEED_RE.search(before[-60:]) or guaranteed:
                reading.asks.add(offer_id)
            elif _COMMIT_RE.search(before) and not _NEGATION_RE.search(before[-40:]):
                reading.offers.add(offer_id)
    if question or not main.strip():
        return
    if _subject_is_other(lex, main, speaker):
        return
    mentions = _mentions(lex, main, issue)
    if not mentions:
        return
    for mention in mentions:
        polarity, rank = _polarity(main, mention, mentions)
        if polarity is None:
            continue
        if after_but:
            rank += 1
        kind = polarity
        if polarity == "support" and conditional:
            kind = "conditional"
        key = (kind, mention.issue, mention.option)
        ranks[key] = max(ranks.get(key, 0), rank)


def _polarity(main: str, mention: _Mention, mentions: list[_Mention]) -> tuple[str | None, int]:
    """("support"|"oppose"|None, rank) of the clause towards one option it names."""
    before = main[: mention.start]
    # Contrast markers right before the option turn the clause's side round for it.
    contrast = re.search(r"\b(?:rather than|instead of|not|over|and not|than)\s+(?:\w+\s+){0,3}$", before)
    concession = None
    for m in _CONCESSION_RE.finditer(before):
        concession = m
    verb = None
    verb_kind = ""
    for m in _SUPPORT_RE.finditer(before):
        verb, verb_kind = m, "support"
    for m in _OPPOSE_RE.finditer(before):
        if verb is None or m.start() > verb.start():
            verb, verb_kind = m, "oppose"
    if concession and (verb is None or concession.end() >= verb.start()):
        side = "support"
        return (_flip(side) if contrast else side), 3
    if verb is not None:
        window = before[max(0, verb.start() - 40) : verb.start()]
        negated = bool(_NEGATION_RE.search(window)) and not re.search(r"\bnot only\b", window)
        side = verb_kind if not negated else _flip(verb_kind)
        if contrast and contrast.start() > verb.end():
            side = _flip(side)
        return side, 3
    # No explicit side: the clause's evaluation of the option.
    masked = main
    for other in sorted(mentions, key=lambda m: -m.start):
        masked = masked[: other.start] + " " * (other.end - other.start) + masked[other.end :]
    negative = len(_NEGATIVE_RE.findall(masked))
    positive = len(_POSITIVE_RE.findall(masked))
    # A double negative ("no excuse for leaving them out") reads as positive; "only X can" as support.
    if re.search(r"\bno excuse\b|\bonly (?:a |an |the )?\S+", masked) and mention.start < 40:
        positive += 1
    if negative == 0 and positive == 0:
        return None, 0
    side = "oppose" if negative > positive else "support"
    if contrast:
        side = _flip(side)
    return side, 1


def _flip(side: str) -> str:
    return "oppose" if side == "support" else "support"


def _settle(reading: Reading, ranks: dict[tuple[str, str, str], int]) -> None:
    """Per issue, keep the strongest readings; an option both backed and opposed at the same rank is neither."""
    issues = sorted({issue for _, issue, _ in ranks})
    for issue in issues:
        entries = {(k, o): r for (k, i, o), r in ranks.items() if i == issue}
        top = max(entries.values())
        for (kind, option), rank in entries.items():
            if rank < top and rank < 3:
                continue
            opposite = "oppose" if kind in ("support", "conditional") else "support"
            rival = max(
                entries.get((opposite, option), 0),
                entries.get(("conditional", option), 0) if kind == "oppose" else 0,
            )
            if rival > rank or (rival == rank and kind != "oppose"):
                continue
            if rival == rank and kind == "oppose":
                continue
            getattr(reading, kind).setdefault(issue, set()).add(option)


def _trade(lex: Lexicon, sentence: str) -> tuple[str, str] | None:
    you = r"(?:you|your delegation|your government|your side)"
    we = r"(?:we|our delegation|i)"
    modal = r"(?:will|would|shall|can|could|are ready to|are prepared to|promise to|commit to)"
    patterns = (
        rf"\bif {you} (?:will |would |can |could )?{_TRADE_VERB}\b(?P<want>[^,;]+?),?\s+(?:then\s+)?{we}\s+(?:\w+\s+)?{modal}\s+(?:\w+\s+)?{_TRADE_VERB}\b(?P<promise>.+)",
        rf"\b{we}\s+(?:\w+\s+)?{modal}\s+(?:\w+\s+)?{_TRADE_VERB}\b(?P<promise>[^,;]+?),?\s+(?:if|provided|as long as) {you} (?:will |would |can |also )?{_TRADE_VERB}\b(?P<want>.+)",
        rf"\b(?:in return for|in exchange for) your (?:support|vote)s? (?:for|on)\b(?P<want>[^,;]+?),?\s+{we}\s+(?:\w+\s+)?{modal}\s+(?:\w+\s+)?{_TRADE_VERB}\b(?P<promise>.+)",
        rf"\b{we}\s+(?:\w+\s+)?{modal}\s+(?:\w+\s+)?{_TRADE_VERB}\b(?P<promise>[^,;]+?),?\s+in (?:return|exchange) for your (?:support|vote)s? (?:for|on)\b(?P<want>.+)",
        rf"^\W*{_TRADE_VERB}\b(?P<want>[^,;]+?),?\s+and\s+{we}\s+(?:\w+\s+)?{modal}\s+(?:\w+\s+)?{_TRADE_VERB}\b(?P<promise>.+)",
    )
    for pattern in patterns:
        m = re.search(pattern, sentence)
        if not m:
            continue
        want = {x.option for x in _mentions(lex, m["want"], None)}
        promise = {x.option for x in _mentions(lex, m["promise"], None)}
        if len(want) == 1 and len(promise) == 1 and want != promise:
            return next(iter(want)), next(iter(promise))
    return None
